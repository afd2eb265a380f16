"""gpu-check case: the nll_loss assert inside a CUDA graph, at replay. The graph was captured with valid labels and
replayed once; then the captured labels tensor gets a bad value and the replay fails. The culprit is the graph
launch (no single kernel is launched by the host)."""
import gpucase

torch = gpucase.require_cuda()
F = torch.nn.functional
CLASSES = 5
logits = torch.randn(8, CLASSES, device="cuda")
labels = torch.arange(8, device="cuda") % CLASSES

warmup = torch.cuda.Stream()  # capture needs the kernels warmed up on a side stream first
warmup.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warmup):
    for _ in range(2):
        F.cross_entropy(logits, labels)
torch.cuda.current_stream().wait_stream(warmup)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    loss = F.cross_entropy(logits, labels)
graph.replay()
torch.cuda.synchronize()
labels[3] = CLASSES  # the captured kernels read this tensor at the next replay
gpucase.run_failing(lambda: graph.replay(), torch.cuda.synchronize)  # FAILING_OP
