"""What every scripts/gpu-check case program shares: how it ends, so that the harness can tell "the job saw its
device-side assert" from "the case did not provoke one", "it failed otherwise", "it could not run here", a hang and a
crash (those two it sees by itself).

A case program does its healthy set-up, then hands the failing operation to run_failing() from a line marked
`# FAILING_OP`, which is the line the report's Python frames should name. A graph case also marks `# CAPTURED_OP`
the line whose op, captured into the graph, asserts at the replay: the line the report's captured_at should name. The
nvcc-built cases keep the same exit codes (tests/gpu/nvcc_assert.cu).

A case that takes a torch.profiler profile first (profiler_late.py; probe 5's profiler_probe.py too) says how many
kernel events it held in one line, PROFILER_KERNELS and the number, or why it has no number, PROFILER_FAILED and the
error; the judge reads them. A notebook case (notebook_case.py) marks its failing cell's launching line
`# FAILING_OP` and prints each cell it ran in its Jupyter kernel as NOTEBOOK_CELL and a JSON object.
"""
import json
import os
import sys
import tempfile

EXIT_NO_ERROR = 0      # the failing op ran and nothing failed: the case did not provoke its assert
EXIT_ASSERT = 3        # the job saw "device-side assert triggered": how a failing case should end
EXIT_OTHER_ERROR = 4   # the job saw an error, but not the device-side assert
EXIT_SKIP = 5          # something the case needs is not here (Triton, a usable CUDA device); the reason is printed
EXIT_UNCAUGHT = 1      # Python's, when a job lets its error go uncaught (the torch suite's jobs, run as they are)

MARKER = "gpu-check: the failing op is next"
FAILING_OP = "# FAILING_OP"  # marks the case file's line the report should name
CAPTURED_OP = "# CAPTURED_OP"  # a graph case's: marks the line that captured the op asserting at the replay
ASSERT_TEXT = "device-side assert"  # in the text of the error every framework raises for cudaErrorAssert
PROFILER_KERNELS = "gpu-check: profiler kernels: "  # and the number of kernel events the profile held
PROFILER_FAILED = "gpu-check: profiler failed: "    # and the error the profiler raised instead
NOTEBOOK_CELL = "gpu-check: cell: "  # and a JSON object: a cell notebook_case.py ran in its kernel


def marked_line(text, marker=FAILING_OP):
    """The number of text's first line that ends with marker (`# FAILING_OP` unless told), or 0: of a case program
    (the judge) and of a notebook case's cell."""
    return next((number for number, line in enumerate(text.splitlines(), 1) if line.rstrip().endswith(marker)), 0)


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


def kernel_events(session):
    """Kernels a stopped torch.profiler session recorded, counted in its Chrome trace (the one export every version
    has): its events of category "kernel"."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "trace.json")
        session.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    return sum(1 for e in events if isinstance(e, dict) and e.get("cat") == "kernel")


def say_profiler_failed(error):
    print(f"{PROFILER_FAILED}{type(error).__name__}: {error}".splitlines()[0], flush=True)


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
