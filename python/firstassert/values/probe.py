"""Probe mode: the values of the very call whose kernel the report names, kept without a synchronization.

Workflow in brief:
1. Before a covered op runs on CUDA tensors, the tensors its checks read (labels, ids, indices, offsets, lengths,
   binary_cross_entropy's and multinomial's probabilities: ops.Check.reads) are copied into a ring of pinned host
   memory with asynchronous copies in the op's stream, ahead of its kernels: the job never waits for them (once
   per device, at its first probed call, the stamps' numbers are copied there, which waits). The other tensor
   arguments are kept as shapes only (no reference to the job's tensors is held).
2. The op runs between two readings of the shim's launch count (firstassert_launch_count): the launches its thread
   made in between are the op's.
3. When a sticky error has been reported (at exit, after a failing notebook cell, or when asked: publish()), each
   launch the report names (the culprit and the candidates) is looked up among the probed calls of its thread. Check
   mode's conditions run on the host over that call's copies, and what they find (PyTorch's CPU words, the argument,
   the first offending element and its value, how many, the bound, the dtype, and each copied operand's min, max,
   NaN and inf counts) goes into the report as that launch's `values`, and on stderr.

Why a copy is good to read after the fault: a stream runs its work in order. After a call's copies, in the same
stream and before the op's kernels, comes a stamp (Stamps): a number copied into a pinned slot the host cleared.
The values are read only where the stamp is there, that is where the copies were made; where it is not, the stream
never reached the call, and the report says so (its kernels had not run either). Pinned host memory stays readable
after the CUDA context is lost. A place in the ring is reused only once the copies made into it before are done,
and a copy whose place later calls have reused is not read: it is said to be lost.

Not probed: ops captured into CUDA graphs and their replays (a replay runs without dispatch: the report says the
launch was not probed), ops inside torch.compile graphs, and calls whose copies would exceed a quarter of the ring.
"""

import collections
import ctypes
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
    """A tensor argument whose values the checks do not read: read back as a meta tensor of its shape and dtype,
    a view of one of its base's shape when it was a view of a tensor with as many elements (the checks may read a
    view's base: nll_loss finds the user's shape in it)."""

    __slots__ = ("shape", "dtype", "base_shape")

    def __init__(self, tensor):
        self.shape, self.dtype = tuple(tensor.shape), tensor.dtype
        base = tensor._base
        self.base_shape = tuple(base.shape) if base is not None and base.numel() == tensor.numel() else None

    def stand_in(self):
        plain = torch.empty(self.shape, dtype=self.dtype, device="meta")
        if self.base_shape is None:
            return plain
        try:
            return torch.empty(self.base_shape, dtype=self.dtype, device="meta").view(self.shape)
        except RuntimeError:  # a view no contiguous base gives (a transpose): the shape alone
            return plain


class Call:
    """A probed call: the op, how its checks are made from its arguments, the arguments as kept, the thread, and
    the launches it made, [first, end) in the shim's numbering; its stamp (where and what the stream writes once
    its copies are done) and its place in the ring [start, stop). lost: why its values were not kept, or None."""

    __slots__ = ("op", "conditions", "arguments", "thread", "first", "end", "lost", "stamp", "start", "stop")

    def __init__(self, op, conditions, arguments=None, lost=None):
        self.op, self.conditions, self.arguments, self.lost = op, conditions, arguments, lost
        self.thread = threading.get_native_id()
        self.first = self.end = 0
        self.stamp = None  # (slot, value)
        self.start = self.stop = 0


