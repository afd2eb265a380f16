"""Probe mode: the values of the very call whose kernel the report names, kept without a synchronization.

Workflow in brief:
1. Before a covered op runs on CUDA tensors, the tensors its checks read (labels, ids, indices, offsets, lengths,
   binary_cross_entropy's and multinomial's probabilities: ops.Check.reads) are copied into a ring of pinned host
   memory with asynchronous copies in the op's stream, ahead of its kernels: the job never waits for them. The
   other tensor arguments are kept as shapes only (no reference to the job's tensors is held).
2. The op runs between two readings of the shim's launch count (firstassert_launch_count): the launches its thread
   made in between are the op's.
3. When a sticky error has been reported (at exit, after a failing notebook cell, or when asked: publish()), each
   launch the report names (the culprit and the candidates) is looked up among the probed calls of its thread. Check
   mode's conditions run on the host over that call's copies, and what they find (PyTorch's CPU words, the argument,
   the first offending element and its value, how many, the bound, the dtype, and each copied operand's min, max,
   NaN and inf counts) goes into the report as that launch's `values`, and on stderr.

Why a copy is good to read after the fault: a stream runs its work in order, so a copy enqueued before the op's
kernels had completed before any of them ran, let alone asserted; pinned host memory stays readable after the CUDA
context is lost. A copy whose place in the ring later calls have since reused is not read: it is said to be lost.

Not probed: ops captured into CUDA graphs and their replays (a replay runs without dispatch: the report says the
launch was not probed), ops inside torch.compile graphs, and calls whose copies would exceed a quarter of the ring.
"""

import collections
import json
import math
import threading

import torch

from .. import library
from .._output import say
from ..notebook import is_cuda_error
from . import scan

RING_BYTES = 64 << 20  # pinned host memory, allocated at the first probed call; a call copies at most a quarter
CALLS_KEPT = 4096
_ALIGN = 64  # every copy starts on a boundary any dtype can be viewed at


class Kept:
    """A tensor argument copied into the ring: where (a position in the ring's running count of bytes), its shape
    and dtype. view_shape: the tensor was a reshape of a contiguous tensor with the same elements (nll_loss's (N, 1,
    L) view of the user's target), which was copied instead, so that the copy read back has it as its base."""

    __slots__ = ("start", "nbytes", "shape", "dtype", "view_shape")

    def __init__(self, start, nbytes, shape, dtype, view_shape):
        self.start, self.nbytes, self.shape, self.dtype, self.view_shape = start, nbytes, shape, dtype, view_shape


class Shape:
    """A tensor argument whose values the checks do not read: read back as a meta tensor of its shape and dtype."""

    __slots__ = ("shape", "dtype")

    def __init__(self, tensor):
        self.shape, self.dtype = tuple(tensor.shape), tensor.dtype


class Call:
    """A probed call: the op, how its checks are made from its arguments, the arguments as kept, the thread, and
    the launches it made, [first, end) in the shim's numbering. lost: why its values were not kept, or None."""

    __slots__ = ("op", "conditions", "arguments", "thread", "first", "end", "lost")

    def __init__(self, op, conditions, arguments, lost=None):
        self.op, self.conditions, self.arguments, self.lost = op, conditions, arguments, lost
        self.thread = threading.get_native_id()
        self.first = self.end = 0


