"""The condition most checks are made of: index values within [low, high), as a kernel's bounds assert has it."""

from . import errors
from .scan import Condition, as_long, reduced


def dim_size(tensor, dim):
    """tensor.size(dim) with dim wrapped as PyTorch wraps it; a 0-dim tensor counts as one element along dim 0 or
    -1 (maybe_wrap_dim's scalar case)."""
    if tensor.dim() == 0:
        return 1
    return tensor.size(dim)


def wrapped(dim, tensor):
    """dim >= 0, as PyTorch's maybe_wrap_dim makes it."""
    return dim + max(tensor.dim(), 1) if dim < 0 else dim


def in_range(op, argument, index, low, high, bound, words, error_class, noun=("index", "indices", "out of range"),
             skip=None, notes=()):
    """The condition low <= index < high, elements equal to skip excepted (nll_loss's ignore_index).

    words(where): PyTorch's CPU message for the offending element (a scan.Where); bound: where high comes from, as
    the user knows it ('classes = input.shape[1] = 10')."""
    values = as_long(reduced(index))
    bad = (values < low) | (values >= high)
    if skip is not None:
        bad &= values != skip

    def report(where):
        return errors.found(error_class, words(where), op, argument, where,
                            "is outside [%d, %d)" % (low, high), noun, bound=bound, dtype=str(index.dtype),
                            notes=notes)

    return Condition(bad, values, report)


def dim_words(prefix=""):
    """words(dim, size) for PyTorch's CPU message of an index along a dimension: "index 10 is out of bounds for
    dimension 1 with size 10", after prefix."""
    return lambda dim, size: lambda where: "%sindex %d is out of bounds for dimension %d with size %d" % (
        prefix, where.value, dim, size)


def along_dim(op, low_is_negative, words, error_class):
    """The check of args['index'] along args['dim'] of args['self']: [-size, size) when the op wraps negative
    indices, else [0, size); words(dim, size) gives PyTorch's CPU words for the offending element."""

    def conditions(args):
        self, dim, index = args["self"], args["dim"], args["index"]
        if not isinstance(dim, int):
            return []  # a named dimension: left to PyTorch
        dim = wrapped(dim, self)
        size = dim_size(self, dim)
        return [in_range(op, "index", index, -size if low_is_negative else 0, size,
                         "self.shape[%d] = %d" % (dim, size), words(dim, size), error_class)]

    return conditions
