"""gpu-check case: cross_entropy with a label equal to the class count; nll_loss's kernel asserts
`t >= 0 && t < n_classes`."""
import gpucase

torch = gpucase.require_cuda()
F = torch.nn.functional
CLASSES = 5
logits = torch.randn(8, CLASSES, device="cuda")
labels = torch.arange(8, device="cuda") % CLASSES
F.cross_entropy(logits, labels)  # the same kernels, healthy, first: the culprit must be told from them
torch.cuda.synchronize()
labels[3] = CLASSES  # one past the last class: the classic bug
gpucase.run_failing(lambda: F.cross_entropy(logits, labels), torch.cuda.synchronize)  # FAILING_OP
