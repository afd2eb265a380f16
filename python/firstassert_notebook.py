"""firstassert in a notebook: turn the recorder on in the running kernel, and read its report after the restart.

A device-side assert leaves the CUDA context unusable: in Jupyter or Colab the kernel must be restarted, and
everything in memory is lost. firstassert's JSON report is what survives. The flow:

    import torch                                  # CUDA's libraries must be loaded first
    import firstassert_notebook as fa
    fa.enable(report_dir="/content/firstassert")  # True when launches are being recorded
    ...                                           # the cell that dies with "device-side assert triggered"

    # after Runtime > Restart:
    import firstassert_notebook as fa
    fa.show(fa.last_report("/content/firstassert"))

Standard library only (Python 3.8+). The shim, libfirstassert.so, is found in this order: the path given to
enable(); $FIRSTASSERT_LIB; a copy already loaded in this process (LD_PRELOAD); when this module runs from a
Meson build tree, that build's shim; the libdir it was installed with; the build/ directory of a source checkout.

    python3 firstassert_notebook.py show [DIR|FILE]   prints the newest report (or FILE)
    python3 firstassert_notebook.py lib               prints the library enable() would load
"""

import ctypes
import glob
import json
import os
import sys
import textwrap

__all__ = ["enable", "last_report", "show", "report_path", "find_library"]

LIBRARY = "libfirstassert.so"
SCHEMA_PREFIX = "firstassert/"

# Substituted by Meson (configure_file) with the libdir of the install prefix; left as is in the source tree.
_INSTALLED_LIBDIR = "@FIRSTASSERT_LIBDIR@"

_here = os.path.dirname(os.path.abspath(__file__))
_loaded = None  # the ctypes handle of the shim once enable() loaded it
_enabled_dir = None  # FIRSTASSERT_DIR as it was when recording started


def _say(message):
    print("firstassert: " + message, file=sys.stderr)


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


def find_library(lib=None):
    """The path of libfirstassert.so that enable(lib) would load, and where it came from: (path, origin)."""
    if lib:
        return os.fspath(lib), "the lib argument"
    env = os.environ.get("FIRSTASSERT_LIB")
    if env:
        return env, "FIRSTASSERT_LIB"
    loaded = _loaded_shim()
    if loaded:
        return loaded, "already loaded in this process"
    candidates = []
    build_root = os.path.dirname(_here)
    if os.path.isdir(os.path.join(build_root, "meson-private")):  # this module is the copy in a build tree
        candidates.append((os.path.join(build_root, "src", "preload", LIBRARY), "this build tree"))
    if not _INSTALLED_LIBDIR.startswith("@"):
        candidates.append((os.path.join(_INSTALLED_LIBDIR, LIBRARY), "the installed libdir"))
    candidates.append((os.path.join(build_root, "build", "src", "preload", LIBRARY), "the checkout's build/"))
    for path, origin in candidates:
        if os.path.isfile(path):
            return path, origin
    return None, "searched " + ", ".join(path for path, _ in candidates)


def enable(lib=None, report_dir=None):
    """Loads libfirstassert.so into this interpreter (RTLD_GLOBAL) and starts recording CUDA launches.

    lib: the library's path (default: see find_library). report_dir: where the report goes (FIRSTASSERT_DIR; set
    before recording starts, created if missing). Returns True when launches are being recorded; otherwise one
    line on stderr says why and nothing else changed. Recording starts once per process: call it after CUDA's
    libraries are loaded (import torch first), before the cell that fails.
    """
    global _loaded, _enabled_dir
    path, origin = find_library(lib)
    if path is None:
        _say("not enabled: %s not found (%s); pass enable(lib=PATH) or set FIRSTASSERT_LIB" % (LIBRARY, origin))
        return False
    try:
        handle = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        handle.firstassert_enable.restype = ctypes.c_int
        handle.firstassert_enable.argtypes = []
        handle.firstassert_report_path.restype = ctypes.c_char_p
        handle.firstassert_report_path.argtypes = []
    except (OSError, AttributeError) as error:
        _say("not enabled: cannot load %s (from %s): %s" % (path, origin, error))
        return False
    if not _cuda_loaded():
        # firstassert_enable() acts once per process: calling it now would leave recording off for good.
        _say("not enabled yet: CUDA's libraries are not loaded in this process; import torch (or whatever loads "
             "libcudart) first, then call enable() again")
        return False
    if report_dir is not None:
        report_dir = os.path.abspath(os.fspath(report_dir))
        if _enabled_dir is not None and report_dir != _enabled_dir:
            _say("already recording; reports still go to %s, not %s" % (_enabled_dir, report_dir))
        else:
            try:
                os.makedirs(report_dir, exist_ok=True)
            except OSError as error:
                _say("not enabled: cannot create report_dir %s: %s" % (report_dir, error))
                return False
            os.environ["FIRSTASSERT_DIR"] = report_dir
    recording = handle.firstassert_enable() == 1
    _loaded = handle
    if not recording:
        _say("not recording: %s said why on the process's stderr (in Jupyter: the server's terminal or log); "
             "usually CUPTI was not found (set FIRSTASSERT_CUPTI) or another tool (Nsight, compute-sanitizer, a "
             "profiler) holds it" % os.path.basename(path))
        return False
    if _enabled_dir is None:
        _enabled_dir = os.environ.get("FIRSTASSERT_DIR") or os.getcwd()
    return True


