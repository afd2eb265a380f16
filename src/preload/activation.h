// Brings firstassert up once per process, whichever way it was reached (LD_PRELOAD + CUDA_INJECTION64_PATH,
// CUDA_INJECTION64_PATH alone, or firstassert_enable()), and owns what lives for the rest of the process.
#pragma once

#include <string>

namespace firstassert {

enum class ActivatedBy { injection, enable_call };

// True when launches are being recorded. Safe to call from any thread, any number of times.
bool activate(ActivatedBy by);
// Empty while no report has been written.
std::string report_path();

}  // namespace firstassert
