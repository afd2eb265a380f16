"""binary_cross_entropy: input and target in [0, 1].

PyTorch's conditions (2.15): Loss.cu's binary_cross_entropy kernel asserts `input_val >= zero && input_val <= one`
(line 89) and `target_val >= zero && target_val <= one` (line 90), so NaN fails too; on the CPU, Loss.cpp's
TORCH_CHECKs: RuntimeError "all elements of input should be between 0 and 1" (and "... of target ...").
binary_cross_entropy_with_logits takes any real input and has no such assert.
"""

from . import errors
from .errors import ValuesRuntimeError
from .ops import Check
from .scan import Condition, reduced


def _unit_interval(name, tensor):
    values = reduced(tensor)
    bad = ~((values >= 0) & (values <= 1))  # written so that NaN fails, as in the kernel

    def report(where):
        return errors.found(ValuesRuntimeError, "all elements of %s should be between 0 and 1" % name,
                            "binary_cross_entropy", name, where, "is outside [0, 1]",
                            ("element", "elements", "outside [0, 1] (or NaN)"), dtype=str(tensor.dtype),
                            notes=["an input that is not a probability usually wants a sigmoid, or "
                                   "binary_cross_entropy_with_logits"] if name == "input" else [])

    return Condition(bad, values, report)


def conditions(args):
    return [_unit_interval("input", args["self"]), _unit_interval("target", args["target"])]


CHECKS = [Check(("binary_cross_entropy",), "self", conditions, reads=("self", "target"))]
