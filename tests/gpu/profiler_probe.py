"""gpu-check probe 5: the nll_loss case while torch.profiler runs (the profiler uses CUPTI too).

usage: profiler_probe.py early|late
  early  the profiler starts before the process first touches CUDA (it may take CUPTI before the shim does)
  late   CUDA is in use before the profiler starts (the shim activated first)

A first profiler session around healthy work says whether the profiler still records kernels ("gpu-check: profiler
kernels: N"); a second one is running when the assert fires, and is stopped afterwards ("gpu-check: profiler stop
after the assert: ..."). Ends as every case does (gpucase.py). The late order with the profiler stopped before the
assert is also a case of the table, judged (profiler_late.py); this probe still tells the early order, and what a
profile running when the assert fires does.
"""
import sys

import gpucase

try:
    from torch.profiler import ProfilerActivity, profile
except ImportError as error:
    gpucase.skip(f"torch.profiler cannot be imported ({error})")

ACTIVITIES = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
CLASSES = 5


when = sys.argv[1] if len(sys.argv) > 1 else "late"
if when not in ("early", "late"):
    sys.exit(f"profiler_probe.py: early or late, not {when!r}")
first = profile(activities=ACTIVITIES)
if when == "early":
    # Before gpucase.require_cuda(): torch.cuda.is_available() initializes the driver (cuInit), which is when the
    # shim activates and subscribes to CUPTI; started after it, the profiler would never be first. Started here, its
    # own start is what initializes CUDA.
    first.start()
torch = gpucase.require_cuda()
F = torch.nn.functional
logits = torch.randn(8, CLASSES, device="cuda")
labels = torch.arange(8, device="cuda") % CLASSES
if when == "late":
    torch.cuda.synchronize()
    first.start()
F.cross_entropy(logits, labels)
torch.cuda.synchronize()
first.stop()
print(f"{gpucase.PROFILER_KERNELS}{gpucase.kernel_events(first)}", flush=True)

second = profile(activities=ACTIVITIES)
second.start()
labels[3] = CLASSES


def stop_second():
    try:
        second.stop()
        print("gpu-check: profiler stop after the assert: ok", flush=True)
    except Exception as error:  # what the profiler does with a dead context is part of the answer
        print(f"gpu-check: profiler stop after the assert: {type(error).__name__}: {error}".splitlines()[0], flush=True)


try:
    gpucase.run_failing(lambda: F.cross_entropy(logits, labels), torch.cuda.synchronize)  # FAILING_OP
finally:
    stop_second()
