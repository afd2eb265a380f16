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
NO_CLI = ("this installation has no firstassert program (the package's _native/ is empty); reinstall it "
          "(pip install --force-reinstall firstassert)")

_package = os.path.dirname(os.path.abspath(__file__))
_native = os.path.join(_package, "_native")  # where a wheel keeps the shim, its recorder and the command
_loaded = None  # the ctypes handle of the shim once enable() loaded it
_enabled_dir = None  # FIRSTASSERT_DIR as it was when recording started
_armed = None  # (CUDA_INJECTION64_PATH, FIRSTASSERT_CHAINED_INJECTION, the shim) before enable() armed the shim


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
    candidates = _candidates(LIBRARY, "src", _install.LIBDIR)
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


def _bind(handle):
    """Declares the shim's C API on a ctypes handle (firstassert/firstassert.h)."""
    handle.firstassert_enable.restype = ctypes.c_int
    handle.firstassert_enable.argtypes = []
    handle.firstassert_report_path.restype = ctypes.c_char_p
    handle.firstassert_report_path.argtypes = []
    handle.firstassert_refresh_report.restype = ctypes.c_int
    handle.firstassert_refresh_report.argtypes = []
    handle.firstassert_finish_report.restype = ctypes.c_int
    handle.firstassert_finish_report.argtypes = []
    handle.firstassert_set_report_dir.restype = ctypes.c_char_p
    handle.firstassert_set_report_dir.argtypes = [ctypes.c_char_p]
    handle.firstassert_stderr_pipe.restype = ctypes.c_int
    handle.firstassert_stderr_pipe.argtypes = [ctypes.c_int]
    handle.firstassert_disable.restype = ctypes.c_int
    handle.firstassert_disable.argtypes = []
    handle.firstassert_launch_count.restype = ctypes.c_uint64
    handle.firstassert_launch_count.argtypes = []
    handle.firstassert_set_launch_values.restype = ctypes.c_int
    handle.firstassert_set_launch_values.argtypes = [ctypes.c_uint64, ctypes.c_char_p]


def enable(report_dir=None, lib=None):
    """Loads libfirstassert.so into this interpreter (RTLD_GLOBAL) and starts recording CUDA launches.

    report_dir: where this process's report goes (created if missing); also when recording had started before (the
    shim preloaded, CUDA already running), unless a report was written already: then one line says where it is.
    lib: the library's path (default: see find_library). Returns True when launches are being recorded, or will be
    from when CUDA starts (called before `import torch`, it arms the shim through CUDA_INJECTION64_PATH); otherwise
    one line on stderr says why and nothing else changed.

    Not preloaded, the device's assertion lines are read through a pipe on fd 2 that forwards every byte as it comes
    (FIRSTASSERT_STDERR_PIPE; not where fd 2 is a terminal); disable() restores fd 2. Not preloaded, firstassert also
    holds CUPTI while it records, so a profiler started afterwards (torch.profiler, Nsight Systems) is refused it: one
    line says so, and disable() gives it back. Preloaded, such a profiler is handed CUPTI and recording goes on.
    """
    global _loaded
    path, origin = find_library(lib)
    if path is None:
        say("not enabled: %s not found (%s); pass enable(lib=PATH) or set FIRSTASSERT_LIB" % (LIBRARY, origin))
        return False
    try:
        handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        _bind(handle)
    except (OSError, AttributeError) as error:
        say("not enabled: cannot load %s (from %s): %s" % (path, origin, error))
        return False
    wanted = None
    if report_dir is not None:
        wanted = _make_report_dir(report_dir)
        if wanted is None:
            return False
        os.environ["FIRSTASSERT_DIR"] = wanted  # read when recording starts
    _loaded = handle
    if not _cuda_loaded():
        _arm(path, wanted)
        return True
    return _start_recording(handle, path, wanted)


def _arm(path, wanted):
    """Before CUDA starts, firstassert_enable() would be too early (it acts once per process). The driver initializes
    the library CUDA_INJECTION64_PATH names when CUDA starts (cuInit): the shim, already loaded here, then records
    through CUPTI. A tool already named there is kept and initialized first."""
    global _enabled_dir, _armed
    current = os.environ.get("CUDA_INJECTION64_PATH")
    shim = os.path.realpath(path)
    if _armed is None:
        _armed = (current, os.environ.get("FIRSTASSERT_CHAINED_INJECTION"), shim)
    if current and os.path.realpath(current) != shim:
        os.environ["FIRSTASSERT_CHAINED_INJECTION"] = current
    os.environ["CUDA_INJECTION64_PATH"] = shim
    _enabled_dir = wanted or _enabled_dir or environment_dir()


