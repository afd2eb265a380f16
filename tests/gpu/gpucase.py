"""What every scripts/gpu-check case program shares: how it ends, so that the harness can tell "the job saw its
device-side assert" from "the case did not provoke one", "it failed otherwise", "it could not run here", a hang and a
crash (those two it sees by itself).

A case program does its healthy set-up, then hands the failing operation to run_failing() from a line marked
`# FAILING_OP`, which is the line the report's Python frames should name. The nvcc-built cases keep the same exit
codes (tests/gpu/nvcc_assert.cu).
"""
import sys

EXIT_NO_ERROR = 0      # the failing op ran and nothing failed: the case did not provoke its assert
EXIT_ASSERT = 3        # the job saw "device-side assert triggered": how a failing case should end
EXIT_OTHER_ERROR = 4   # the job saw an error, but not the device-side assert
EXIT_SKIP = 5          # something the case needs is not here (Triton, a usable CUDA device); the reason is printed

MARKER = "gpu-check: the failing op is next"
FAILING_OP = "# FAILING_OP"  # marks the case file's line the report should name
ASSERT_TEXT = "device-side assert"  # in the text of the error every framework raises for cudaErrorAssert


def skip(reason):
    print(f"gpu-check: skip: {reason}", flush=True)
    sys.exit(EXIT_SKIP)


def require_cuda():
    """The torch module, once it is known to see a CUDA device; otherwise the case is skipped."""
    try:
        import torch
    except ImportError as error:
        skip(f"torch cannot be imported ({error})")
    if not torch.cuda.is_available():
        skip("torch sees no CUDA device")
    return torch


def run_failing(op, synchronize):
    """Runs op, then synchronize, and exits with the code that says what the job saw. sys.exit, not os._exit: the
    process ends normally, so the shim's exit handler rewrites the report with the secondary errors."""
    print(MARKER, flush=True)
    try:
        op()
        synchronize()
    except Exception as error:  # torch raises RuntimeError (torch.AcceleratorError since 2.8, a subclass of it)
        text = str(error).strip()
        first_line = text.splitlines()[0] if text else ""
        print(f"gpu-check: caught {type(error).__name__}: {first_line}", flush=True)
        sys.exit(EXIT_ASSERT if ASSERT_TEXT in text else EXIT_OTHER_ERROR)
    print("gpu-check: no error", flush=True)
    sys.exit(EXIT_NO_ERROR)
