"""Where firstassert's binaries are, and turning the recorder on in the running interpreter.

The shim, libfirstassert.so, is found in this order: the path given to enable(); $FIRSTASSERT_LIB; a copy already
loaded in this process (LD_PRELOAD); the package's own (_native/, in a wheel); when the package is the copy in a
Meson build tree, that build's; the libdir a `meson install` put it in.
"""

import ctypes
import os

from . import _install
from ._output import say

LIBRARY = "libfirstassert.so"
RECORDER = "libfirstassert_recorder.so"  # loaded by the shim from its own directory
CLI = "firstassert"

_package = os.path.dirname(os.path.abspath(__file__))
_native = os.path.join(_package, "_native")  # where a wheel keeps the shim, its recorder and the command
_loaded = None  # the ctypes handle of the shim once enable() loaded it
_enabled_dir = None  # FIRSTASSERT_DIR as it was when recording started


def _mapped_objects():
    """The paths of the shared objects mapped into this process ([] where /proc is absent)."""
    try:
        with open("/proc/self/maps") as maps:
            return [line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6]
    except OSError:
        return []


def _loaded_shim():
    for path in _mapped_objects():
        if os.path.basename(path).startswith(LIBRARY):
            return path
    return None


def _cuda_loaded():
    """True when libcudart or libcuda is mapped (or when that cannot be told)."""
    objects = _mapped_objects()
    if not objects:
        return True
    names = [os.path.basename(path) for path in objects]
    return any(name.startswith("libcudart.so") or name.startswith("libcuda.so") for name in names)


def _build_root():
    """The Meson build directory when this package is its copy (build/python/firstassert), else None."""
    root = os.path.dirname(os.path.dirname(_package))
    return root if os.path.isdir(os.path.join(root, "meson-private")) else None


def _candidates(name, build_subdir, installed_dir):
    found = [(os.path.join(_native, name), "this package")]
    root = _build_root()
    if root:
        found.append((os.path.join(root, build_subdir, name), "this build tree"))
    if installed_dir:
        found.append((os.path.join(installed_dir, name), "the install prefix"))
    return found


def find_library(lib=None):
    """The path of libfirstassert.so that enable(lib) would load, and where it came from: (path, origin); path is
    None when there is none (origin then says where it looked)."""
    if lib:
        return os.fspath(lib), "the lib argument"
    env = os.environ.get("FIRSTASSERT_LIB")
    if env:
        return env, "FIRSTASSERT_LIB"
    loaded = _loaded_shim()
    if loaded:
        return loaded, "already loaded in this process"
    candidates = _candidates(LIBRARY, os.path.join("src", "preload"), _install.LIBDIR)
    for path, origin in candidates:
        if os.path.isfile(path):
            return path, origin
    return None, "looked at " + ", ".join(path for path, _ in candidates)


def library_path():
    """This installation's libfirstassert.so (its recorder, libfirstassert_recorder.so, sits beside it), or None.
    For LD_PRELOAD, `firstassert lib` prints the same file as the loader can take it (its path may hold a space)."""
    path, _ = find_library()
    return os.path.abspath(path) if path else None


def cli_path():
    """The firstassert command of this installation, or None."""
    for path, _ in _candidates(CLI, os.path.join("src", "cli"), _install.BINDIR):
        if os.access(path, os.X_OK):
            return path
    return None


def enable(report_dir=None, lib=None):
    """Loads libfirstassert.so into this interpreter (RTLD_GLOBAL) and starts recording CUDA launches.

    report_dir: where the report goes (FIRSTASSERT_DIR; set before recording starts, created if missing). lib: the
    library's path (default: see find_library). Returns True when launches are being recorded, or will be from when
    CUDA starts (called before `import torch`, it arms the shim through CUDA_INJECTION64_PATH); otherwise one line on
    stderr says why and nothing else changed. Recording starts once per process, before the cell that fails.
    """
    global _loaded, _enabled_dir
    path, origin = find_library(lib)
    if path is None:
        say("not enabled: %s not found (%s); pass enable(lib=PATH) or set FIRSTASSERT_LIB" % (LIBRARY, origin))
        return False
    try:
        handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        handle.firstassert_enable.restype = ctypes.c_int
        handle.firstassert_enable.argtypes = []
        handle.firstassert_report_path.restype = ctypes.c_char_p
        handle.firstassert_report_path.argtypes = []
    except (OSError, AttributeError) as error:
        say("not enabled: cannot load %s (from %s): %s" % (path, origin, error))
        return False
    if report_dir is not None and not _set_report_dir(report_dir):
        return False
    if not _cuda_loaded():
        # Armed: firstassert_enable() acts once per process, and now would be too early. The driver initializes the
        # library CUDA_INJECTION64_PATH names when CUDA starts (cuInit): the shim, already loaded here, then records
        # through CUPTI. A tool already named there is kept and initialized first.
        current = os.environ.get("CUDA_INJECTION64_PATH")
        shim = os.path.realpath(path)
        if current and os.path.realpath(current) != shim:
            os.environ["FIRSTASSERT_CHAINED_INJECTION"] = current
        os.environ["CUDA_INJECTION64_PATH"] = shim
        _loaded = handle
        if _enabled_dir is None:
            _enabled_dir = os.environ.get("FIRSTASSERT_DIR") or os.getcwd()
        return True
    recording = handle.firstassert_enable() == 1
    _loaded = handle
    if not recording:
        say("not recording: %s said why on the process's stderr (in Jupyter: the server's terminal or log); "
             "usually CUPTI was not found (set FIRSTASSERT_CUPTI) or another tool (Nsight, compute-sanitizer, a "
             "profiler) holds it" % os.path.basename(path))
        return False
    if _enabled_dir is None:
        _enabled_dir = os.environ.get("FIRSTASSERT_DIR") or os.getcwd()
    return True


def _set_report_dir(report_dir):
    """FIRSTASSERT_DIR for the recording to come; False (after one line) when the directory cannot be made."""
    report_dir = os.path.abspath(os.fspath(report_dir))
    if _enabled_dir is not None and report_dir != _enabled_dir:
        say("already recording; reports still go to %s, not %s" % (_enabled_dir, report_dir))
        return True
    try:
        os.makedirs(report_dir, exist_ok=True)
    except OSError as error:
        say("not enabled: cannot create report_dir %s: %s" % (report_dir, error))
        return False
    os.environ["FIRSTASSERT_DIR"] = report_dir
    return True


def report_path():
    """The path of this process's report, or None while no sticky CUDA error was seen (or enable() never ran)."""
    if _loaded is None:
        return None
    path = _loaded.firstassert_report_path()
    return os.fsdecode(path) if path else None
