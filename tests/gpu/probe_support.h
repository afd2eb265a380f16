// What the probe programs of scripts/gpu-check share: the first look for a device, and the driver's entry points
// fetched by name for the CUDA version of these headers, as the shim fetches them (it runs beside whatever libcuda
// the program loaded).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

// Exit status of a probe that found no device: gpu-check says why the probe has no answer.
constexpr int kNoDevice = 5;

// Whether a device is there to probe; prints why not, as the probes' "probe:" line.
inline bool have_device() {
  int devices = 0;
  cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("probe: no usable CUDA device (%s)\n", cudaGetErrorName(e));
    return false;
  }
  return true;
}

template <typename Fn>
bool fetch(const char* name, Fn& fn) {
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &entry, CUDART_VERSION, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || entry == nullptr) {
    std::printf("probe: the driver has no %s for CUDA %d\n", name, CUDART_VERSION);
    return false;
  }
  fn = reinterpret_cast<Fn>(entry);
  return true;
}
