"""A healthy job: an MLP trained for a few steps with good labels. It must run to the end, print what it prints
bare, and leave no report."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, 10, (64,)).cuda()
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("trained", 20, "steps on", torch.cuda.get_device_name(0))
