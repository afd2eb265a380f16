"""A compiled embedding model in mode="reduce-overhead": after warm-up Inductor records its kernels into a CUDA graph
(CUDA graph trees) and replays it each step. A batch with a token id equal to the vocabulary size makes the replayed
embedding kernel's bounds check fire on the device (the model's line is marked `# the culprit`)."""
import torch

torch.manual_seed(0)
vocab, dim = 50, 8


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.out = torch.nn.Linear(dim, 3)

    def forward(self, tokens):
        return self.out(torch.relu(self.embed(tokens)))  # the culprit


model = Tagger().cuda()
tag = torch.compile(model, mode="reduce-overhead")
with torch.no_grad():
    for step in range(5):
        tokens = torch.randint(0, vocab, (6, 5))
        if step == 4:
            tokens[2, 3] = vocab  # the bad value: token 50 of a 50-word vocabulary
        print("step", step, "scores", round(tag(tokens.cuda()).sum().item(), 4))