def report_path():
    """The path of this process's report, or None while no sticky CUDA error was seen (or enable() never ran)."""
    if _loaded is None:
        return None
    path = _loaded.firstassert_report_path()
    return os.fsdecode(path) if path else None


def _default_dir():
    return os.environ.get("FIRSTASSERT_DIR") or os.getcwd()


def _read_report(path):
    """(report, None) or (None, why it is not a report)."""
    try:
        with open(path, "rb") as f:
            report = json.loads(f.read().decode("utf-8", errors="replace"))
    except OSError as error:
        return None, "unreadable (%s)" % (error.strerror or error)
    except ValueError as error:
        return None, "not valid JSON, perhaps partly written (%s)" % error
    if not isinstance(report, dict) or not str(report.get("schema", "")).startswith(SCHEMA_PREFIX):
        return None, "not a firstassert report (no \"schema\": \"firstassert/...\")"
    report.setdefault("_path", path)
    return report, None


def last_report(dir=None):
    """The newest firstassert-*.json in dir (default: $FIRSTASSERT_DIR, else the working directory), parsed.

    A file that is not a report (partly written, foreign) is skipped with one line on stderr. None when there is
    no report. The dict gets "_path", the file it was read from.
    """
    directory = os.fspath(dir) if dir is not None else _default_dir()
    entries = []
    for path in glob.glob(os.path.join(glob.escape(directory), "firstassert-*.json")):
        try:
            entries.append((os.stat(path).st_mtime_ns, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True):
        report, why = _read_report(path)
        if report is not None:
            return report
        _say("skipped %s: %s" % (path, why))
    return None


# ---- show -------------------------------------------------------------------------------------------------------

def _short_name(signature):
    """'void at::native::k<float, long>(float*, ...)' -> 'k', as the shim's stderr summary names kernels."""
    if not signature:
        return "?"
    outer, depth = [], 0
    for ch in signature:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]" and depth > 0:
            depth -= 1
        elif depth == 0:
            outer.append(ch)
    words = "".join(outer).split()
    name = words[-1].split("::")[-1] if words else ""
    return name or signature


def _dims(value):
    try:
        return "(%s)" % ",".join(str(v) for v in value)
    except TypeError:
        return "(?)"


def _python_frame(frame):
    return "%s:%s in %s" % (frame.get("file") or "?", frame.get("line", "?"), frame.get("function") or "?")


def _native_frame(frame):
    module = os.path.basename(frame.get("module") or "?")
    function = frame.get("function")
    if function:
        where = ""
        if frame.get("file"):
            where = " (%s:%s)" % (os.path.basename(frame["file"]), frame.get("line") or "?")
        return "%s%s  [%s]" % (_short_name(function.split(" [clone ")[0]) + "()", where, module)
    return "%s+%s" % (module, frame.get("offset") or frame.get("pc") or "?")


def _user_file(path):
    """Library code is where the failing call ends, not where the bug is (the shim's summary makes the same cut)."""
    return bool(path) and not any(part in path for part in (
        "/site-packages/", "/dist-packages/", "/lib/python3", "<frozen", "/torch/", "<string>"))


def _launch_line(launch):
    return "<<<%s, %s, %s bytes shared, stream %s%s>>> via %s, device %s, thread %s" % (
        _dims(launch.get("grid")), _dims(launch.get("block")), launch.get("shared_mem", "?"),
        launch.get("stream", "?"), " (per-thread default)" if launch.get("per_thread_default_stream") else "",
        launch.get("api", "?"), launch.get("device", "?"), launch.get("thread", "?"))


def _message_line(message):
    return "%s:%s: %s: block %s, thread %s: `%s` failed" % (
        message.get("file", "?"), message.get("line", "?"), message.get("function", "?"),
        _dims(message.get("block")), _dims(message.get("thread")), message.get("condition", "?"))


def _kernel_label(launch):
    if launch.get("graph"):
        return "(a CUDA graph)"
    return _short_name(launch.get("kernel") or launch.get("mangled"))


