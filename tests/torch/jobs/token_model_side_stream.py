"""A token model (embedding, then a linear head) whose batch at step 4 holds an id equal to the vocabulary size,
while a side stream runs its own matmuls beside it. The embedding's index kernel asserts on the device. The line
the report must name is marked `# the culprit`; each step's loss is logged before backward, so the failing step's
backward never starts (autograd's thread meeting the lost context terminates the process)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, width = 100, 16
embed = nn.Embedding(vocab, width).cuda()
head = nn.Linear(width, vocab).cuda()
opt = torch.optim.SGD(list(embed.parameters()) + list(head.parameters()), lr=0.1)
losses = []
side = torch.cuda.Stream()
side_weights = torch.randn(64, 64).cuda()
for step in range(8):
    with torch.cuda.stream(side):
        for _ in range(50):
            side_weights = side_weights @ side_weights
    ids = torch.randint(0, vocab, (8, 32))
    targets = torch.randint(0, vocab, (8 * 32,)).cuda()
    if step == 4:
        ids[2, 5] = vocab  # the bad value: indices[2, 5] = 100
    ids = ids.cuda()
    hidden = embed(ids)  # the culprit
    loss = nn.functional.cross_entropy(head(hidden).view(-1, vocab), targets)
    losses.append(loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("mean loss", sum(losses) / len(losses))
