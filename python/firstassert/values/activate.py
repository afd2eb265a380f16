"""Which values mode this process is in, and turning it on where the job is.

The mode comes from FIRSTASSERT_VALUES (read when firstassert is imported: by the job, or by the sitecustomize
`firstassert run --values=MODE` puts first on PYTHONPATH), firstassert.enable(values=MODE), `%firstassert values
MODE` or set_mode(MODE). A mode other than off takes effect once torch is imported, and not before: importing
firstassert never imports torch. A bad mode is one line on stderr, and off.
"""

import os
import sys

from .._output import say
from . import _hook

MODES = ("off", "check")
# Modes issue 35 plans that this version does not have yet.
_PLANNED = {"probe": "probe mode (a failed device assert re-runs the op's checks to name the value) is not "
                     "built yet"}

_state = {"mode": "off", "installed": None, "waiting": False}


def mode():
    """The values mode of this process: 'off' or 'check'."""
    return _state["mode"]


def parse(value, origin):
    """The mode `value` names, or None after one line that says why it is not one (the caller then turns off)."""
    text = str(value).strip().lower()
    if text in ("", "off"):
        return "off"
    if text in MODES:
        return text
    why = _PLANNED.get(text, "not a values mode")
    say("%s: %r is %s (modes: %s); values checks are off" % (origin, value, why, ", ".join(MODES)))
    return None


def set_mode(value, origin="firstassert.values.set_mode()"):
    """Sets the values mode ('off' or 'check') and returns the mode now in force. Before torch is imported, it takes
    effect when torch is; a bad value is one line, and off."""
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
    try:
        if _state["mode"] == "check" and _state["installed"] is None:
            from . import intercept
            _state["installed"] = intercept.install()
        elif _state["mode"] == "off" and _state["installed"] is not None:
            from . import intercept
            if intercept.uninstall(_state["installed"]):
                _state["installed"] = None
            else:
                _state["mode"] = "check"
    except ImportError as error:
        version = getattr(sys.modules.get("torch"), "__version__", "unknown")
        say("values checks need torch 2.0 or newer (TorchDispatchMode and TorchFunctionMode); this torch is %s "
            "(%s): they are off" % (version, error))
        _state["mode"] = "off"
    except Exception as error:  # never break the job's `import torch` or its cell
        say("values checks could not be turned %s: %s: %s" % (_state["mode"], type(error).__name__, error))
        _state["mode"] = "off" if _state["installed"] is None else "check"
