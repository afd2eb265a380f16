"""A binary classifier whose predictions are fed to binary_cross_entropy without a sigmoid; a batch holds a
prediction of 1.5. BCE's kernel asserts that its input is in [0, 1] (marked `# the culprit`)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
for step in range(5):
    predictions = torch.rand(64)
    if step == 1:
        predictions[12] = 1.5  # the bad prediction
    targets = (torch.rand(64) > 0.5).float()
    loss = F.binary_cross_entropy(predictions.cuda(), targets.cuda())  # the culprit
print("loss", loss.item())