class Stamps:
    """What tells that a call's copies were made: after them, in the same stream, a copy of one number from the
    device into a pinned slot of the call's own, which the host cleared first. Streams run in order, so the number
    is there only once the copies before it are. The numbers come from a table on each device (copied there once)."""

    NUMBERS = 1 << 16  # distinct numbers: a late copy from an earlier call into the same slot holds another

    def __init__(self, slots):
        self.slots = slots
        self.pinned = torch.empty(slots, dtype=torch.int64, pin_memory=True)
        self.host = (ctypes.c_int64 * slots).from_address(self.pinned.data_ptr())  # read and cleared without torch
        self.tables = {}  # device index -> int64 tensor of 0 .. NUMBERS - 1 on that device
        self.issued = 0

    def arm(self):
        """(slot, value) for the next call, its slot cleared."""
        number = self.issued
        self.issued += 1
        slot, value = number % self.slots, number % self.NUMBERS
        self.host[slot] = -1
        return slot, value

    def write(self, stamp, device):
        """Enqueues the stamp's copy in `device`'s current stream, after the copies enqueued there before it."""
        table = self.tables.get(device.index)
        if table is None:
            table = self.tables[device.index] = torch.arange(self.NUMBERS, dtype=torch.int64).to(device)
        slot, value = stamp
        self.pinned[slot:slot + 1].copy_(table[value:value + 1], non_blocking=True)

    def done(self, stamp):
        return stamp is not None and self.host[stamp[0]] == stamp[1]

    def done_call(self, call):
        return self.done(call.stamp)


class RingBusy(Exception):
    """The place a call's copies would go still waits for an earlier call's copies (the GPU is that far behind)."""


