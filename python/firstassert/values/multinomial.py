"""multinomial: probabilities that are negative, NaN or inf, and rows with nothing to draw from.

PyTorch's conditions (2.15): Distributions.cpp's multinomial, for one sample or without replacement, asserts on the
device through _assert_async (TensorCompare.cu) that `max < inf && min >= 0` ("probability tensor contains either
`inf`, `nan` or element < 0"; NaN fails both); with replacement, MultinomialKernel.cu asserts `!_isnan(val)`,
`!_isinf(val)`, `!(val < zero)` and `sum > accZero` (sampleMultinomialOnce) or `!(val < zero)` (renormRowsL1) and
`cumdist[size - 1] > 0` (binarySearchForMultinomial). On the CPU: RuntimeError with the same first text, or, drawing
several samples with replacement (cpu/MultinomialKernel.cpp, `val >= 0` then `isfinite(val)`), "invalid multinomial
distribution (encountering probability entry < 0)" (NaN too) and "... entry = infinity or NaN)"; and "invalid
multinomial distribution (sum of probabilities <= 0)" for a row of zeros.
"""

import torch

from . import errors
from .errors import ValuesRuntimeError
from .ops import Check
from .scan import Condition, reduced


def _words(value, replacement, samples):
    if not (replacement and samples > 1):
        return "probability tensor contains either `inf`, `nan` or element < 0"
    if value == float("inf"):
        return "invalid multinomial distribution (encountering probability entry = infinity or NaN)"
    return "invalid multinomial distribution (encountering probability entry < 0)"


def conditions(args):
    probs, replacement, samples = args["self"], args["replacement"], args["num_samples"]
    values = reduced(probs)
    bad = ~torch.isfinite(values) | (values < 0)
    rows = values.reshape(-1, values.size(-1)) if values.dim() > 0 else values.reshape(1, 1)
    sums = rows.sum(-1)
    shape = "probs.shape = %s" % list(probs.shape)

    def elements(where):
        return errors.found(ValuesRuntimeError, _words(where.value, replacement, samples), "multinomial", "input",
                            where, "is negative, NaN or inf", ("probability", "probabilities", "negative, NaN or inf"), bound=shape,
                            dtype=str(probs.dtype))

    def empty_rows(where):
        return errors.found(ValuesRuntimeError, "invalid multinomial distribution (sum of probabilities <= 0)",
                            "multinomial", "input.sum(-1)", where, "is not positive: nothing to draw from",
                            ("row", "rows", "all zeros"), bound=shape, dtype=str(probs.dtype),
                            notes=["rows are along the last dimension"])

    # Rows are judged only where every element is good (checked first): a row holding inf or NaN sums to neither.
    return [Condition(bad, values, elements), Condition(sums <= 0, sums, empty_rows)]


CHECKS = [Check(("multinomial",), "self", conditions, reads=("self",))]
