"""gpu-check case: nn.Embedding given a token id equal to the vocabulary size; index_select's kernel
(indexSelectSmallIndex/LargeIndex, or vectorized_gather_kernel in recent PyTorch) asserts on the index."""
import gpucase

torch = gpucase.require_cuda()
VOCAB = 100
embedding = torch.nn.Embedding(VOCAB, 16).cuda()
ids = torch.randint(0, VOCAB, (4, 8), device="cuda")
embedding(ids)
torch.cuda.synchronize()
ids[1, 2] = VOCAB  # a tokenizer whose vocabulary is one larger than the model's
gpucase.run_failing(lambda: embedding(ids), torch.cuda.synchronize)  # FAILING_OP
