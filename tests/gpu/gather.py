"""gpu-check case: torch.gather with an index out of range along the gathered dimension
(_scatter_gather_elementwise_kernel, or vectorized_gather_kernel in recent PyTorch)."""
import gpucase

torch = gpucase.require_cuda()
source = torch.randn(4, 6, device="cuda")
index = torch.randint(0, 6, (4, 3), device="cuda")
torch.gather(source, 1, index)
torch.cuda.synchronize()
index[2, 1] = 6  # one past the last column
gpucase.run_failing(lambda: torch.gather(source, 1, index), torch.cuda.synchronize)  # FAILING_OP
