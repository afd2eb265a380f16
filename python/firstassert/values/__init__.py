"""Values checks: the value a CUDA op's device assert would have tripped on, named in PyTorch's words.

On the CPU PyTorch names the value ("Target 10 is out of bounds."); on the GPU the same mistake is a device-side
assert from many threads, with no value, that leaves CUDA unusable. Two modes name it:
- check: before each covered op runs on a CUDA tensor, the conditions its kernel asserts are checked (a few
  reductions and one device-to-host copy per op), and a value that breaks one raises firstassert's exception, which is
  also what PyTorch raises on the CPU for it (IndexError or RuntimeError), at the user's line: nothing asserted, CUDA
  keeps working, a notebook needs no restart.
- probe (probe.py): no synchronization. Each covered op copies what its checks read into pinned host memory ahead of
  its kernels; when the shim reports a sticky error, the checks run on the copies of the call whose kernel it names,
  and the report carries what they find as that launch's `values` (publish(), at exit, after a failing cell).

Modes: off (default), check and probe, chosen by FIRSTASSERT_VALUES, `firstassert run --values=MODE`,
firstassert.enable(values=MODE), `%firstassert values MODE` or set_mode(MODE).

Covered (each module cites PyTorch's conditions):
  nll_loss.py        cross_entropy, nll_loss, nll_loss2d: targets in [0, classes), ignore_index skipped
  embedding.py       embedding (ids in [0, num_embeddings)), its max_norm renorm, embedding_bag (ids, offsets)
  indexing.py        index_select, x[idx], x[idx] = v, take, put_, index_fill_/index_copy_/index_add_
  scatter_gather.py  gather, scatter, scatter_add, scatter_reduce: index in [0, self.shape[dim])
  bce.py             binary_cross_entropy: input and target in [0, 1]
  multinomial.py     negative, NaN or inf probabilities, rows of zeros
  one_hot.py         values in [0, num_classes)
  ctc.py             ctc_loss: targets in [0, num_classes) and not blank (lengths: PyTorch checks them itself)

Not covered: ops inside torch.compile graphs (their kernels are compiled, not dispatched; torch.compile compiles as
it would without the checks), ops captured into CUDA graphs and their replays (no dispatch; a check would
synchronize during capture), tensor subclasses (FakeTensor, DTensor...), threads other than the one that turned
checks on (and autograd's, which PyTorch hands its state to), and ops not listed above.

Cost: both modes put every aten op through Python (microseconds each); check mode copies each covered op's checked
tensors to the host and waits for them (one synchronization), probe mode enqueues their copies and waits for
nothing (docs/performance.md has the figures); off costs nothing (nothing is installed).
"""

from .activate import MODES, from_environment, mode, publish, set_mode, values_of_launch
from .errors import ValuesError, ValuesIndexError, ValuesRuntimeError

__all__ = ["MODES", "mode", "set_mode", "from_environment", "publish", "values_of_launch", "ValuesError",
           "ValuesIndexError", "ValuesRuntimeError"]
