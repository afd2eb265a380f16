"""gpu-check case: two streams busy at once, the assert on the second. The first stream runs a long spin kernel, so
when the assert fires its work has not completed either: breadcrumbs leave two open launches and the device's
assertion line has to pick the culprit (confidence "likely"; with FIRSTASSERT_SYNC=all each launch is checked alone)."""
import gpucase

torch = gpucase.require_cuda()
F = torch.nn.functional
CLASSES = 5
busy_stream = torch.cuda.Stream()
failing_stream = torch.cuda.Stream()
logits = torch.randn(8, CLASSES, device="cuda")
labels = torch.arange(8, device="cuda") % CLASSES
labels[6] = CLASSES
torch.cuda.synchronize()


def keep_busy():
    with torch.cuda.stream(busy_stream):
        if hasattr(torch.cuda, "_sleep"):
            torch.cuda._sleep(500_000_000)  # a spin kernel of about a quarter of a second
        else:
            square = torch.randn(2048, 2048, device="cuda")
            for _ in range(20):
                square = square @ square


def failing_op():
    keep_busy()
    with torch.cuda.stream(failing_stream):
        F.cross_entropy(logits, labels)  # FAILING_OP


gpucase.run_failing(failing_op, torch.cuda.synchronize)
