"""firstassert: names the first CUDA kernel whose device-side assert fired.

In a job:       firstassert run -- python train.py    (or LD_PRELOAD=$(firstassert lib) python train.py)
In a notebook:  import firstassert as fa
                fa.enable(report_dir="/content/fa")     # True: recording, or armed for when CUDA starts
                import torch
                ...                                     # the cell that dies of "device-side assert triggered"
After the runtime restart the report survives:
                import firstassert as fa
                fa.show(fa.last_report("/content/fa"))

library_path()  this installation's libfirstassert.so (`firstassert lib`: the same, as LD_PRELOAD can carry it)
enable()        records in this interpreter from now on
last_report()   the newest report of a directory; show() prints one for a person
python -m firstassert ...  is the firstassert command (run, show, merge, triage)
"""

from .library import cli_path, enable, find_library, library_path, report_path
from .reports import last_report
from .show import show

__all__ = ["library_path", "enable", "last_report", "show", "report_path", "find_library", "cli_path"]
