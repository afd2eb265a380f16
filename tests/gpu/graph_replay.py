"""gpu-check case: the nll_loss assert inside a CUDA graph, at replay. torch.cuda.graph captures five ops, kernels
before and after nll_loss's, all reading static tensors; the graph is replayed healthy a few times, then the captured
labels tensor gets a bad value and the next replay asserts. The host launched one graph, not the kernel: the report
must name the graph's nll_loss node (its number, which nodes completed) and the line that captured it."""
import gpucase

torch = gpucase.require_cuda()
F = torch.nn.functional
CLASSES = 5
logits = torch.randn(8, CLASSES, device="cuda")  # static: every replay reads these same tensors
labels = torch.arange(8, device="cuda") % CLASSES


def step():
    scaled = logits * 0.5
    log_probs = torch.log_softmax(scaled, dim=1)
    loss = F.nll_loss(log_probs, labels)  # CAPTURED_OP
    return loss.exp() + log_probs.sum()  # kernels after it: the replay never runs them once it has asserted


warmup = torch.cuda.Stream()  # capture needs the kernels warmed up on a side stream first
warmup.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warmup):
    for _ in range(2):
        step()
torch.cuda.current_stream().wait_stream(warmup)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    out = step()
for _ in range(3):  # healthy replays: each sets every node's breadcrumb, so the failing one must start from reset ones
    graph.replay()
    torch.cuda.synchronize()
labels[3] = CLASSES  # the captured kernels read this tensor at the next replay
gpucase.run_failing(graph.replay, torch.cuda.synchronize)  # FAILING_OP
