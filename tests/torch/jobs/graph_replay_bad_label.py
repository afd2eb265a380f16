"""A classifier step captured in a CUDA graph (torch.cuda.graph) and replayed; the labels are a static tensor that
a later batch fills with a label equal to the class count. The assert fires inside a replay: the report must name
the nll_loss node, at the line where it was captured (marked `# the culprit`)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
static_x = torch.randn(64, 32).cuda()
static_y = torch.randint(0, classes, (64,)).cuda()

# Warm up on a side stream, as PyTorch's documentation asks before capturing.
warmup = torch.cuda.Stream()
warmup.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warmup):
    for _ in range(3):
        nn.functional.cross_entropy(model(static_x), static_y)
torch.cuda.current_stream().wait_stream(warmup)

graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_loss = nn.functional.cross_entropy(model(static_x), static_y)  # the culprit

for step in range(6):
    static_x.copy_(torch.randn(64, 32).cuda())
    labels = torch.randint(0, classes, (64,))
    if step == 3:
        labels[9] = classes  # the bad label
    static_y.copy_(labels.cuda())
    graph.replay()
torch.cuda.synchronize()
print("loss", static_loss.item())
