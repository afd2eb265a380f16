"""gpu-check case: a Triton kernel whose tl.device_assert fires. Triton launches through the driver API
(cuLaunchKernel / cuLaunchKernelEx, fetched with dlopen + dlsym), not through the CUDA runtime."""
import os

# tl.device_assert is compiled in only in debug mode: semantic.device_assert returns nothing unless the compile
# options say debug, which JITFunction.run takes from the kernel's debug=True or TRITON_DEBUG=1 (knobs.runtime.debug).
# Both are set, so that a TRITON_DEBUG=0 in the machine's environment does not compile the assert out.
os.environ.setdefault("TRITON_DEBUG", "1")

import gpucase  # noqa: E402

torch = gpucase.require_cuda()
try:
    import triton
    import triton.language as tl
except ImportError as error:
    gpucase.skip(f"Triton cannot be imported ({error})")

VOCAB = 50


@triton.jit(debug=True)
def gpu_check_ids_kernel(ids_ptr, n, vocab, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ids = tl.load(ids_ptr + offsets, mask=offsets < n, other=0)
    tl.device_assert((ids >= 0) & (ids < vocab), "token id out of range")


ids = torch.arange(16, device="cuda", dtype=torch.int32)
gpu_check_ids_kernel[(1,)](ids, ids.numel(), VOCAB, BLOCK=32)  # compiled and run once, healthy
torch.cuda.synchronize()
ids[7] = VOCAB
gpucase.run_failing(lambda: gpu_check_ids_kernel[(1,)](ids, ids.numel(), VOCAB, BLOCK=32),  # FAILING_OP
                    torch.cuda.synchronize)
