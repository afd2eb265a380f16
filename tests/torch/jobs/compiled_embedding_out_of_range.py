"""A compiled bag-of-tokens classifier: torch.compile fuses the embedding lookup and the pooling into one Triton
kernel, whose bounds check fires on the device when a batch holds a token id equal to the vocabulary size (the
model's line is marked `# the culprit`)."""
import torch

torch.manual_seed(0)
vocab, dim, classes = 64, 16, 4


class BagOfTokens(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, dim)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, tokens):
        pooled = self.embed(tokens).mean(dim=1)  # the culprit
        return self.head(pooled)


model = BagOfTokens().cuda()
classify = torch.compile(model)
with torch.no_grad():
    for step in range(3):
        tokens = torch.randint(0, vocab, (8, 4))
        if step == 2:
            tokens[5, 1] = vocab  # the bad value: token 64 of a 64-word vocabulary
        logits = classify(tokens.cuda())
        print("step", step, "predicted", logits.argmax(dim=1).tolist())
