"""gpu-check case: torch.profiler started after the shim is recording (issue 18), then nll_loss.py's assert.

CUDA runs and is synchronized first, so the shim (preloaded) has activated and records, through CUPTI in the modes
that use it. Then a profile(activities=[CPU, CUDA]) is started (Kineto subscribes to CUPTI: the shim must hand CUPTI
over and record on through its interposition hooks), runs healthy cross_entropy kernels, and is stopped; the case
prints how many kernel events it held ("gpu-check: profiler kernels: N", counted in its Chrome trace as probe 5
counts them), or why it could not ("gpu-check: profiler failed: ..."), and goes on. Then the assert, as in
nll_loss.py: a label equal to the class count. The judge (gpu_check_judge.py) fails a run whose profile held no
kernel, in every mode, bare included, and checks the report's tool object per mode (gpu_check_table.py,
Case.tool_in).
"""
import gpucase

torch = gpucase.require_cuda()
try:
    from torch.profiler import ProfilerActivity, profile
except ImportError as error:
    gpucase.skip(f"torch.profiler cannot be imported ({error})")
F = torch.nn.functional
CLASSES = 5
logits = torch.randn(8, CLASSES, device="cuda")
labels = torch.arange(8, device="cuda") % CLASSES
F.cross_entropy(logits, labels)  # the same kernels, healthy, first: the culprit must be told from them
torch.cuda.synchronize()  # CUDA has run: the shim activated at cuInit and has recorded these launches
try:
    session = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    session.start()  # Kineto's cuptiSubscribe: the hand-over, under a shim that records through CUPTI
    for _ in range(3):
        F.cross_entropy(logits, labels)
    torch.cuda.synchronize()
    session.stop()
    print(f"{gpucase.PROFILER_KERNELS}{gpucase.kernel_events(session)}", flush=True)
except Exception as error:  # the profiler's failure is the "profiler" check's; the culprit checks still run
    gpucase.say_profiler_failed(error)
labels[3] = CLASSES  # one past the last class: the classic bug
gpucase.run_failing(lambda: F.cross_entropy(logits, labels), torch.cuda.synchronize)  # FAILING_OP
