// The simulated machine's GPUs: how many there are (SIMCUDA_DEVICES, simcuda.h), what identifies each physical one
// (UUID, PCI bus), and which of them CUDA_VISIBLE_DEVICES leaves visible, renumbered from 0, as the driver applies
// it at cuInit.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace simcuda {

inline constexpr int kMaxDevices = 16;

// SIMCUDA_DEVICES, read once (a bad value: one line on stderr, and 1).
int physical_device_count();
// Deterministic per physical device, so that a device keeps its identity however CUDA_VISIBLE_DEVICES orders it.
CUuuid physical_device_uuid(int physical);
int physical_device_pci_bus(int physical);
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints a GPU's UUID.
std::string uuid_text(const CUuuid& uuid);

// The physical devices a CUDA_VISIBLE_DEVICES value makes visible, in its order (value nullptr: the variable is
// unset, every device). The rules are the CUDA C Programming Guide's, "CUDA Environment Variables".
std::vector<int> visible_devices(const char* value, int physical_count);

// cuInit's: the visible devices from the environment, fixed for the life of the process (later calls keep the first
// answer, as the driver reads the variable once). Returns how many are visible.
int apply_visible_devices();
int visible_device_count();  // 0 before apply_visible_devices
// The physical device behind a visible ordinal, or -1 for an ordinal that names none.
int physical_device(int ordinal);

}  // namespace simcuda
