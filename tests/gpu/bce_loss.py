"""gpu-check case: BCELoss on an input outside [0, 1] (a logit passed where a probability belongs); the kernel of
binary_cross_entropy_out_cuda asserts `input_val >= zero && input_val <= one`."""
import gpucase

torch = gpucase.require_cuda()
loss = torch.nn.BCELoss()
probabilities = torch.rand(16, device="cuda")
targets = torch.randint(0, 2, (16,), device="cuda").float()
loss(probabilities, targets)
torch.cuda.synchronize()
probabilities[5] = 1.5
gpucase.run_failing(lambda: loss(probabilities, targets), torch.cuda.synchronize)  # FAILING_OP
