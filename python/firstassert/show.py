"""A firstassert report for a person: what failed first, where it was launched from, what to check."""

import os
import socket
import sys
import textwrap

from . import cells, library
from .reports import default_dir, last_report, read_report

_NEWEST = object()  # show()'s default: the newest report; show(None), as from last_report() finding none, is not


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


def _without_clone_suffix(name):
    """GNU's "f(int) [clone .isra.0]" and LLVM's "f(int) (.isra.0)" (core/demangle.h) both give "f(int)"."""
    name = name.split(" [clone .")[0]
    llvm = name.rfind(" (.")
    if llvm >= 0 and name.endswith(")") and "(" not in name[llvm + 2:] and name.find(")", llvm) == len(name) - 1:
        name = name[:llvm]
    return name


# Where a notebook's or a runner's own machinery is: its frames say nothing of the user's code, so a run of them is
# folded into one line naming them.
_FRAMEWORKS = (("IPython", "/IPython/"), ("ipykernel", "/ipykernel/"), ("ipykernel", "/ipykernel_launcher.py"),
               ("asyncio", "/asyncio/"), ("tornado", "/tornado/"), ("traitlets", "/traitlets/"), ("zmq", "/zmq/"),
               ("runpy", "/runpy.py"), ("runpy", "<frozen runpy>"))


def _framework(path):
    for name, part in _FRAMEWORKS:
        if part in (path or ""):
            return name
    return None


def _python_lines(frames, names):
    """The Python frames as lines, innermost first, each run of framework frames folded into one line."""
    lines, folded = [], []

    def flush():
        if folded:
            names = ", ".join(dict.fromkeys(folded))
            lines.append("... %d frame%s of %s" % (len(folded), "" if len(folded) == 1 else "s", names))
            folded.clear()

    for frame in frames:
        framework = _framework(frame.get("file"))
        if framework:
            folded.append(framework)
            continue
        flush()
        lines.append(cells.where(frame, names))
    flush()
    return lines


def _own_start_ns():
    """When this process started (ns since the epoch), from /proc; None where that cannot be read."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(l.split()[1]) for l in f if l.startswith("btime "))
        return (boot * 10**9) + ticks * 10**9 // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _which_process(process):
    """The report's process said against this one: after a notebook's restart, the report is the previous kernel's."""
    pid, host = process.get("pid"), process.get("host")
    if host != socket.gethostname():
        return "another machine's process"
    if pid == os.getpid():
        return "this process"
    started, mine = process.get("start_time_ns"), _own_start_ns()
    if isinstance(started, int) and mine is not None and started < mine:
        return "an earlier process than this one (pid %d): the report predates it" % os.getpid()
    return "another process than this one (pid %d)" % os.getpid()


def _dims(value):
    try:
        return "(%s)" % ",".join(str(v) for v in value)
    except TypeError:
        return "(?)"


def _native_frame(frame):
    module = os.path.basename(frame.get("module") or "?")
    function = frame.get("function")
    if function:
        where = ""
        if frame.get("file"):
            where = " (%s:%s)" % (os.path.basename(frame["file"]), frame.get("line") or "?")
        return "%s%s  [%s]" % (_short_name(_without_clone_suffix(function)) + "()", where, module)
    return "%s+%s" % (module, frame.get("offset") or frame.get("pc") or "?")


def _user_file(path):
    """Library code is where the failing call ends, not where the bug is (the shim's summary makes the same cut)."""
    return bool(path) and not any(part in path for part in (
        "/site-packages/", "/dist-packages/", "/lib/python3", "<frozen", "<string>", "/firstassert/values/"))


def launch_line(launch):
    return "<<<%s, %s, %s bytes shared, stream %s%s>>> via %s, device %s, thread %s" % (
        _dims(launch.get("grid")), _dims(launch.get("block")), launch.get("shared_mem", "?"),
        launch.get("stream", "?"), " (per-thread default)" if launch.get("per_thread_default_stream") else "",
        launch.get("api", "?"), launch.get("device", "?"), launch.get("thread", "?"))


def _message_line(message):
    return "%s:%s: %s: block %s, thread %s: `%s` failed" % (
        message.get("file", "?"), message.get("line", "?"), message.get("function", "?"),
        _dims(message.get("block")), _dims(message.get("thread")), message.get("condition", "?"))


def kernel_label(launch):
    node = launch.get("graph_node")
    if node:
        where = node.get("captured_at")
        return "%s (node %s of %s of a CUDA graph%s)" % (
            _short_name(launch.get("kernel") or launch.get("mangled")), node.get("node", "?"), node.get("nodes", "?"),
            " captured at %s" % where if where else "")
    if launch.get("graph"):
        return "(a CUDA graph)"
    return _short_name(launch.get("kernel") or launch.get("mangled"))


def refused_text(error):
    """A launch the API refused: its kernel, configuration and error."""
    return "%s %s: %s (%s)" % (kernel_label(error), launch_line(error), error.get("name", "?"), error.get("code", "?"))


def first_error_text(first):
    return "%s (%s) %s, reported by %s on thread %s" % (
        first.get("name", "?"), first.get("code", "?"), first.get("description", ""), first.get("api", "?"),
        first.get("thread", "?"))


