"""The plainest training loop: a classifier on 10 classes fed by a DataLoader, with no host read between the forward
pass and backward(); the loss is printed every 10 steps, after the optimizer's step. Batch 17 holds the label 10.
The main thread queues the forward pass and the optimizer, autograd's device thread the backward pass, on one stream,
and nothing synchronizes inside the loop. With argv[1] == "pinned" the DataLoader loads in two worker processes and
pins its batches on its own thread, and they are copied with non_blocking=True, as tuned input pipelines do. The line
the report must name is marked `# the culprit`."""
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

pinned = len(sys.argv) > 1 and sys.argv[1] == "pinned"
torch.manual_seed(0)
classes, batch = 10, 32
inputs = torch.randn(25 * batch, 32)
labels = torch.randint(0, classes, (25 * batch,))
labels[17 * batch + 5] = classes  # the bad value: batch 17's target[5] = 10
loader = DataLoader(TensorDataset(inputs, labels), batch_size=batch, pin_memory=pinned, num_workers=2 if pinned else 0)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(loader):
    x, y = x.cuda(non_blocking=pinned), y.cuda(non_blocking=pinned)
    loss = nn.functional.cross_entropy(model(x), y)  # the culprit
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print("step", step, "loss", round(loss.item(), 3), flush=True)
