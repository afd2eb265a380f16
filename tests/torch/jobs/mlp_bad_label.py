"""An MLP classifier on 10 classes trained for a few steps, logging each step's loss; step 3's batch holds the label
10. cross_entropy's nll_loss kernel asserts on the device; the traceback points at the logging line. The line the
report must name is marked `# the culprit`. Batches are made on the host and moved, as a DataLoader's are."""
import torch
import torch.nn as nn

torch.manual_seed(0)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(6):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, classes, (64,))
    if step == 3:
        y[17] = classes  # the bad value: target[17] = 10
    y = y.cuda()
    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
    losses.append(loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
print("mean loss", sum(losses) / len(losses))
