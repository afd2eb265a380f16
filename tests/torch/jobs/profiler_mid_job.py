"""torch.profiler started in the middle of a training job (Kineto takes CUPTI's activity API while firstassert
holds its callbacks); the profile of the healthy steps is printed, then a later step's bad label asserts in
nll_loss. The profile must list kernels, and the report must still name the culprit (marked `# the culprit`)."""
import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

torch.manual_seed(0)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []


def step(bad=False):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, classes, (64,))
    if bad:
        y[40] = classes  # the bad value: target[40] = 10
    y = y.cuda()
    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
    losses.append(loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


for _ in range(3):
    step()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(2):
        step()
    torch.cuda.synchronize()
kernels = [e.key for e in prof.key_averages() if e.device_type.name == "CUDA"]
print("PROFILED_KERNELS", len(kernels))
for name in kernels[:5]:
    print("PROFILED", name)
step(bad=True)
print("loss", step().item())
