"""one_hot: values against num_classes.

PyTorch's conditions (2.15, Onehot.cpp): on the CPU, one_hot checks the values itself (RuntimeError "Class values
must be non-negative." and "Class values must be smaller than num_classes."). On CUDA it does not ("rely on device
asserts from scatter to avoid sync here"): with num_classes given it is zeros(...).scatter_(-1,
self.unsqueeze(-1), 1), whose kernel asserts `idx_dim >= 0 && idx_dim < index_size`; with num_classes = -1 it takes
max() + 1 on the host, so only a negative value can reach the assert. The dtype (int64 only) is checked on the host
on CUDA too.

one_hot is a composite op: at the aten level only its scatter_ is seen (scatter_gather.py would name it as a
scatter). So this check is made where F.one_hot itself is called, through a TorchFunctionMode (intercept.py).
"""

import torch

from . import errors
from .errors import ValuesRuntimeError
from .scan import Condition, as_long, reduced


def conditions(tensor, num_classes=-1):
    values = as_long(reduced(tensor))
    dtype = str(tensor.dtype)

    def negative(where):
        return errors.found(ValuesRuntimeError, "Class values must be non-negative.", "one_hot", "tensor", where,
                            "is negative", ("value", "values", "negative"), dtype=dtype)

    def too_big(where):
        return errors.found(ValuesRuntimeError, "Class values must be smaller than num_classes.", "one_hot",
                            "tensor", where, "is outside [0, %d)" % num_classes, ("value", "values", "too big"),
                            bound="num_classes = %d" % num_classes, dtype=dtype)

    found = [Condition(values < 0, values, negative)]
    if num_classes >= 0:  # -1: inferred from max() on the host, so no value is too big
        found.append(Condition(values >= num_classes, values, too_big))
    return found


def arguments(args, kwargs):
    """(tensor, num_classes) of a one_hot call however it was spelled, or None when it is not one to check."""
    tensor = args[0] if args else kwargs.get("input", kwargs.get("tensor"))
    num_classes = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
    if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.int64 or tensor.numel() == 0:
        return None  # PyTorch's own host checks speak for these
    if not isinstance(num_classes, int):
        return None
    return tensor, num_classes
