"""An MLP classifier on 10 classes trained for a few steps; step 3's batch holds the label 10. cross_entropy's
nll_loss kernel asserts on the device; the traceback points at a later call. The line the report must name is
marked `# the culprit`."""
import torch
import torch.nn as nn

torch.manual_seed(0)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(6):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, classes, (64,))
    if step == 3:
        y[17] = classes  # the bad label
    y = y.cuda()
    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
    opt.zero_grad()
    loss.backward()
    opt.step()
print("final loss", loss.item())
