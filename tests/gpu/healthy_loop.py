"""gpu-check case: a healthy training loop, which must leave no report and print exactly what it prints without the
shim. It also runs the failing cases' operations with valid inputs (embedding, gather, scatter_, BCELoss,
multinomial, two streams, a CUDA graph replay), so a false report on any of their paths shows here."""
import gpucase

torch = gpucase.require_cuda()
F = torch.nn.functional
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
inputs = torch.randn(256, 32, device="cuda")
labels = torch.randint(0, 10, (256,), device="cuda")
for step in range(1, 31):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(inputs), labels)
    loss.backward()
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)

ids = torch.randint(0, 100, (4, 8), device="cuda")
print(f"embedding {torch.nn.Embedding(100, 16).cuda()(ids).sum().item():.3f}")
index = torch.randint(0, 6, (4, 3), device="cuda")
source = torch.randn(4, 6, device="cuda")
print(f"gather {torch.gather(source, 1, index).sum().item():.3f}")
print(f"scatter_ {torch.zeros(4, 6, device='cuda').scatter_(1, index, source[:, :3]).sum().item():.3f}")
print(f"bce {torch.nn.BCELoss()(torch.rand(16, device='cuda'), torch.ones(16, device='cuda')).item():.3f}")
probabilities = torch.tensor([[0.1, 0.2, 0.3, 0.4]], device="cuda")
print(f"multinomial {torch.multinomial(probabilities, 8, replacement=True).tolist()}")

side = torch.cuda.Stream()
with torch.cuda.stream(side):
    side_sum = (source * 2).sum()
torch.cuda.current_stream().wait_stream(side)
print(f"side stream {side_sum.item():.3f}")

static_logits = torch.randn(8, 5, device="cuda")
static_labels = torch.arange(8, device="cuda") % 5
warmup = torch.cuda.Stream()
warmup.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(warmup):
    F.cross_entropy(static_logits, static_labels)
torch.cuda.current_stream().wait_stream(warmup)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    static_loss = F.cross_entropy(static_logits, static_labels)
graph.replay()
print(f"graph replay {static_loss.item():.4f}")
torch.cuda.synchronize()
print("done")
