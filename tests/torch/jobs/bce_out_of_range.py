"""Pixel-wise binary segmentation loss: each step's foreground probabilities for a 32x64 mask (2048 pixels, made on
the host as a DataLoader's workers would, then moved) go to binary_cross_entropy; step 2's batch holds a probability
of 1.5 (a calibration bug) at pixel (19, 18). BCE's kernel asserts that its input is in [0, 1]; the line the report
must name is marked `# the culprit`. Each step's loss is logged with .item()."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
losses = []
for step in range(5):
    probs = torch.rand(32, 64)
    mask = (torch.rand(32, 64) > 0.5).float()
    if step == 2:
        probs[19, 18] = 1.5  # the bad value: input[19, 18] = 1.5
    loss = F.binary_cross_entropy(probs.cuda(), mask.cuda())  # the culprit
    losses.append(loss.item())
print("mean loss", sum(losses) / len(losses))
