"""Reading firstassert reports: the newest of a directory, skipping what is not one."""

import glob
import json
import os

from . import library
from ._output import say

SCHEMA_PREFIX = "firstassert/"


def default_dir():
    """The directory enable() was given, else $FIRSTASSERT_DIR, else the working directory."""
    return library.report_dir() or library.environment_dir()


def read_report(path):
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
    """The newest firstassert-*.json in dir (default: the directory enable() was given, else $FIRSTASSERT_DIR, else
    the working directory), parsed. Only that directory is read.

    A file that is not a report (partly written, foreign) is skipped with one line on stderr. None when there is
    no report. The dict gets "_path", the file it was read from.
    """
    directory = os.fspath(dir) if dir is not None else default_dir()
    entries = []
    for path in glob.glob(os.path.join(glob.escape(directory), "firstassert-*.json")):
        try:
            entries.append((os.stat(path).st_mtime_ns, path))
        except OSError:
            continue
    for _, path in sorted(entries, reverse=True):
        report, why = read_report(path)
        if report is not None:
            return report
        say("skipped %s: %s" % (path, why))
    return None
