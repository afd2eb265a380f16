// The error taxonomy firstassert reasons with: which CUDA errors corrupt the context (sticky: the process must
// restart, every later call returns them) and what each is called by the runtime and the driver.
#pragma once

namespace firstassert {

enum class ApiDomain { runtime, driver };

// 700, 702, 710, 714-719, 226, 721 (design.md). Everything else, including 701 and 9, is not sticky.
bool is_sticky_error(int code);

// cudaErrorAssert / CUDA_ERROR_ASSERT; cudaErrorUnrecognized / CUDA_ERROR_UNRECOGNIZED for codes not in the table.
const char* error_name(ApiDomain domain, int code);
// "device-side assert triggered"; nullptr for unknown codes.
const char* error_description(int code);
// What a person calls the first error in a summary: "device-side assert", "illegal memory access", ...
const char* error_headline(int code);

// Codes that report a state, not a failure (cudaErrorNotReady from a query).
bool is_status_not_error(int code);

}  // namespace firstassert
