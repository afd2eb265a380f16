"""A healthy compiled training step: an MLP classifier's loss and gradients through torch.compile, for a few batches,
printed. Nothing asserts: run under firstassert it prints what it prints bare, and no report is written. With the
argument `eager-cpu` it runs the same steps uncompiled on the CPU (what the compiled kernels must agree with)."""
import sys

import torch
import torch.nn.functional as F

eager_cpu = sys.argv[1:] == ["eager-cpu"]
device = "cpu" if eager_cpu else "cuda"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(12, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5)).to(device)


def loss_of(inputs, labels):
    return F.cross_entropy(model(inputs), labels)


compute_loss = loss_of if eager_cpu else torch.compile(loss_of)
batches = [(torch.randn(64, 12), torch.randint(0, 5, (64,))) for _ in range(3)]
for step, (inputs, labels) in enumerate(batches):
    loss = compute_loss(inputs.to(device), labels.to(device))
    loss.backward()
    gradients = sum(p.grad.cpu().sum().item() for p in model.parameters())
    print("step", step, "loss", round(loss.cpu().item(), 5), "gradients", round(gradients, 5))
    model.zero_grad(set_to_none=True)
