// The stand-in libnvToolsExt.so.1, NVTX 2's library: torch 2.4.1's libtorch_cuda.so and libtorch_python.so import
// it (torch.cuda.nvtx, autograd.profiler.emit_nvtx); torch 2.8.0 uses NVTX 3, header-only, and does not.
// NVTX is annotation for a tool to record: with none attached, NVIDIA's implementation does nothing and returns what
// the NVTX headers define for that case, and so does this stand-in, which never loads a tool (NVTX_INJECTION64_PATH
// is not read). Nothing is unsupported here: a program annotating its ranges runs as it would with no profiler.
//
// The declarations, types and codes are NVTX 3's (<nvtx3/nvToolsExt.h>, the toolkit's; NVTX_NO_IMPL leaves out its
// inline implementations), whose C API is NVTX 2's.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

extern "C" {

void nvtxMarkA(const char*) {}

// "No tool attached" is range id 0 for start/end ranges, and NVTX_NO_PUSH_POP_TRACKING (-2) from push and pop
// (nvtx3/nvtxDetail/nvtxImplCore.h, the bodies used when no tool has registered its functions).
nvtxRangeId_t nvtxRangeStartA(const char*) { return 0; }

void nvtxRangeEnd(nvtxRangeId_t) {}

int nvtxRangePushA(const char*) { return NVTX_NO_PUSH_POP_TRACKING; }

int nvtxRangePop(void) { return NVTX_NO_PUSH_POP_TRACKING; }

}  // extern "C"
