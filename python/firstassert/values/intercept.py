"""Check mode's interception: a TorchDispatchMode that runs a covered aten op's checks before the op, and a
TorchFunctionMode for one_hot, whose aten op decomposes before dispatch sees it.

Only plain tensors on the checked devices (CUDA; CPU ops name the value themselves) are checked, and not while a
CUDA graph is being captured (a check synchronizes, which capture forbids; replays never reach dispatch). The modes
say they ignore torch.compile's internals, so torch.compile compiles as it would without them: what its graphs run
is not checked (eager ops only). Both mode stacks are per thread: the modes check the thread that installed them
and the threads PyTorch hands its state to (autograd's), not other threads a job starts.

A check that itself breaks (a case it does not know) says so in one line and lets the op run unchecked; a CUDA error
its synchronization meets (an earlier kernel's, the context already lost) is raised as the op would have raised it.

In probe mode (probe.py) the same modes, on the same ops, copy what the checks read and run the op between two
readings of the shim's launch count, instead of checking: no synchronization, nothing raised.
"""

import threading

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .._output import say
from ..notebook import is_cuda_error
from . import bce, ctc, embedding, indexing, multinomial, nll_loss, one_hot, ops, probe, scan, scatter_gather

FAMILIES = (nll_loss, embedding, indexing, scatter_gather, bce, multinomial, ctc)
_PLAIN = (torch.Tensor, torch.nn.Parameter)  # not FakeTensor, FunctionalTensor, DTensor...


def _compiling():
    compiler = getattr(torch, "compiler", None)
    return bool(compiler is not None and getattr(compiler, "is_compiling", lambda: False)())


class Checks:
    """What both modes share: the devices checked, the evaluation of a check's conditions (check mode) or the probe
    of a call (probe mode: probes is a probe.Probes)."""

    def __init__(self, devices, probes=None):
        self.devices = frozenset(devices)
        self.probes = probes
        self._said = set()

    def wanted(self, tensor):
        if not isinstance(tensor, torch.Tensor) or type(tensor) not in _PLAIN or tensor.device.type not in self.devices:
            return False
        if tensor.device.type == "cuda" and torch.cuda.is_current_stream_capturing():
            if self.probes is None:
                self._once("capture", "ops captured into a CUDA graph are not checked (a check synchronizes, which "
                                      "capture forbids), nor are the graph's replays")
            else:
                self._once("capture", "ops captured into a CUDA graph are not probed, nor are the graph's replays "
                                      "(a replay runs without dispatch)")
            return False
        return True

    def run(self, name, make_conditions, named, reads, function, args, kwargs):
        """The op, after its check (which may raise the op's ValuesError) or around its probe."""
        if self.probes is None:
            error = self.error(name, lambda: make_conditions(named))
            if error is not None:
                raise error
            return function(*args, **kwargs)
        try:
            call = self.probes.start(name, make_conditions, named, reads)
        except Exception as problem:
            if is_cuda_error(problem):
                raise  # not ours: the op would meet it too
            self._once(name, "the values probe of %s failed (%s: %s); the op runs unprobed" % (
                name, type(problem).__name__, str(problem).splitlines()[0] if str(problem) else ""))
            call = None
        return self.probes.run(call, function, *args, **kwargs)

    def error(self, name, make_conditions):
        """The exception the op's first failing condition makes, or None (also when the check itself broke)."""
        try:
            failing = scan.first_failing(make_conditions())
            return failing.report(scan.locate(failing)) if failing is not None else None
        except Exception as problem:  # ours must never break the user's op
            if is_cuda_error(problem):
                raise  # not ours: the op would meet it too
            self._once(name, "the values check of %s failed (%s: %s); the op runs unchecked" % (
                name, type(problem).__name__, str(problem).splitlines()[0] if str(problem) else ""))
            return None

    def _once(self, key, message):
        if key not in self._said:
            self._said.add(key)
            say(message)


class DispatchChecks(TorchDispatchMode):
    def __init__(self, checks, table):
        super().__init__()
        self.checks, self.table = checks, table

    @classmethod
    def ignore_compile_internals(cls):
        return True  # torch.compile compiles as without us (its graphs go unchecked) instead of falling back to eager

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        entry = self.table.get(func)
        if entry is not None:
            named = entry.arguments(args, kwargs)
            if self.checks.wanted(named.get(entry.check.on)):
                return self.checks.run(func.name(), entry.check.conditions, named, entry.check.reads, func, args,
                                       kwargs)
        return func(*args, **kwargs)


class FunctionChecks(TorchFunctionMode):
    def __init__(self, checks):
        super().__init__()
        self.checks = checks
        self.one_hot = torch.nn.functional.one_hot

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is self.one_hot and not _compiling():
            found = one_hot.arguments(args, kwargs)
            if found is not None and self.checks.wanted(found[0]):
                named = {"tensor": found[0], "num_classes": found[1]}
                return self.checks.run("one_hot", _one_hot_conditions, named, ("tensor",), func, args, kwargs)
        return func(*args, **kwargs)


def _one_hot_conditions(named):
    return one_hot.conditions(named["tensor"], named["num_classes"])


class Installed:
    """The two modes pushed on this thread's stacks, to be popped by uninstall()."""

    def __init__(self, dispatch, function):
        self.dispatch, self.function = dispatch, function
        self.thread = threading.get_ident()
        self.mode = "check" if dispatch.checks.probes is None else "probe"
        self.probes = dispatch.checks.probes


def install(devices=("cuda",), mode="check"):
    """Pushes the modes on the calling thread's stacks, for good (not a `with` block), checking (mode 'check') or
    probing ('probe'). Returns an Installed; its probes are the probe.Probes in probe mode."""
    table, missing = ops.table([check for family in FAMILIES for check in family.CHECKS])
    if missing:
        say("this torch (%s) has no aten %s: those ops go unchecked" % (torch.__version__, ", ".join(missing)))
    checks = Checks(devices, probe.Probes() if mode == "probe" else None)
    dispatch, function = DispatchChecks(checks, table), FunctionChecks(checks)
    dispatch.__enter__()
    function.__enter__()
    return Installed(dispatch, function)


def uninstall(installed):
    """Pops the modes, when they are still the innermost on the installing thread; else one line says why and they
    stay. Returns True when popped."""
    if threading.get_ident() != installed.thread:
        say("values checks can only be turned off on the thread that turned them on")
        return False
    dispatch_top = torch._C._len_torch_dispatch_stack() and torch._C._get_dispatch_stack_at(
        torch._C._len_torch_dispatch_stack() - 1)
    function_top = torch._C._len_torch_function_stack() and torch._C._get_function_stack_at(
        torch._C._len_torch_function_stack() - 1)
    if dispatch_top is not installed.dispatch or function_top is not installed.function:
        say("values checks stay on: a mode entered after them (a `with` block of another tool) is still active")
        return False
    installed.function.__exit__(None, None, None)
    installed.dispatch.__exit__(None, None, None)
    return True
