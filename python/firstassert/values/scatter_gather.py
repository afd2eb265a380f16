"""gather, scatter, scatter_add, scatter_reduce: the index against the size along dim.

PyTorch's conditions (2.15): ScatterGatherKernel.cu's _scatter_gather_elementwise_kernel asserts
`idx_dim >= 0 && idx_dim < index_size` ("scatter gather kernel index out of bounds"; the fill variant for a scalar
src, "index out of bounds"), index_size = self.size(dim) (for gather the source, for scatter the destination); no
negative wrap. On the CPU, ScatterGatherKernel.cpp's TORCH_CHECK: RuntimeError "index 10 is out of bounds for
dimension 1 with size 10".
F.one_hot on CUDA is zeros(...).scatter_(-1, labels.unsqueeze(-1), 1) (Onehot.cpp, "rely on device asserts from
scatter"): one_hot.py names it first, in one_hot's words; this check is what remains where that one is unavailable.
"""

from .bounds import dim_size, in_range, wrapped
from .errors import ValuesRuntimeError
from .ops import Check


def along_dim(op):
    def conditions(args):
        self, dim, index = args["self"], args["dim"], args["index"]
        if not isinstance(dim, int):
            return []  # a named dimension: left to PyTorch
        dim = wrapped(dim, self)
        size = dim_size(self, dim)
        return [in_range(op, "index", index, 0, size, "self.shape[%d] = %d" % (dim, size),
                         lambda where: "index %d is out of bounds for dimension %d with size %d" % (
                             where.value, dim, size), ValuesRuntimeError)]

    return conditions


CHECKS = [
    Check(("gather",), "self", along_dim("gather"), reads=("index",)),
    Check(("scatter", "scatter_"), "self", along_dim("scatter"), reads=("index",)),
    Check(("scatter_add", "scatter_add_"), "self", along_dim("scatter_add"), reads=("index",)),
    Check(("scatter_reduce", "scatter_reduce_"), "self", along_dim("scatter_reduce"), reads=("index",)),
]
