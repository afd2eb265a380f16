"""Which values mode this process is in, and turning it on where the job is.

The mode comes from FIRSTASSERT_VALUES (read when firstassert is imported: by the job, or by the sitecustomize
`firstassert run --values=MODE` puts first on PYTHONPATH), firstassert.enable(values=MODE), `%firstassert values
MODE` or set_mode(MODE). A mode other than off takes effect once torch is imported, and not before: importing
firstassert never imports torch. A bad mode is one line on stderr, and off.
"""

import atexit
import os
import sys
import threading

from .._output import say
from . import _hook

MODES = ("off", "check", "probe")

_state = {"mode": "off", "installed": None, "waiting": False, "at_exit": False}


def mode():
    """The values mode of this process: 'off', 'check' or 'probe'."""
    return _state["mode"]


def parse(value, origin):
    """The mode `value` names, or None after one line that says why it is not one (the caller then turns off)."""
    text = str(value).strip().lower()
    if text in ("", "off"):
        return "off"
    if text in MODES:
        return text
    say("%s: %r is not a values mode (modes: %s); values checks are off" % (origin, value, ", ".join(MODES)))
    return None


def set_mode(value, origin="firstassert.values.set_mode()"):
    """Sets the values mode ('off', 'check' or 'probe') and returns the mode now in force. Before torch is imported,
    it takes effect when torch is; a bad value is one line, and off."""
    wanted = parse(value, origin) or "off"
    _state["mode"] = wanted
    if "torch" in sys.modules:
        _apply()
    elif wanted != "off" and not _state["waiting"]:
        _state["waiting"] = True
        _hook.when_imported("torch", _torch_imported)
    return _state["mode"]


def from_environment():
    """FIRSTASSERT_VALUES, when set: the mode of a job (firstassert run --values=MODE sets it) or of a notebook
    kernel started with it."""
    value = os.environ.get("FIRSTASSERT_VALUES")
    if value is not None:
        set_mode(value, "FIRSTASSERT_VALUES=%s" % value)


def _torch_imported(module):
    _state["waiting"] = False
    _apply()


def _apply():
    """Installs or removes the checks to match the mode; a torch without what they need is one line, not a crash."""
    wanted = _state["mode"]
    try:
        from . import intercept
        installed = _state["installed"]
        if installed is not None and installed.mode != wanted:
            if not intercept.uninstall(installed):
                _state["mode"] = installed.mode
                return
            _state["installed"] = installed = None
        if wanted != "off" and installed is None:
            _state["installed"] = intercept.install(mode=wanted)
            if wanted == "probe" and not _state["at_exit"]:
                _state["at_exit"] = True
                atexit.register(_publish_at_exit)
    except Exception as error:  # never break the job's `import torch` or its cell
        if isinstance(error, ImportError) and (error.name or "").startswith("torch"):
            version = getattr(sys.modules.get("torch"), "__version__", "unknown")
            say("values checks need torch 2.0 or newer (TorchDispatchMode and TorchFunctionMode); this torch is %s "
                "(%s): they are off" % (version, error))
        else:
            say("values checks could not be turned %s: %s: %s" % (wanted, type(error).__name__, error))
        _state["mode"] = "off" if _state["installed"] is None else _state["installed"].mode


def publish():
    """In probe mode, once a sticky CUDA error has been reported: hands the report the values of the launches it
    names, and returns the culprit's (a dict: 'text' says what was found, or why nothing was), else None."""
    probes = getattr(_state["installed"], "probes", None)
    if probes is None:
        return None
    report, answers = probes.publish()
    return answers.get(((report or {}).get("culprit") or {}).get("seq"))


def values_of_launch(seq, thread=None):
    """In probe mode: what the checks find in the values of the probed call that made launch `seq` (the report's
    "seq") on `thread` (a native thread id, the report's "thread"; default: the calling thread), as a report's
    `values`; None when no probed call made it."""
    probes = getattr(_state["installed"], "probes", None)
    if probes is None:
        return None
    call = probes.find(seq, threading.get_native_id() if thread is None else thread)
    return probes.values_of(call) if call is not None else None


def _publish_at_exit():
    """At exit (before the shim's own exit handler, which runs after the interpreter's): the values into the report,
    and what they say on stderr."""
    probes = getattr(_state["installed"], "probes", None)
    if probes is None:
        return
    try:
        report, answers = probes.publish()
        for line in probes.lines(report, answers) if report else []:
            say(line)
    except Exception as error:  # the job is ending: ours may only add a line
        say("values probe: could not read the probed values: %s: %s" % (type(error).__name__, error))