def launching_frame(launch):
    """The frame a person looks at first: the innermost one in the user's own code (a cell, their .py)."""
    frames = launch.get("python_stack") or []
    user = [f for f in frames if _user_file(f.get("file"))]
    return user[0] if user else (frames[0] if frames else None)


def device_text(report, culprit):
    message = culprit.get("device_message")
    if message:
        return _message_line(message)
    if report.get("device_messages"):
        return "%d message(s), none matched to this kernel: %s" % (
            len(report["device_messages"]), _message_line(report["device_messages"][0]))
    if (report.get("first_error") or {}).get("code") != 710:
        return "none: the device prints assertion lines for device-side asserts (710) only"
    # The driver prints its lines at the next synchronization, often after the error was first seen (a launch or
    # cudaGetLastError); and where stderr is a terminal or FIRSTASSERT_STDERR_PIPE=0 they are not read at all.
    unread = ("where stderr is a terminal, or FIRSTASSERT_STDERR_PIPE=0, they are not read; they are on the "
              "process's stderr")
    if report.get("final"):
        return "no assertion line was read (%s)" % unread
    return ("no assertion line read yet (the device prints them at the next synchronization, and the report gets "
            "them then; %s)" % unread)


def _current(report):
    """This process's own report as it stands now: rewritten first with the secondary errors so far."""
    path = report.get("_path")
    if path and path == library.report_path() and library.refresh_report():
        fresh, _ = read_report(path)
        if fresh is not None:
            return fresh
    return report


def show(report=_NEWEST, native_frames=8, file=None):
    """Prints a readable summary of a report: a dict from last_report(), a report file's or directory's path, or
    nothing (the newest report in the directory enable() was given, else $FIRSTASSERT_DIR, else the working
    directory). None, as last_report() returns when a directory has none, says so: no other report is shown."""
    out = file or sys.stdout
    if report is _NEWEST:
        directory = default_dir()
        report = last_report(directory)
        if report is None:
            print("firstassert: no report in %s" % directory, file=out)
            return
    elif report is None:
        print("firstassert: no report to show (None: last_report() found none in the directory it was given)",
              file=out)
        return
    elif not isinstance(report, dict):
        path = os.fspath(report)
        report = last_report(path) if os.path.isdir(path) else read_report(path)[0]
        if report is None:
            print("firstassert: no report at %s" % path, file=out)
            return

    report = _current(report)

    def line(label, text=""):
        print(("  %-12s %s" % (label, text)).rstrip(), file=out)

    def more(text):
        print("  %-12s %s" % ("", text), file=out)

    process = report.get("process") or {}
    print("firstassert report %s (%s, written %s)" % (
        report.get("_path", ""), "final" if report.get("final") else "written at detection; not final",
        report.get("written_at", "?")), file=out)
    line("process", "pid %s on %s, started %s: %s" % (process.get("pid", "?"), process.get("host", "?"),
                                                       process.get("start_time", "?"),
                                                       " ".join(process.get("argv") or [])))
    more(_which_process(process))

    names = cells.names_for(report)
    first = report.get("first_error")
    if first:
        line("first error", first_error_text(first))
    else:
        line("first error", "none")

    culprit = report.get("culprit")
    if culprit:
        line("kernel", kernel_label(culprit))
        if culprit.get("kernel"):
            for part in textwrap.wrap(culprit["kernel"], 100, break_on_hyphens=False) or [""]:
                more(part)
        line("launch", launch_line(culprit))
        line("confidence", "%s: %s" % (culprit.get("confidence", "?"), culprit.get("reason", "")))
        line("device", device_text(report, culprit))
        values = culprit.get("values")
        if values:
            parts = textwrap.wrap(values.get("text", ""), 100) or [""]
            line("values", parts[0])
            for part in parts[1:]:
                more(part)
        hint = culprit.get("hint")
        if hint:
            line("hint", hint.get("title", ""))
            for part in textwrap.wrap(hint.get("text", ""), 100):
                more(part)
        else:
            line("hint", "none for this kernel and error")
        frames = culprit.get("python_stack") or []
        if frames:
            line("called from", cells.where(launching_frame(culprit), names))
            python = _python_lines(frames, names)
            line("Python", python[0])
            for text in python[1:]:
                more(text)
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
        line("kernel", "not named")
        decision = report.get("decision") or {}
        line("confidence", "%s: %s" % (decision.get("confidence", "unknown"),
                                       decision.get("reason", "no launch recorded before the error")))

    others = [c for c in report.get("candidates") or [] if not culprit or c.get("seq") != culprit.get("seq")]
    if others:
        line("candidates", "%d other launch(es) not known to have completed: %s" % (
            len(others), ", ".join(kernel_label(c) for c in others[:5]) + (" ..." if len(others) > 5 else "")))
    for error in report.get("launch_errors") or []:
        line("refused", refused_text(error))
    secondary = report.get("secondary") or {}
    count = secondary.get("count", 0)
    line("secondary", "%s later error(s) caused by the first%s%s" % (
        count, "" if report.get("final") else " so far", ":" if secondary.get("sites") else ""))
    for site in secondary.get("sites") or []:
        more("%s -> %s (%s) x%s" % (site.get("api", "?"), site.get("name", "?"), site.get("code", "?"),
                                    site.get("count", "?")))
