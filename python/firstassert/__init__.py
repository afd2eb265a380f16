"""firstassert: names the first CUDA kernel whose device-side assert fired.

In a job:       firstassert run -- python train.py    (or LD_PRELOAD=$(firstassert lib) python train.py)
In a notebook:  %load_ext firstassert                  # or: import firstassert as fa; fa.enable(report_dir=...)
                import torch
                ...                                    # the cell that dies of "device-side assert triggered" shows
                                                       # the kernel that asserted; later failing cells say secondary
After the runtime restart the report survives:
                %load_ext firstassert
                %firstassert show                      # or fa.show(fa.last_report("/content/fa"))

library_path()  this installation's libfirstassert.so (`firstassert lib`: the same, as LD_PRELOAD can carry it)
enable()        records in this interpreter from now on (in IPython, the failing cells show the findings)
disable()       stops recording and gives back CUPTI (for a profiler started later) and fd 2
last_report()   the newest report of a directory; show() prints one for a person
python -m firstassert ...  is the firstassert command (run, show, merge, triage)
"""

import functools as _functools

from . import library as _library
from . import notebook as _notebook
from .library import cli_path, disable, find_library, library_path, report_dir, report_path
from .notebook import load_ipython_extension, unload_ipython_extension
from .reports import last_report
from .show import show


@_functools.wraps(_library.enable)
def enable(report_dir=None, lib=None):
    enabled = _library.enable(report_dir=report_dir, lib=lib)
    if enabled:
        _notebook.attach(_notebook.cells._shell())  # in IPython: the failing cells show the findings
    return enabled


__all__ = ["library_path", "enable", "disable", "last_report", "show", "report_path", "report_dir",
           "find_library", "cli_path", "load_ipython_extension", "unload_ipython_extension"]