def show(report=None, native_frames=8, file=None):
    """Prints a readable summary of a report: a dict from last_report(), a report file's path, or None (the newest
    report in $FIRSTASSERT_DIR or the working directory)."""
    out = file or sys.stdout
    if report is None:
        report = last_report()
        if report is None:
            print("firstassert: no report in %s" % _default_dir(), file=out)
            return
    elif not isinstance(report, dict):
        path = os.fspath(report)
        report = last_report(path) if os.path.isdir(path) else _read_report(path)[0]
        if report is None:
            print("firstassert: no report at %s" % path, file=out)
            return

    def line(label, text=""):
        print(("  %-12s %s" % (label, text)).rstrip(), file=out)

    def more(text):
        print("  %-12s %s" % ("", text), file=out)

    process = report.get("process") or {}
    print("firstassert report %s (%s, written %s)" % (
        report.get("_path", ""), "final" if report.get("final") else "written at detection; not final",
        report.get("written_at", "?")), file=out)
    line("process", "pid %s on %s: %s" % (process.get("pid", "?"), process.get("host", "?"),
                                          " ".join(process.get("argv") or [])))

    first = report.get("first_error")
    if first:
        line("first error", "%s (%s) %s, reported by %s on thread %s" % (
            first.get("name", "?"), first.get("code", "?"), first.get("description", ""), first.get("api", "?"),
            first.get("thread", "?")))
    else:
        line("first error", "none")

    culprit = report.get("culprit")
    if culprit:
        line("kernel", _kernel_label(culprit))
        if culprit.get("kernel"):
            for part in textwrap.wrap(culprit["kernel"], 100, break_on_hyphens=False) or [""]:
                more(part)
        line("launch", _launch_line(culprit))
        line("confidence", "%s: %s" % (culprit.get("confidence", "?"), culprit.get("reason", "")))
        message = culprit.get("device_message")
        if message:
            line("device", _message_line(message))
        elif report.get("device_messages"):
            line("device", "%d message(s), none matched to this kernel: %s" % (
                len(report["device_messages"]), _message_line(report["device_messages"][0])))
        else:
            line("device", "no assertion line read (they are read when the shim is preloaded)")
        hint = culprit.get("hint")
        if hint:
            line("hint", hint.get("title", ""))
            for part in textwrap.wrap(hint.get("text", ""), 100):
                more(part)
        else:
            line("hint", "none for this kernel and error")
        frames = culprit.get("python_stack") or []
        if frames:
            user = [f for f in frames if _user_file(f.get("file"))]
            line("called from", _python_frame(user[0] if user else frames[0]))
            line("Python", _python_frame(frames[0]))
            for frame in frames[1:]:
                more(_python_frame(frame))
        else:
            line("Python", "none (a CPython other than 3.9 to 3.13, a debug or free-threaded build, or "
                           "FIRSTASSERT_PYTHON=0)")
        natives = culprit.get("native_stack") or []
        if natives:
            shown = natives[:native_frames]
            line("native", _native_frame(shown[0]))
            for frame in shown[1:]:
                more(_native_frame(frame))
            if len(natives) > len(shown):
                more("... %d more in the report" % (len(natives) - len(shown)))
        else:
            line("native", "no frames")
    else:
        line("kernel", "not known (no launch recorded before the error)")

    others = [c for c in report.get("candidates") or [] if not culprit or c.get("seq") != culprit.get("seq")]
    if others:
        line("candidates", "%d other launch(es) not known to have completed: %s" % (
            len(others), ", ".join(_kernel_label(c) for c in others[:5]) + (" ..." if len(others) > 5 else "")))
    for error in report.get("launch_errors") or []:
        line("refused", "%s %s: %s (%s)" % (_kernel_label(error), _launch_line(error), error.get("name", "?"),
                                            error.get("code", "?")))
    secondary = report.get("secondary") or {}
    count = secondary.get("count", 0)
    line("secondary", "%s later error(s) caused by the first%s%s" % (
        count, "" if report.get("final") else " so far", ":" if secondary.get("sites") else ""))
    for site in secondary.get("sites") or []:
        more("%s -> %s (%s) x%s" % (site.get("api", "?"), site.get("name", "?"), site.get("code", "?"),
                                    site.get("count", "?")))


def _main(argv):
    if len(argv) >= 1 and argv[0] == "lib":
        path, origin = find_library()
        print(path if path else "not found (%s)" % origin)
        return 0 if path else 1
    if len(argv) >= 1 and argv[0] == "show" and len(argv) <= 2:
        show(argv[1] if len(argv) == 2 else None)
        return 0
    print("usage: python3 -m firstassert_notebook show [DIR|FILE] | lib", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
