"""The reductions behind every check, kept to what a healthy op can afford: each checked tensor is copied to the host
once (one device-to-host synchronization), and each condition is one `any` there. Only when one fails is more asked
(where its first offending element is, how many there are), on the way to raising.

On the host, not the device: the checked tensors are indices, labels and probabilities, small next to the op's
data, and one code path runs the same on every device (a GPU's reductions would save the copies of large ones, at
the price of a path that only a GPU could test).
"""

import torch


class Condition:
    """A condition an op's arguments must meet. bad: a bool tensor, True where it fails; values: the tensor of the
    same shape whose offending element the message names; report(where) -> the exception to raise."""

    __slots__ = ("bad", "values", "report")

    def __init__(self, bad, values, report):
        self.bad, self.values, self.report = bad, values, report


class Where:
    """The first offending element (its index in the checked tensor and its value) and how many there are."""

    __slots__ = ("index", "value", "count", "total")

    def __init__(self, index, value, count, total):
        self.index, self.value, self.count, self.total = index, value, count, total


def reduced(tensor):
    """The tensor the checks reduce: its host copy."""
    tensor = tensor.detach()
    return tensor.cpu() if tensor.device.type != "cpu" else tensor


def as_long(tensor):
    """Index values as int64, so that comparisons with any bound (ignore_index = -100 against uint8 targets) are
    exact."""
    return tensor if tensor.dtype == torch.int64 else tensor.long()


def first_failing(conditions):
    """The first condition with a True element, or None: every `any` reduced where its tensor is, then read back in
    one copy per device (one in all for an op whose tensors share a device)."""
    if not conditions:
        return None
    flags = [condition.bad.any() for condition in conditions]
    devices = {flag.device for flag in flags}
    if len(devices) == 1:
        failing = torch.stack(flags).tolist()
    else:
        failing = [bool(flag) for flag in flags]
    for condition, fails in zip(conditions, failing):
        if fails:
            return condition
    return None


def locate(condition):
    """Where the condition's first offending element is (in row-major order), its value, and how many fail."""
    bad = condition.bad.reshape(-1)
    count = int(bad.sum())
    position = int(bad.to(torch.uint8).argmax())  # argmax gives the first of equal maxima
    value = condition.values.reshape(-1)[position].item()
    index = []
    for size in reversed(tuple(condition.values.shape)):
        index.append(position % size)
        position //= size
    return Where(tuple(reversed(index)), value, count, bad.numel())


def check(conditions):
    """Raises the exception of the first failing condition; nothing when all hold."""
    failing = first_failing(conditions)
    if failing is not None:
        raise failing.report(locate(failing))
