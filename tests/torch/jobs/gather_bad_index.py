"""Top-k style selection with torch.gather: a batch of scores on 10 candidates, gathered with indices that a later
batch builds with the index 10. The gather kernel asserts on the device (marked `# the culprit`)."""
import torch

torch.manual_seed(0)
candidates = 10
total = torch.zeros(()).cuda()
for step in range(5):
    scores = torch.randn(32, candidates).cuda()
    picks = torch.randint(0, candidates, (32, 3))
    if step == 2:
        picks[7, 1] = candidates  # the bad value: index[7, 1] = 10
    picked = torch.gather(scores, 1, picks.cuda())  # the culprit
    total += picked.sum()
print("total", total.item())
