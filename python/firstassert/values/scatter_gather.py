"""gather, scatter, scatter_add, scatter_reduce: the index against the size along dim.

PyTorch's conditions (2.15): ScatterGatherKernel.cu's _scatter_gather_elementwise_kernel asserts
`idx_dim >= 0 && idx_dim < index_size` ("scatter gather kernel index out of bounds"; the fill variant for a scalar
src, "index out of bounds"), index_size = self.size(dim) (for gather the source, for scatter the destination); no
negative wrap. On the CPU, ScatterGatherKernel.cpp's TORCH_CHECK: RuntimeError "index 10 is out of bounds for
dimension 1 with size 10".
F.one_hot on CUDA is zeros(...).scatter_(-1, labels.unsqueeze(-1), 1) (Onehot.cpp, "rely on device asserts from
scatter"): one_hot.py names it first, in one_hot's words; this check is what remains where that one is unavailable.
"""

from .bounds import along_dim, dim_words
from .errors import ValuesRuntimeError
from .ops import Check


def _index_along_dim(op):
    """[0, self.shape[dim]): no negative wrap; PyTorch's CPU words: "index 10 is out of bounds for dimension 1 with
    size 10"."""
    return along_dim(op, False, dim_words(), ValuesRuntimeError)


CHECKS = [
    Check(("gather",), "self", _index_along_dim("gather"), reads=("index",)),
    Check(("scatter", "scatter_"), "self", _index_along_dim("scatter"), reads=("index",)),
    Check(("scatter_add", "scatter_add_"), "self", _index_along_dim("scatter_add"), reads=("index",)),
    Check(("scatter_reduce", "scatter_reduce_"), "self", _index_along_dim("scatter_reduce"), reads=("index",)),
]
