"""gpu-check case: Tensor.scatter_ with an index out of range (_scatter_gather_elementwise_kernel)."""
import gpucase

torch = gpucase.require_cuda()
out = torch.zeros(4, 6, device="cuda")
values = torch.randn(4, 3, device="cuda")
index = torch.randint(0, 6, (4, 3), device="cuda")
out.scatter_(1, index, values)
torch.cuda.synchronize()
index[0, 2] = 6  # one past the last column
gpucase.run_failing(lambda: out.scatter_(1, index, values), torch.cuda.synchronize)  # FAILING_OP
