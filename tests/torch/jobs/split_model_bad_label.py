"""A classifier split over two GPUs, as `device_map` or a pipeline places it: the body on cuda:0, the head and the
loss on cuda:1, trained for a few steps while logging each step's loss; step 3's batch holds the label 10 for 10
classes. cross_entropy's nll_loss kernel asserts on cuda:1, whose context is lost; cuda:0's is not. The line the
report must name is marked `# the culprit`."""
import torch
import torch.nn as nn

torch.manual_seed(0)
classes = 10
body = nn.Sequential(nn.Linear(32, 64), nn.ReLU()).to("cuda:0")
head = nn.Linear(64, classes).to("cuda:1")
opt = torch.optim.SGD(list(body.parameters()) + list(head.parameters()), lr=0.1)
losses = []
for step in range(6):
    x = torch.randn(64, 32).to("cuda:0")
    y = torch.randint(0, classes, (64,))
    if step == 3:
        y[17] = classes  # the bad value: target[17] = 10
    y = y.to("cuda:1")
    logits = head(body(x).to("cuda:1"))
    loss = nn.functional.cross_entropy(logits, y)  # the culprit
    losses.append(loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
print("mean loss", sum(losses) / len(losses))
