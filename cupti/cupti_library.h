// Finds and opens the CUPTI that belongs to the CUDA the process actually uses, and resolves the few entry points
// firstassert calls. Nothing is linked: CUPTI is optional and versioned with the toolkit in use.
#pragma once

#include <cupti.h>

#include <string>

namespace firstassert::cupti {

struct CuptiLibrary {
  void* handle = nullptr;
  std::string path;  // what was opened
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiSubscribe_v2) subscribe_v2 = nullptr;  // CUDA >= 12.9 (tells who holds the slot)
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;  // null: whole domains are enabled
  decltype(&cuptiGetResultString) result_string = nullptr;
  uint32_t api_version = 0;  // cuptiGetVersion: CUPTI_API_VERSION of the library (26 for CUDA 12.8); 0 unknown

  explicit operator bool() const { return handle != nullptr; }
  std::string describe(CUptiResult result) const;  // "CUPTI_ERROR_UNKNOWN (999)"
};

// Search order: explicit_path (FIRSTASSERT_CUPTI), a CUPTI already loaded, beside the loaded libcudart (and the
// pip wheels' sibling directories), beside the loaded libcuda, then libcupti.so.13 and libcupti.so.12 by soname.
// On failure the result is empty and why says what was tried.
CuptiLibrary open_cupti(const std::string& explicit_path, std::string& why);

}  // namespace firstassert::cupti
