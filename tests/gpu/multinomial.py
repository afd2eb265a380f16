"""gpu-check case: torch.multinomial on probabilities holding NaN. With replacement and more than one sample it takes
the kernel path (renormRows, cumsum, sampleMultinomialWithReplacement, whose binary search asserts
`cumdist[size - 1] > 0`); one sample or no replacement is checked on the host or by _assert_async instead."""
import gpucase

torch = gpucase.require_cuda()
probabilities = torch.tensor([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25]], device="cuda")
torch.multinomial(probabilities, 4, replacement=True)
torch.cuda.synchronize()
probabilities[1, 2] = float("nan")
gpucase.run_failing(lambda: torch.multinomial(probabilities, 4, replacement=True),  # FAILING_OP
                    torch.cuda.synchronize)
