"""A firstassert report for a person.

The report is rendered in one place, the firstassert command (`firstassert show`, src/cli/report_view.cpp), which
must work where there is no Python at all (a cluster node reading a report post-mortem) and resolves native frames
there with the binaries at hand. Here it is asked for that text, or for its rows (`firstassert show --rows`) for the
notebook's cells; what only this process knows is given to it or added here: the names of this kernel's notebook
cells (`--cells`), and whether the report is this process's own.
"""

import json
import os
import socket
import subprocess
import sys
import tempfile

from . import cells, library
from .reports import default_dir, last_report, read_report

_NEWEST = object()  # show()'s default: the newest report; show(None), as from last_report() finding none, is not
_TIMEOUT_S = 60


class ShowError(Exception):
    """The firstassert command could not render a report: one line saying why."""


def _child_environment():
    """This environment without the shim in LD_PRELOAD: the command reads a report and must not record itself."""
    env = dict(os.environ)
    kept = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split() if library.LIBRARY not in p]
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def _run_show(path, names, *options):
    """stdout of `firstassert show OPTIONS --cells - PATH`, given the cells' names on stdin."""
    program = library.cli_path()
    if program is None:
        raise ShowError(library.NO_CLI)
    try:
        done = subprocess.run([program, "show", *options, "--cells", "-", os.fspath(path)], input=json.dumps(names),
                              capture_output=True, text=True, errors="replace", env=_child_environment(),
                              timeout=_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ShowError("cannot run %s: %s" % (program, error)) from None
    if done.returncode != 0:
        raise ShowError(done.stderr.strip() or "%s show exited with status %d" % (program, done.returncode))
    return done.stdout


def rows(path, names):
    """The report's rows as `firstassert show --rows` gives them: [{"key", "label", "lines"}], in order."""
    try:
        return json.loads(_run_show(path, names, "--rows"))["rows"]
    except (ValueError, KeyError, TypeError) as error:
        raise ShowError("firstassert show --rows gave no rows (%s)" % error) from None


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


def which_process(process):
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


def _current(report):
    """This process's own report as it stands now: rewritten first with the secondary errors so far."""
    path = report.get("_path")
    if path and path == library.report_path() and library.refresh_report():
        fresh, _ = read_report(path)
        if fresh is not None:
            return fresh
    return report


def _with_process_line(text, process):
    """The command's text with a line under "process" saying whose the report is."""
    lines = text.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("process ")), None)
    if at is not None:
        lines.insert(at + 1, " " * 13 + which_process(process))
    return "\n".join(lines) + "\n"


def _text_of(report):
    """The report as `firstassert show` prints it, with this kernel's cell names and whose it is."""
    names = cells.names_for(report)
    path = report.get("_path")
    if path:
        return _with_process_line(_run_show(path, names), report.get("process") or {})
    with tempfile.TemporaryDirectory(prefix="firstassert-show-") as directory:  # a dict that came from no file
        path = os.path.join(directory, "report.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f)
        title, _, text = _run_show(path, names).partition("\n")
        return _with_process_line("firstassert report (a dict, from no file)\n" + text, report.get("process") or {})


def show(report=_NEWEST, file=None):
    """Prints a readable summary of a report: a dict from last_report(), a report file's or directory's path, or
    nothing (the newest report in the directory enable() was given, else $FIRSTASSERT_DIR, else the working
    directory). None, as last_report() returns when a directory has none, says so: no other report is shown. The
    text is `firstassert show`'s, with the cells of this notebook kernel named and a line saying whose report it is."""
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
    try:
        print(_text_of(_current(report)), end="", file=out)
    except ShowError as error:
        print("firstassert: cannot show the report: %s" % error, file=out)
