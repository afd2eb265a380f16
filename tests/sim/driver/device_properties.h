// The simulated GPUs' properties: H100-class devices (SXM5, 80 GB), one table answering cuDeviceGetAttribute,
// cuDeviceTotalMem and cuDeviceGetName, from which the runtime builds its cudaDeviceProp as NVIDIA's runtime does.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>

namespace simcuda {

// The attribute's value on a physical device (device_table.h), or nullopt for one the simulator does not model. The
// devices are alike but for where they sit: each its own PCI bus.
std::optional<int> device_attribute(CUdevice_attribute attribute, int physical);

inline constexpr const char* kDeviceName = "NVIDIA H100 80GB HBM3 (simcuda)";
// Device memory is host memory: this is the capacity the device reports, not memory set aside.
inline constexpr size_t kTotalDeviceMemory = size_t{80} << 30;
// The stream priority range (cuCtxGetStreamPriorityRange): lower numbers are greater priorities.
inline constexpr int kLeastStreamPriority = 0;
inline constexpr int kGreatestStreamPriority = -5;

}  // namespace simcuda