def _start_recording(handle, path, wanted):
    """With CUDA running: recording starts now, or had started (preloaded), and the report directory moves to
    `wanted` unless a report was written already."""
    global _enabled_dir
    if handle.firstassert_enable() != 1:
        say("not recording: %s said why on the process's stderr (in Jupyter: the server's terminal or log); "
            "usually CUPTI was not found (set FIRSTASSERT_CUPTI) or another tool (Nsight, compute-sanitizer, a "
            "profiler) holds it" % os.path.basename(path))
        return False
    handle.firstassert_stderr_pipe(1)  # again, after a disable(); nothing where preloaded or where it runs already
    if wanted is not None:
        where = os.fsdecode(handle.firstassert_set_report_dir(os.fsencode(wanted)) or os.fsencode(wanted))
        if where != wanted:
            say("this process's report was written in %s before enable(report_dir=%s); it stays there, and "
                "last_report(%r) will not find it" % (where, wanted, wanted))
        _enabled_dir = where
    _enabled_dir = _enabled_dir or environment_dir()
    return True


def _make_report_dir(report_dir):
    """The absolute report directory, created; None (after one line) when it cannot be made."""
    report_dir = os.path.abspath(os.fspath(report_dir))
    try:
        os.makedirs(report_dir, exist_ok=True)
    except OSError as error:
        say("not enabled: cannot create report_dir %s: %s" % (report_dir, error.strerror or error))
        return None
    return report_dir


def report_dir():
    """Where this process's reports go once enable() has run, else None."""
    return _enabled_dir


def environment_dir():
    """Where the shim puts reports when it starts without being told otherwise: $FIRSTASSERT_DIR, else the working
    directory."""
    return os.environ.get("FIRSTASSERT_DIR") or os.getcwd()


def _handle():
    """The shim's ctypes handle: enable()'s, else the copy already in this process (preloaded, or loaded by the
    driver through CUDA_INJECTION64_PATH), else None."""
    global _loaded
    if _loaded is None:
        path = _loaded_shim()
        if path:
            try:
                handle = ctypes.CDLL(path)
                _bind(handle)
                _loaded = handle
            except (OSError, AttributeError):
                return None
    return _loaded


def disable():
    """Stops recording in this process and gives back what it holds: CUPTI, so that a profiler started afterwards
    (torch.profiler, Nsight Systems) gets it, and fd 2 (the stderr pipe is drained first). It waits for the CUDA
    calls CUPTI is in the middle of, at most a second. Also when recording was started otherwise (preloaded, or by
    CUDA_INJECTION64_PATH). Armed before CUDA started, the shim is disarmed instead. What was found stays: the report
    is still written for a CUDA error and show() shows it. enable() records again. Returns True when a recording was
    stopped (or an armed shim disarmed)."""
    global _armed
    handle = _handle()
    if handle is None:
        return False
    if handle.firstassert_disable() == 1:
        return True
    if _armed is not None and not _cuda_loaded():
        injection, chained, shim = _armed
        if injection and os.path.realpath(injection) == shim:
            injection, chained = chained or None, None  # preloaded, the shim had armed itself: the tool it chained
        for name, value in (("CUDA_INJECTION64_PATH", injection), ("FIRSTASSERT_CHAINED_INJECTION", chained)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        _armed = None
        return True
    return False


def refresh_report():
    """Rewrites this process's report with what is known now (secondary errors so far, the device's lines still in
    the stderr pipe) and returns its path, or None while there is none."""
    handle = _handle()
    if handle is None:
        return None
    handle.firstassert_refresh_report()
    return report_path()


def finish_report():
    """The process is about to end: rewrites its report now as at exit (final), and returns its path, or None while
    there is none. For a notebook kernel asked to shut down, which its front end may kill before it exits."""
    handle = _handle()
    if handle is None:
        return None
    handle.firstassert_finish_report()
    return report_path()


def report_path():
    """The path of this process's report, or None while no sticky CUDA error was seen (or no shim is loaded)."""
    handle = _handle()
    if handle is None:
        return None
    path = handle.firstassert_report_path()
    return os.fsdecode(path) if path else None


NOT_RECORDING = 2 ** 64 - 1  # firstassert_launch_count() while nothing is recorded


def launch_counter():
    """firstassert_launch_count of the shim in this process (a ctypes function: how many launches were recorded so
    far, NOT_RECORDING while none are), or None when no shim is loaded."""
    handle = _handle()
    return handle.firstassert_launch_count if handle is not None else None


def set_launch_values(seq, json_text):
    """Hands the shim what was found in the values launch `seq` was given (a JSON object's text), for the report's
    next write. True when kept."""
    handle = _handle()
    return handle is not None and handle.firstassert_set_launch_values(seq, json_text.encode("utf-8")) == 1
