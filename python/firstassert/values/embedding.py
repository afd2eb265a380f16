"""embedding, embedding_bag, and embedding's max_norm renormalization: ids against num_embeddings; offsets.

PyTorch's conditions (2.15):
- embedding: on CUDA it is weight.index_select(0, indices.reshape(-1)) (Embedding.cpp), whose kernels assert
  `srcIndex < srcSelectDimSize` (Indexing.cu indexSelectSmallIndex, unsigned: a negative id fails too) or
  `ind >= 0 && ind < ind_dim_size` (IndexKernelUtils.cu vectorized_gather_kernel): ids in [0, num_embeddings),
  num_embeddings = weight.shape[0]. On the CPU, index_select's TORCH_CHECK_INDEX: IndexError "index out of range in
  self".
- embedding_renorm_ (F.embedding with max_norm): Embedding.cu embedding_renorm_wrap_indices_kernel asserts
  `index >= -num_weights && index < num_weights` before wrapping; the CPU's select() raises IndexError "select():
  index 10 out of range for tensor of size [10, 3] at dimension 0".
- embedding_bag: EmbeddingBag.cu EmbeddingBag_updateOutputKernel_sum_mean / _max assert `!has_invalid_index`
  ("index out of range [0, numRows)": no negative wrap) and `end >= begin` (offsets never decrease). The CPU's
  EmbeddingBag.cpp checks the ids (RuntimeError "Index 1 of input takes value 10 which is not in the valid range
  [0, 10)"), offsets[0] == 0 (which CUDA silently takes as 0) and offsets[-1] <= the number of ids.
A 2-D input of fixed-size bags reaches the op flattened, with offsets made by F.embedding_bag: positions are
positions in the flattened ids.
"""

import torch

from . import errors
from .bounds import in_range
from .errors import ValuesIndexError, ValuesRuntimeError
from .ops import Check
from .scan import Condition, as_long, reduced

IDS = ("id", "ids", "out of range")


def embedding(args):
    weight, indices = args["weight"], args["indices"]
    rows = weight.size(0)
    return [in_range("embedding", "indices", indices, 0, rows, "num_embeddings = weight.shape[0] = %d" % rows,
                     lambda where: "index out of range in self", ValuesIndexError, noun=IDS)]


def renorm(args):
    weight, indices = args["self"], args["indices"]
    rows = weight.size(0)
    return [in_range("embedding_renorm_ (embedding's max_norm)", "indices", indices, -rows, rows,
                     "num_embeddings = weight.shape[0] = %d" % rows,
                     lambda where: "select(): index %d out of range for tensor of size %s at dimension 0" % (
                         where.value, list(weight.shape)), ValuesIndexError, noun=IDS)]


def bag(args):
    weight, indices, offsets = args["weight"], args["indices"], args["offsets"]
    rows, count = weight.size(0), indices.numel()
    found = [in_range("embedding_bag", "input", indices.reshape(-1), 0, rows,
                      "num_embeddings = weight.shape[0] = %d" % rows,
                      lambda where: "Index %d of input takes value %d which is not in the valid range [0, %d)" % (
                          where.index[0], where.value, rows), ValuesRuntimeError, noun=IDS)]
    if offsets.dim() != 1 or offsets.numel() == 0:
        return found  # PyTorch's own shape checks speak for these
    values = as_long(reduced(offsets))
    position = torch.arange(values.numel(), device=values.device)
    previous = torch.cat([values[:1], values[:-1]])
    found.append(_offsets((position == 0) & (values != 0), values, "is not 0",
                          lambda where: "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                                        "start from position 0. However, got %d" % where.value,
                          "CUDA would silently start the first bag at 0"))
    found.append(_offsets(values < previous, values, "is less than the offset before it",
                          lambda where: "offsets[%d] = %d is less than offsets[%d] = %d: offsets must not decrease" % (
                              where.index[0], where.value, where.index[0] - 1, int(values[where.index[0] - 1])),
                          "a bag would end before it begins (EmbeddingBag.cu asserts `end >= begin`)"))
    found.append(_offsets((position == values.numel() - 1) & (values > count), values,
                          "is past the end of input (%d ids)" % count,
                          lambda where: "offsets[-1] can not be greater than input's length %d but got offsets[-1] "
                                        "of %d" % (count, where.value),
                          "the last bags would read past the ids"))
    return found


def _offsets(bad, values, problem, words, note):
    def report(where):
        return errors.found(ValuesRuntimeError, words(where), "embedding_bag", "offsets", where, problem,
                            ("offset", "offsets", "wrong"), dtype=str(values.dtype), notes=[note])

    return Condition(bad, values, report)


CHECKS = [
    Check(("embedding",), "weight", embedding, reads=("indices",)),
    Check(("embedding_renorm_",), "self", renorm, reads=("indices",)),
    Check(("_embedding_bag", "_embedding_bag_forward_only"), "weight", bag, reads=("indices", "offsets")),
]
