"""A center loss compiled with dynamic shapes: each batch brings its own class centers (their number varies), and
`centers[labels]` gathers each sample's center. Inductor's bounds check compares with the symbolic size (ks0); a
label equal to the number of centers fires it on the device (the model's line is marked `# the culprit`)."""
import torch

torch.manual_seed(0)


@torch.compile(dynamic=True)
def center_loss(features, centers, labels):
    picked = centers[labels]  # the culprit
    return ((features - picked) ** 2).sum(dim=1).mean()


total = 0.0
for step, n_centers in enumerate([10, 12, 9, 11]):
    features = torch.randn(32, 8).cuda()
    centers = torch.randn(n_centers, 8).cuda()
    labels = torch.randint(0, n_centers, (32,))
    if step == 3:
        labels[17] = n_centers  # the bad value: label 11 with 11 centers
    total += center_loss(features, centers, labels.cuda()).item()
    print("step", step, "loss so far", round(total, 4))
