"""index_select, advanced indexing (x[idx], x[idx] = v), take/put, index_fill/index_copy/index_add: indices against
the size they index, with negative indices wrapped where the op wraps them.

PyTorch's conditions (2.15):
- index_select: Indexing.cu indexSelectSmallIndex asserts `srcIndex < srcSelectDimSize` (an unsigned compare: no
  negative wrap) and gather's kernels `ind >= 0 && ind < ind_dim_size`: [0, self.shape[dim]). CPU: IndexError
  "index out of range in self".
- x[idx] (aten.index.Tensor), x[idx] = t (index_put_) and x[idx] = scalar (which PyTorch turns into index_fill_):
  IndexKernel.cu asserts `-sizes[i] <= index && index < sizes[i]` (index_elementwise_kernel) and
  `idx >= -self_dim_size && idx < self_dim_size` (index_fill): [-size, size). CPU: IndexError "index 10 is out of
  bounds for dimension 0 with size 10". Boolean masks are turned into indices on the host, their shape checked there.
- take / put: IndexKernel.cu asserts `idx < numel && idx >= -numel` ("cuda_take_put_kernel() index out of bounds").
  CPU: IndexError "out of range: tried to access index 30 on a tensor of 30 elements.".
- index_copy / index_add: Indexing.cu indexFuncSmallIndex / indexFuncLargeIndex assert `dstIndex < dstAddDimSize`
  (unsigned: no negative wrap): [0, self.shape[dim]). CPU: IndexError "index_copy_(): index 10 is out of bounds for
  dimension 0 with size 10", RuntimeError "index 10 is out of bounds for dimension 0 with size 10" (index_add).
"""

import torch

from .bounds import along_dim, dim_size, dim_words, in_range
from .errors import ValuesIndexError, ValuesRuntimeError
from .ops import Check


def advanced(op):
    """x[indices] and x[indices] = values: each index tensor against the dimension it indexes (None: a full slice,
    a boolean mask: as many dimensions as it has)."""

    def conditions(args):
        self, found, dim = args["self"], [], 0
        for position, index in enumerate(args["indices"]):
            if index is not None and index.dtype not in (torch.bool, torch.uint8):
                if dim >= max(self.dim(), 1):
                    break  # too many indices: PyTorch says so itself
                size = dim_size(self, dim)
                found.append(in_range(op, "indices[%d]" % position, index, -size, size,
                                      "self.shape[%d] = %d" % (dim, size), dim_words()(dim, size), ValuesIndexError))
            dim += index.dim() if index is not None and index.dtype in (torch.bool, torch.uint8) else 1
        return found

    return conditions


def take(op):
    def conditions(args):
        self, index = args["self"], args["index"]
        count = self.numel()
        return [in_range(op, "index", index, -count, count, "self.numel() = %d" % count,
                         lambda where: "out of range: tried to access index %d on a tensor of %d elements." % (
                             where.value, count), ValuesIndexError)]

    return conditions


CHECKS = [
    Check(("index_select",), "self",
          along_dim("index_select", False, lambda dim, size: lambda where: "index out of range in self",
                     ValuesIndexError), reads=("index",)),
    Check(("index",), "self", advanced("index (x[indices])"), reads=("indices",)),
    Check(("index_put_", "index_put", "_index_put_impl_"), "self", advanced("index_put_ (x[indices] = values)"),
          reads=("indices",)),
    Check(("index_fill_", "index_fill"), "self",
          along_dim("index_fill_ (x[index] = scalar)", True, dim_words(), ValuesIndexError), reads=("index",)),
    Check(("index_copy_", "index_copy"), "self",
          along_dim("index_copy_", False, dim_words("index_copy_(): "), ValuesIndexError), reads=("index",)),
    Check(("index_add_", "index_add"), "self", along_dim("index_add_", False, dim_words(), ValuesRuntimeError),
          reads=("index",)),
    Check(("take",), "self", take("take"), reads=("index",)),
    Check(("put_", "put"), "self", take("put_"), reads=("index",)),
]
