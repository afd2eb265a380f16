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

Values checks (firstassert.values): with FIRSTASSERT_VALUES=check, enable(values="check"), `%firstassert values
check` or `firstassert run --values=check`, the covered CUDA ops (cross_entropy, embedding, indexing, gather/scatter,
binary_cross_entropy, multinomial, one_hot, ctc_loss) check their values before they run: a bad one raises
PyTorch's own error type with the value and where it is, instead of a device-side assert. With values "probe"
they keep copies of those values without waiting for the GPU instead, and the report names the bad value of the
call whose kernel asserted (its culprit's "values"; also on stderr and in the failing cell).
"""

from . import compiled_nodes as _compiled_nodes
from . import library as _library
from . import notebook as _notebook
from . import values as _values
from .library import cli_path, disable, find_library, library_path, report_dir, report_path
from .notebook import load_ipython_extension, unload_ipython_extension
from .reports import last_report
from .show import show

_compiled_nodes.install(_values._hook.when_imported)  # compiled graphs keep the model's lines (compiled_nodes.py)
_values.from_environment()  # FIRSTASSERT_VALUES: checks from when torch is imported (never imports it itself)


def enable(report_dir=None, lib=None, values=None):
    """Records CUDA launches in this interpreter from now on (library.enable: report_dir, lib, the return value) and,
    in IPython, makes the failing cells show the findings.

    values: the values mode, 'off', 'check' or 'probe' (firstassert.values; None: as FIRSTASSERT_VALUES said, else
    off). It is set whether or not recording could start."""
    if values is not None:
        _values.set_mode(values, "enable(values=%r)" % (values,))
    enabled = _library.enable(report_dir=report_dir, lib=lib)
    if enabled:
        _notebook.attach(_notebook.cells._shell())  # in IPython: the failing cells show the findings
    return enabled


__all__ = ["library_path", "enable", "disable", "last_report", "show", "report_path", "report_dir",
           "find_library", "cli_path", "load_ipython_extension", "unload_ipython_extension", "values"]
