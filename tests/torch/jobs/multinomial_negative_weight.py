"""Negative sampling for a word-embedding model: each step draws 16 negatives per context row from unigram weights
(counts ** 0.75, made on the host) with torch.multinomial, with replacement. Step 2's weights hold -0.5 at (3, 17),
left by a bad smoothing step. With replacement and more than one sample, torch renormalizes the rows on the device
(renormRowsL1), which asserts that no weight is negative; the host checks nothing on this path. The line the report
must name is marked `# the culprit`. Each step's first draw is logged with .item()."""
import torch

torch.manual_seed(0)
rows, vocab = 8, 50
for step in range(5):
    weights = torch.randint(1, 100, (rows, vocab)).float() ** 0.75
    if step == 2:
        weights[3, 17] = -0.5  # the bad value: input[3, 17] = -0.5
    negatives = torch.multinomial(weights.cuda(), 16, replacement=True)  # the culprit
    print("step", step, "first negative", negatives[0, 0].item())
