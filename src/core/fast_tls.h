// The shim's hot thread-locals use the initial-exec TLS model: each access is one load relative to %fs instead of a
// __tls_get_addr call (about 200 instructions a launch, measured with callgrind). A library holding such variables
// can still be dlopened (firstassert_enable(), CUDA_INJECTION64_PATH) because glibc keeps spare static TLS for
// late-loaded libraries, and the recorder's thread-locals take about 220 bytes of it.
#pragma once

#define FIRSTASSERT_FAST_TLS __attribute__((tls_model("initial-exec")))
