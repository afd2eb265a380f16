"""Notebook cells named as the user knows them: `Cell In[4], line 2`, as IPython's traceback says, instead of the file
name the kernel compiled the cell under (/tmp/ipykernel_23482/3664598579.py).

In the kernel that ran the cell, IPython knows the names. For a report read after the restart, the extension keeps
them beside the report, in <report>.cells (JSON: file name -> {"cell": "In[4]", "source": the cell's code}), written
when a cell fails; the name does not match firstassert-*.json, so it is never taken for a report. `firstassert show`
(src/cli/cell_names.cpp) names the frames with them, from that file or given on its stdin.
"""

import json
import linecache
import os
import sys

SUFFIX = ".cells"


def _shell():
    """The running IPython shell, or None (IPython is never imported here: a plain script has none)."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    return get() if get else None


def live_name(filename):
    """'In[4]' for a cell this kernel ran, else None."""
    shell = _shell()
    compiler = getattr(shell, "compile", None)
    if compiler is None or not filename:
        return None
    try:
        named = compiler.format_code_name(filename)  # IPython 8+: ("Cell", "In[4]") for a cell's file
    except Exception:
        named = None
    if named and named[0] == "Cell":
        return named[1]
    number = getattr(compiler, "_filename_map", {}).get(filename)  # older IPython 8 releases
    return "In[%s]" % number if number is not None else None


def _frames(report):
    launches = [report.get("culprit") or {}] + list(report.get("candidates") or [])
    for launch in launches:
        for frame in launch.get("python_stack") or []:
            yield frame


def names_for(report):
    """The cells of a report's Python frames: {file name: {"cell": "In[4]", "source": code}}, from the running kernel
    and from the report's .cells file."""
    names = load(report)
    for frame in _frames(report):
        filename = frame.get("file")
        if filename in names:
            continue
        cell = live_name(filename)
        if cell:
            names[filename] = {"cell": cell, "source": "".join(linecache.getlines(filename))}
    return names


def load(report):
    path = report.get("_path")
    if not path:
        return {}
    try:
        with open(path + SUFFIX, encoding="utf-8") as f:
            names = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in names.items() if isinstance(v, dict) and isinstance(v.get("cell"), str)}


def save(report_path, report):
    """Writes the cells of the report's frames beside it, for the kernel that reads it after the restart. Returns the
    names; a directory that refuses the file costs only the names after the restart."""
    names = names_for(dict(report, _path=report_path))
    if not names:
        return names
    temporary = "%s%s.%d.tmp" % (report_path, SUFFIX, os.getpid())
    try:
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump(names, f)
        os.replace(temporary, report_path + SUFFIX)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
    return names