class Ring:
    """Pinned host memory that the copies go into, one after the other, wrapping around."""

    def __init__(self, size):
        self.size = size
        self.buffer = None
        self.written = 0  # bytes handed out so far; a copy at start is intact while written - start <= size
        self.lock = threading.Lock()

    def allocate(self):
        with self.lock:
            if self.buffer is None:
                self.buffer = torch.empty(self.size, dtype=torch.uint8, pin_memory=True)

    def place(self, nbytes):
        """(ring position, offset in the buffer) for nbytes, once allocate() has run."""
        span = max(_ALIGN, -(-nbytes // _ALIGN) * _ALIGN)
        with self.lock:
            offset = self.written % self.size
            if offset + span > self.size:
                self.written += self.size - offset
                offset = 0
            start = self.written
            self.written += span
        return start, offset

    def keep(self, tensor):
        """Enqueues the copy of a CUDA tensor in its device's current stream (the one the op runs in); a Kept."""
        view_shape, source = None, tensor.detach()
        base = source._base
        if (base is not None and source.is_contiguous() and base.is_contiguous() and base.numel() == source.numel()
                and base.dtype == source.dtype):
            view_shape, source = tuple(source.shape), base
        nbytes = source.numel() * source.element_size()
        start, offset = self.place(nbytes)
        destination = self.buffer[offset:offset + nbytes].view(source.dtype).view(source.shape)
        destination.copy_(source, non_blocking=True)
        return Kept(start, nbytes, tuple(source.shape), source.dtype, view_shape)

    def read(self, kept):
        """The copy as a host tensor of its own, or None when later copies have reused its place (or the ring is
        gone)."""
        with self.lock:
            if self.buffer is None or self.written - kept.start > self.size:
                return None
            offset = kept.start % self.size
            copy = self.buffer[offset:offset + kept.nbytes].view(kept.dtype).view(kept.shape).clone()
        return copy.view(kept.view_shape) if kept.view_shape is not None else copy


def _bytes(value):
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_bytes(item) for item in value)
    return 0


class Probes:
    """The probed calls of this process and their copies."""

    def __init__(self, ring_bytes=RING_BYTES, calls_kept=CALLS_KEPT):
        self.ring = Ring(ring_bytes)
        self.calls = collections.deque(maxlen=calls_kept)
        self._count = None
        self._said = set()
        self.published = {}  # seq -> the values handed to the shim

    # --- on the job's path -------------------------------------------------------------------------------------

    def launch_count(self):
        """The shim's launch count now, or None when no launch is being recorded (then nothing can be linked)."""
        if self._count is None:
            self._count = library.launch_counter()
            if self._count is None:
                self.once("no shim", "values probe: libfirstassert.so is not loaded in this process (run the job "
                                     "under `firstassert run`, or call firstassert.enable()): calls are not probed")
                return None
        count = self._count()
        if count == library.NOT_RECORDING:
            self.once("not recording", "values probe: launches are not being recorded, so a call's values cannot "
                                       "be linked to its kernels: calls are not probed until they are")
            return None
        return count

    def start(self, op, conditions, named, reads):
        """Keeps what the checks of this call read; a Call to complete with run(), or None (not probed)."""
        if self.ring is None or self.launch_count() is None:
            return None
        if self.ring.buffer is None:
            try:
                self.ring.allocate()
            except Exception as error:
                if is_cuda_error(error):
                    raise  # not ours: the op would meet it too
                self.once("ring", "values probe: cannot allocate %d MiB of pinned host memory (%s: %s): calls are "
                                  "not probed" % (self.ring.size >> 20, type(error).__name__, error))
                self.ring = None
                return None
        size = sum(_bytes(named.get(name)) for name in reads)
        if size > self.ring.size // 4:
            return Call(op, conditions, None, lost="its checked tensors hold %.1f MiB, more than the probe copies "
                                                    "for one call (%d MiB)" % (size / 2 ** 20, self.ring.size // 4 >> 20))
        arguments = {}
        for name, value in named.items():
            if name in reads:
                arguments[name] = self._keep(value)
            elif isinstance(value, torch.Tensor):
                arguments[name] = Shape(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
                arguments[name] = [Shape(item) if isinstance(item, torch.Tensor) else item for item in value]
            else:
                arguments[name] = value
        return Call(op, conditions, arguments)

    def _keep(self, value):
        if isinstance(value, torch.Tensor):
            return self.ring.keep(value) if value.device.type != "cpu" else value.detach().clone()
        if isinstance(value, (list, tuple)):
            return [self._keep(item) for item in value]
        return value

    def run(self, call, function, *args, **kwargs):
        """function(*args, **kwargs), its launches numbered into call (when there is one)."""
        if call is None:
            return function(*args, **kwargs)
        count = self.launch_count()
        call.first = count if count is not None else 0
        try:
            return function(*args, **kwargs)
        finally:
            count = self.launch_count()
            call.end = count if count is not None else call.first
            self.calls.append(call)

    def once(self, key, message):
        if key not in self._said:
            self._said.add(key)
            say(message)

    # --- after the error ---------------------------------------------------------------------------------------

    def find(self, seq, thread):
        """The probed call of `thread` that made launch `seq`, or None; the outermost when calls nest (one_hot's
        own probe around its scatter_'s)."""
        for call in reversed(self.calls):
            if call.thread == thread and call.first <= seq < call.end:
                return call
        return None

    def values_of(self, call):
        """What the checks find in the call's copies: a JSON-ready dict."""
        found = {"mode": "probe", "op": call.op, "probed": True}
        if call.lost:
            found.update(found=False, text="%s was probed but its values were not kept: %s" % (call.op, call.lost))
            return found
        arguments, operands, lost = {}, [], []
        for name, value in call.arguments.items():
            arguments[name] = self._read(name, value, operands, lost)
        if lost:
            found.update(found=False, text="%s was probed, but later calls have reused the memory its copies of %s "
                                           "were in" % (call.op, ", ".join(lost)))
            return found
        found["operands"] = operands
        failing = scan.first_failing(call.conditions(arguments))
        if failing is None:
            found.update(found=False, text="none of the values %s was given breaks a condition firstassert checks for "
                                           "it (%s)" % (call.op, "; ".join(_operand_text(o) for o in operands)))
            return found
        error = failing.report(scan.locate(failing))
        found.update(found=True, argument=error.argument, index=list(error.index), value=_json_number(error.value),
                     count=error.count, total=error.total, bound=error.bound, dtype=error.dtype, problem=error.problem,
                     torch_words=error.torch_words, detail=error.detail,
                     text="%s %s; copied before %s's kernels ran (probe)" % (
                         _sentence(error.torch_words), error.detail, call.op))
        return found

    def _read(self, name, value, operands, lost):
        if isinstance(value, Kept):
            copy = self.ring.read(value) if self.ring is not None else None
            if copy is None:
                lost.append(name)
                return torch.empty(value.view_shape or value.shape, dtype=value.dtype, device="meta")
            operands.append(_operand(name, copy))
            return copy
        if isinstance(value, Shape):
            return torch.empty(value.shape, dtype=value.dtype, device="meta")
        if isinstance(value, list):
            return [self._read("%s[%d]" % (name, i), item, operands, lost) for i, item in enumerate(value)]
        if isinstance(value, torch.Tensor):
            operands.append(_operand(name, value))
        return value

    def publish(self):
        """Gives the shim the values of the launches its report names. Returns (report, {seq: values}) as the
        report stood when read, or (None, {}) when there is none. Safe to call again."""
        path = library.refresh_report()
        if not path:
            return None, {}
        from ..reports import read_report
        report, _ = read_report(path)
        if report is None:
            return None, {}
        culprit = report.get("culprit") or {}
        launches = [culprit] + list(report.get("candidates") or [])
        answers = {}
        for launch in launches:
            seq, thread = launch.get("seq"), launch.get("thread")
            if not isinstance(seq, int) or seq in answers:
                continue
            call = None if launch.get("graph") else self.find(seq, thread)
            if call is not None:
                answers[seq] = self.values_of(call)
            elif launch is culprit:
                answers[seq] = {"mode": "probe", "probed": False, "found": False, "text": _not_probed(launch)}
        changed = False
        for seq, values in answers.items():
            if self.published.get(seq) != values and library.set_launch_values(seq, json.dumps(values)):
                self.published[seq] = values
                changed = True
        if changed:
            library.refresh_report()
        return report, answers

    def lines(self, report, answers):
        """What to say on stderr of the values found: the culprit's, when the report claims it (exact or likely);
        else those of each launch that could have failed."""
        culprit = report.get("culprit") or {}
        confidence = (report.get("decision") or {}).get("confidence")
        if culprit and confidence in ("exact", "likely"):
            found = answers.get(culprit.get("seq"))
            return ["values of the culprit's call: " + found["text"]] if found else []
        from ..show import kernel_label
        return ["values of %s's call, one of the launches that could have failed: %s" % (
                    kernel_label(launch), answers[launch["seq"]]["text"])
                for launch in report.get("candidates") or [] if (answers.get(launch.get("seq")) or {}).get("found")]


def _not_probed(launch):
    if launch.get("graph"):
        return ("launched by a CUDA graph replay, which runs without dispatch: no values were probed (ops captured "
                "into a graph are not probed)")
    return ("no probed call made this launch: its kernel was not launched by an op probe mode covers (cross_entropy, "
            "embedding, indexing, gather/scatter, binary_cross_entropy, multinomial, one_hot, ctc_loss), or not on "
            "a thread it probes")


def _sentence(words):
    return words if words.endswith((".", "!", "?")) else words + "."


def _json_number(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON has no NaN or inf
    return value


def _operand(name, tensor):
    """min, max (of the finite values), NaN and inf counts of a copied operand."""
    facts = {"argument": name, "shape": list(tensor.shape), "dtype": str(tensor.dtype)}
    if tensor.numel() == 0 or tensor.dtype == torch.bool:
        return facts
    values = tensor
    if tensor.is_floating_point():
        facts["nan"] = int(torch.isnan(tensor).sum())
        facts["inf"] = int(torch.isinf(tensor).sum())
        values = tensor[torch.isfinite(tensor)]
        if values.numel() == 0:
            return facts
    facts["min"], facts["max"] = values.min().item(), values.max().item()
    return facts


def _operand_text(operand):
    text = "%s: %s %s" % (operand["argument"], operand["dtype"].replace("torch.", ""), operand["shape"])
    if "min" in operand:
        text += ", min %s, max %s" % (operand["min"], operand["max"])
    if operand.get("nan") or operand.get("inf"):
        text += ", %d NaN, %d inf" % (operand.get("nan", 0), operand.get("inf", 0))
    return text