class Ring:
    """Pinned host memory that the copies go into, one call's after the other, wrapping around. A place is reused
    only once the copies made into it before are done (done(call)), so that no late copy lands on newer ones."""

    def __init__(self, size, done):
        self.size = size
        self.done = done
        self.buffer = None
        self.written = 0  # bytes handed out so far; a copy at start is intact while written - start <= size
        self.placed = collections.deque()  # the calls whose places a later one may overlap, oldest first
        self.lock = threading.Lock()

    def allocate(self):
        with self.lock:
            if self.buffer is None:
                self.buffer = torch.empty(self.size, dtype=torch.uint8, pin_memory=True)

    @staticmethod
    def span(nbytes):
        return max(_ALIGN, -(-nbytes // _ALIGN) * _ALIGN)

    def place(self, call, nbytes):
        """Gives the call [start, stop) of the ring for nbytes; RingBusy when an earlier call's copies there are
        not done."""
        span = self.span(nbytes)
        with self.lock:
            start = self.written
            if start % self.size + span > self.size:
                start += self.size - start % self.size  # to the next lap: a call's place never wraps
            stop = start + span
            while self.placed and self.placed[0].stop + self.size <= start:
                self.placed.popleft()  # no later place reaches it
            for earlier in self.placed:
                if earlier.start + self.size >= stop:
                    break
                if not self.done(earlier):
                    raise RingBusy()
            self.written = stop
            call.start, call.stop = start, stop
            self.placed.append(call)

    def view(self, position, nbytes, dtype, shape):
        offset = position % self.size
        return self.buffer[offset:offset + nbytes].view(dtype).view(shape)

    def read(self, kept):
        """The copy as a host tensor of its own, or None when later copies have reused its place."""
        with self.lock:
            if self.buffer is None or self.written - kept.start > self.size:
                return None
            copy = self.view(kept.start, kept.nbytes, kept.dtype, kept.shape).clone()
        return copy.view(kept.view_shape) if kept.view_shape is not None else copy


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)


def _source(tensor):
    """What to copy for a tensor: the tensor, or the contiguous tensor with the same elements it is a reshape of
    (nll_loss's (N, 1, L) view of the user's target: read back with it as its base, the check names the place in
    the user's tensor), and the view's shape then."""
    base = tensor._base  # before detach(), which gives a tensor without one
    source = tensor.detach()
    if (base is not None and source.is_contiguous() and base.is_contiguous() and base.numel() == source.numel()
            and base.dtype == source.dtype):
        return base.detach(), tuple(source.shape)
    return source, None


class Probes:
    """The probed calls of this process and their copies."""

    def __init__(self, ring_bytes=RING_BYTES, calls_kept=CALLS_KEPT):
        self.ring_bytes, self.calls_kept = ring_bytes, calls_kept
        self.ring = self.stamps = None  # allocated at the first probed call: pinned memory initializes CUDA
        self.unavailable = False
        self.calls = collections.deque(maxlen=calls_kept)
        self._count = None
        self._library = None  # library._loaded when no shim was found: looked for again only once it changes
        self._said = set()
        self.published = {}  # seq -> the values handed to the shim

    # --- on the job's path -------------------------------------------------------------------------------------

    def launch_count(self):
        """The shim's launch count now, or None when no launch is being recorded (then nothing can be linked)."""
        if self._count is None:
            if self._library is not None and self._library is library._loaded:
                return None
            self._count = library.launch_counter()
            if self._count is None:
                self._library = library._loaded
                self.once("no shim", "values probe: libfirstassert.so is not loaded in this process (run the job "
                                     "under `firstassert run`, or call firstassert.enable()): calls are not probed")
                return None
        count = self._count()
        if count == library.NOT_RECORDING:
            self.once("not recording", "values probe: launches are not being recorded, so a call's values cannot "
                                       "be linked to its kernels: calls are not probed until they are")
            return None
        return count

    def _allocate(self):
        """The ring and the stamps, at the first probed call; False (after one line) when pinned memory fails."""
        if self.ring is not None:
            return True
        if self.unavailable:
            return False
        try:
            stamps = Stamps(self.calls_kept)
            ring = Ring(self.ring_bytes, stamps.done_call)
            ring.allocate()
        except Exception as error:
            if is_cuda_error(error):
                raise  # not ours: the op would meet it too
            self.once("ring", "values probe: cannot allocate %d MiB of pinned host memory (%s: %s): calls are "
                              "not probed" % (self.ring_bytes >> 20, type(error).__name__, error))
            self.unavailable = True
            return False
        self.stamps, self.ring = stamps, ring
        return True

    def start(self, op, conditions, named, reads):
        """Keeps what the checks of this call read; a Call to complete with run(), or None (not probed)."""
        if self.launch_count() is None or not self._allocate():
            return None
        copied = [t for name in reads for t in _tensors(named.get(name)) if t.device.type != "cpu"]
        devices = {t.device for t in copied}
        if len(devices) != 1:
            return None  # nothing on a GPU to copy (the op is checked on its device argument alone), or several
        call = Call(op, conditions)
        if not self._reserve(call, copied):
            return call
        try:
            call.arguments = self._arguments(named, reads, call.start)
        finally:
            # Stamped whatever happened: its place in the ring is free again once the copies enqueued are done.
            call.stamp = self.stamps.arm()
            self.stamps.write(call.stamp, devices.pop())
        return call

    def _reserve(self, call, copied):
        """The call's place in the ring for the copies of its tensors; False with call.lost saying why not."""
        # Each copy starts on its own boundary (_keep), so a list of index tensors takes a span for each.
        size = sum(self.ring.span(t.numel() * t.element_size()) for t in copied)
        if size > self.ring.size // 4:
            call.lost = "its checked tensors hold %.2f MiB, more than the probe copies for one call (%.2f MiB)" % (
                size / 2 ** 20, self.ring.size / 4 / 2 ** 20)
            return False
        try:
            self.ring.place(call, size)
        except RingBusy:
            call.lost = ("the copies of earlier calls had not been made yet (the GPU ran that far behind), so the "
                         "probe's memory had no room for this call's")
            return False
        return True

    def _arguments(self, named, reads, position):
        """The call's arguments as its checks will see them: the tensors they read copied into the ring from
        position on, other tensors as their shapes only (no reference to the job's tensors is kept)."""
        arguments = {}
        for name, value in named.items():
            if name in reads:
                arguments[name], position = self._keep(value, position)
            elif isinstance(value, torch.Tensor):
                arguments[name] = Shape(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
                arguments[name] = [Shape(item) if isinstance(item, torch.Tensor) else item for item in value]
            else:
                arguments[name] = value
        return arguments

    def _keep(self, value, position):
        """(what is kept of value, the next position in the ring): CUDA tensors' copies are enqueued in their
        device's current stream, the one the op runs in."""
        if isinstance(value, torch.Tensor):
            if value.device.type == "cpu":
                return value.detach().clone(), position
            source, view_shape = _source(value)
            nbytes = source.numel() * source.element_size()
            self.ring.view(position, nbytes, source.dtype, source.shape).copy_(source, non_blocking=True)
            return Kept(position, nbytes, tuple(source.shape), source.dtype, view_shape), position + \
                self.ring.span(nbytes)
        if isinstance(value, (list, tuple)):
            kept = []
            for item in value:
                item, position = self._keep(item, position)
                kept.append(item)
            return kept, position
        return value, position

    def run(self, call, function, *args, **kwargs):
        """function(*args, **kwargs), its launches numbered into call (when there is one)."""
        first = self.launch_count() if call is not None else None
        if first is None:
            return function(*args, **kwargs)
        call.first = first
        try:
            return function(*args, **kwargs)
        finally:
            end = self.launch_count()
            call.end = end if end is not None else first  # no reading: the call claims no launch
            self.calls.append(call)

    def once(self, key, message):
        if key not in self._said:
            self._said.add(key)
            say(message)

    # --- after the error ---------------------------------------------------------------------------------------

    def find(self, seq, thread):
        """The probed call of `thread` that made launch `seq`, or None; the outermost when calls nest (one_hot's
        own probe around its scatter_'s)."""
        for call in reversed(tuple(self.calls)):  # a copy: other threads append meanwhile
            if call.thread == thread and call.first <= seq < call.end:
                return call
        return None

    def values_of(self, call):
        """What the checks find in the call's copies: a JSON-ready dict."""
        found = {"mode": "probe", "op": call.op, "probed": True}
        if call.lost:
            found.update(found=False, text="%s was probed but its values were not kept: %s" % (call.op, call.lost))
            return found
        if not self.stamps.done(call.stamp):
            # The stamp follows the copies and precedes the op's kernels in their stream: the stream never got
            # there, so no kernel of this call ran either.
            found.update(found=False, text="%s was probed, but its copies had not been made when the values were "
                                           "read: the stream had not reached this call, so its kernels had not run"
                                           % call.op)
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
            return value.stand_in()
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
                try:
                    answers[seq] = self.values_of(call)
                except Exception as error:  # one launch's trouble must not cost the others theirs
                    answers[seq] = {"mode": "probe", "op": call.op, "probed": True, "found": False,
                                    "text": "the checks of %s's copies failed (%s: %s)" % (
                                        call.op, type(error).__name__, error)}
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
            return ["values of the culprit's call (%s): %s" % (_kernel_name(culprit), found["text"])] if found else []
        return ["values of %s's call, one of the launches that could have failed: %s" % (
                    _kernel_name(launch), answers[launch["seq"]]["text"])
                for launch in report.get("candidates") or [] if (answers.get(launch.get("seq")) or {}).get("found")]


def _kernel_name(launch):
    """The kernel as the shim's summary names it: the report's short name of the launch."""
    return launch.get("short_name") or launch.get("kernel") or launch.get("mangled") or "(CUDA graph)"


def _not_probed(launch):
    if launch.get("graph"):
        return ("launched by a CUDA graph replay, which runs without dispatch: no values were probed (ops captured "
                "into a graph are not probed)")
    return ("no probed call made this launch: its kernel was not launched by an op probe mode covers (cross_entropy, "
            "embedding, indexing, gather/scatter, binary_cross_entropy, multinomial, one_hot, ctc_loss) on a thread "
            "it probes, or the probe was skipped (launches not recorded yet, no pinned memory) or forgotten (more "
            "than %d probed calls since)" % CALLS_KEPT)


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
