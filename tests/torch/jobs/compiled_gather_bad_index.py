"""Top-k style picking under torch.compile: scores of 10 candidates gathered with indices a later batch builds with
the index 10; the compiled gather's bounds check fires on the device (the model's line is marked `# the culprit`)."""
import torch

torch.manual_seed(0)
candidates = 10


@torch.compile
def picked_total(scores, picks):
    return torch.gather(scores, 1, picks).sum()  # the culprit


total = 0.0
for step in range(3):
    scores = torch.randn(32, candidates).cuda()
    picks = torch.randint(0, candidates, (32, 3))
    if step == 2:
        picks[7, 1] = candidates  # the bad value: index[7, 1] = 10
    total += picked_total(scores, picks.cuda()).item()
    print("step", step, "total", round(total, 4))
