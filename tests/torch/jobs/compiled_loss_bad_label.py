"""A compiled training step of a small classifier on 10 classes: model and loss under one torch.compile. A batch
labelled with class 10 makes the compiled loss read past the logits' last column, and Inductor's bounds check fires
on the device (the model's line is marked `# the culprit`)."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)
classes = 10
model = torch.nn.Sequential(torch.nn.Linear(20, 32), torch.nn.Tanh(), torch.nn.Linear(32, classes)).cuda()


@torch.compile
def loss_of(inputs, labels):
    return F.cross_entropy(model(inputs), labels)  # the culprit


with torch.no_grad():
    for step in range(3):
        inputs = torch.randn(16, 20).cuda()
        labels = torch.randint(0, classes, (16,))
        if step == 2:
            labels[9] = classes  # the bad value: label 10 of 10 classes
        print("step", step, "loss", round(loss_of(inputs, labels.cuda()).item(), 5))
