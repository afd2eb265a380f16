"""firstassert in IPython and Jupyter: `%load_ext firstassert` (or firstassert.enable() in a running kernel).

After each cell that fails with a CUDA error, the cell itself shows what firstassert knows, whatever the kernel does
with C-level output: for the first one, the kernel whose device assert fired, its launch, the launching line in the
user's terms (`Cell In[4], line 2`; where the failing launch is one of a few, each of them), the device's assertion
text, the hint and the report's path; for every later one, that it is secondary, which cell and kernel lost the
context, and that only a restart brings CUDA back. Plain text, and HTML where the front end renders it.

%firstassert             what firstassert is doing in this kernel
%firstassert show [PATH] a report for a person (no PATH: the newest of the report directory, as after a restart)
%firstassert values MODE values checks: check (a covered CUDA op given a bad value raises PyTorch's error with the
                         value, before its kernel can assert, so the kernel needs no restart), probe (no wait: the
                         failing cell shows the value the culprit's call was given) or off; no MODE: which
"""

import functools
import html
import re
import shlex
import sys
import textwrap

from . import cells, library, values
from ._output import say
from .reports import default_dir, read_report
from .show import ShowError, rows, show

RESTART = ("every CUDA call in this kernel fails until it restarts (Jupyter: Kernel > Restart; "
           "Colab: Runtime > Restart session)")
# What a CUDA error says when it reaches Python: PyTorch's and Triton's RuntimeError/AcceleratorError texts, the
# driver's and the runtime's error names, cuBLAS's and cuDNN's statuses.
_CUDA_ERROR = re.compile(r"CUDA error|CUDA driver error|CUDA_ERROR_|cudaError|device-side assert|CUBLAS_STATUS_|"
                         r"CUDNN_STATUS_|AcceleratorError|CudaError")
USAGE = "usage: %firstassert [show [PATH] | values [off|check|probe]]"


def is_cuda_error(error):
    return bool(_CUDA_ERROR.search("%s: %s" % (type(error).__name__, error)))


class CellWatch:
    """What the kernel has shown so far: the first failing cell takes the culprit, later ones are secondary."""

    def __init__(self):
        self.first = None  # {"cell": "In[3]", "kernel": name, "where": launching line} once shown

    def after_cell(self, result):
        try:
            self._after_cell(result)
        except Exception as error:  # the user's cell comes first: ours may only add a line
            say("could not show the report in this cell: %s: %s" % (type(error).__name__, error))

    def _after_cell(self, result):
        error = getattr(result, "error_in_exec", None)
        if error is None or not is_cuda_error(error):
            return
        if values.mode() == "probe":
            try:
                values.publish()  # the culprit's values into the report before it is read
            except Exception as problem:
                say("values probe: could not read the probed values: %s: %s" % (type(problem).__name__, problem))
        path = library.refresh_report()
        if path is None:
            return  # no error firstassert records (out of memory, a Python-side check): nothing to add
        report, why = read_report(path)
        if report is None:
            say("the report %s is unreadable: %s" % (path, why))
            return
        names = cells.save(path, report)
        try:
            shown = {row["key"]: row for row in rows(path, names)}
        except ShowError as problem:
            say("could not show the report %s in this cell: %s" % (path, problem))
            return
        if not (report.get("first_error") or {}).get("sticky"):
            # A launch the API refused (a bad configuration): it failed alone, and CUDA still works.
            _display(picked(shown, REFUSED_ROWS, path), "a kernel launch was refused",
                     "CUDA still works in this kernel: fix the launch and run the cell again")
            return
        if self.first is None:
            self.first = {"cell": "In[%s]" % getattr(result, "execution_count", "?"),
                          "kernel": first_line(shown, "kernel") if report.get("culprit") else None,
                          "where": first_line(shown, "launched_at").partition("  ->  ")[0] or None}
            _display(picked(shown, FIRST_ERROR_ROWS, path), "the first CUDA error of this kernel", restart_advice(report))
        else:
            _display(secondary_rows(report, self.first, path), "a secondary CUDA error", restart_advice(report))


# The rows of `firstassert show` a failing cell shows: what failed, where it was launched, what to check. A small
# window's row names each launch that can have failed, with the user's line: which of them to check is the reader's.
# A compiled kernel adds what it fused and the model's lines (`compiled`, `model`) and what to rerun for the value.
FIRST_ERROR_ROWS = ("first_error", "gpu", "kernel", "confidence", "window", "launch", "graph", "launched_at", "compiled",
                    "model", "device", "values", "values_advice", "hint")
REFUSED_ROWS = ("refused", "launched_at", "hint")


def first_line(shown, key):
    lines = (shown.get(key) or {}).get("lines") or [""]
    return lines[0]


def picked(shown, keys, path):
    """[(label, lines)]: the rows of `keys` the report has, in that order, then the report's path."""
    return [(shown[key]["label"], shown[key]["lines"]) for key in keys if key in shown] + [("report", [path])]


def restart_advice(report):
    """What a restart brings back. A device-side assert loses its own GPU's context (CUDA documents 710 as losing
    "the context"): where the job used several GPUs, the others may still work; other sticky errors lose them all."""
    devices = report.get("devices") or []
    failing = devices[0] if devices and devices[0].get("failed_first") else {}
    if len(devices) > 1 and failing.get("ordinal") is not None and (report.get("first_error") or {}).get("code") == 710:
        return ("every CUDA call on cuda:%d fails until this kernel restarts (Jupyter: Kernel > Restart; Colab: "
                "Runtime > Restart session)" % failing["ordinal"])
    return RESTART


def _failed_since(report):
    """The other GPUs whose own calls failed after the first error (the report's devices)."""
    return [d for d in (report.get("devices") or [])[1:]
            if (d.get("after_first_error") or {}).get("state") == "failed"]


def secondary_rows(report, first, path):
    lost = "kernel %s" % first["kernel"] if first.get("kernel") else "the first error"
    if first.get("where"):
        lost += ", launched at %s" % first["where"]
    count = (report.get("secondary") or {}).get("count", 0)
    others = _failed_since(report)
    if others:
        # Another GPU failed since: this cell's error may be that GPU's own, not the first one's aftermath.
        head = ("this cell's error came after the first one (cell %s: %s); another GPU has failed since, so it may "
                "be that GPU's own" % (first["cell"], lost))
    else:
        head = "this cell's error follows the first one: the CUDA context was lost in cell %s (%s)" % (first["cell"], lost)
    rows = [("secondary", [head]), ("so far", ["%s later error(s) caused by the first" % count])]
    for other in others:
        error = (other.get("after_first_error") or {}).get("first_error") or {}
        rows.append(("other gpu", ["cuda:%s failed too: %s (%s) at %s" % (
            other.get("ordinal", "?"), error.get("name", "?"), error.get("code", "?"), error.get("api", "?"))]))
    return rows + [("report", [path])]


def render_text(rows, title, footer):
    lines = ["firstassert: " + title]
    for label, values in rows:
        # Wrapped as `firstassert show` wraps, but a path or a source line is never broken.
        parts = [part for value in values
                 for part in textwrap.wrap(str(value), 100, break_long_words=False, break_on_hyphens=False) or [""]]
        lines.append(("  %-12s %s" % (label, parts[0])).rstrip())
        lines += ["  %-12s %s" % ("", part) for part in parts[1:]]
    lines.append("  " + footer[0].upper() + footer[1:] + ".")
    return "\n".join(lines)


def render_html(rows, title, footer):
    body = "".join('<tr><th style="text-align:left;padding-right:1em;vertical-align:top">%s</th>'
                   '<td style="text-align:left;font-family:monospace;white-space:pre-wrap">%s</td></tr>'
                   % (html.escape(label), html.escape("\n".join(str(v) for v in values))) for label, values in rows)
    return ('<div class="firstassert" style="border-left:4px solid #c00;padding-left:0.6em">'
            "<p><b>firstassert</b>: %s</p><table>%s</table><p>%s.</p></div>" % (
                html.escape(title), body, html.escape(footer[0].upper() + footer[1:])))


def _display(rows, title, footer):
    text = render_text(rows, title, footer)
    try:
        from IPython.display import display
    except ImportError:
        print(text, file=sys.stderr)
        return
    display({"text/plain": text, "text/html": render_html(rows, title, footer)}, raw=True)


def magic(line):
    """%firstassert [show [PATH]]"""
    try:
        words = shlex.split(line)
    except ValueError as error:
        say("%s; %s" % (error, USAGE))
        return
    if not words:
        path = library.report_path()
        print("firstassert: %s; reports go to %s%s; values %s" % (
            "on in this kernel" if library.report_dir() else "not enabled in this kernel (%load_ext firstassert)",
            default_dir(), "; this kernel's report: " + path if path else "", values.mode()))
        return
    if words[0] == "show" and len(words) <= 2:
        show(words[1]) if len(words) == 2 else show()
        return
    if words[0] == "values" and len(words) <= 2:
        values_magic(words[1] if len(words) == 2 else None)
        return
    say("unknown arguments %r; %s" % (line, USAGE))


def values_magic(mode):
    """%firstassert values [MODE]: sets the values mode, or says which it is."""
    if mode is not None:
        values.set_mode(mode, "%%firstassert values %s" % mode)
    now = values.mode()
    if now == "check":
        print("firstassert: values check: a covered CUDA op (cross_entropy, embedding, indexing, gather/scatter, "
              "binary_cross_entropy, multinomial, one_hot, ctc_loss) given a bad value raises PyTorch's error with "
              "the value, before its kernel runs: CUDA keeps working")
    elif now == "probe":
        print("firstassert: values probe: the covered CUDA ops (cross_entropy, embedding, indexing, gather/scatter, "
              "binary_cross_entropy, multinomial, one_hot, ctc_loss) keep a copy of the values their checks read, "
              "without waiting for the GPU; the cell whose kernel asserts shows the culprit's bad value")
    else:
        print("firstassert: values off (%firstassert values check, or probe, turns them on)")


_watch = None


def _finishing_first(do_shutdown):
    """The kernel's do_shutdown, with the report made final first: once the kernel has been asked to shut down (or
    restart), its front end kills it if it takes long to exit (jupyter_client: SIGTERM at half its
    shutdown_wait_time, 5 s by default), before the shim's exit handler could rewrite the report."""
    @functools.wraps(do_shutdown)
    def finishing(restart):
        try:
            library.finish_report()
        except Exception as error:  # the shutdown comes first: ours may only add a line
            say("could not finish the report at shutdown: %s: %s" % (type(error).__name__, error))
        return do_shutdown(restart)
    finishing.firstassert_wrapped = do_shutdown
    return finishing


def attach(shell):
    """Shows firstassert's findings in the cells of this IPython shell (once per shell)."""
    global _watch
    if shell is None or _watch is not None:
        return
    _watch = CellWatch()
    shell.events.register("post_run_cell", _watch.after_cell)
    shell.register_magic_function(magic, "line", "firstassert")
    kernel = getattr(shell, "kernel", None)  # ipykernel's; a terminal IPython has none, and exits by itself
    if kernel is not None and callable(getattr(kernel, "do_shutdown", None)):
        kernel.do_shutdown = _finishing_first(kernel.do_shutdown)


def detach(shell):
    global _watch
    if _watch is not None:
        try:
            shell.events.unregister("post_run_cell", _watch.after_cell)
        except ValueError:
            pass
        _watch = None
    kernel = getattr(shell, "kernel", None)
    wrapped = getattr(getattr(kernel, "do_shutdown", None), "firstassert_wrapped", None)
    if wrapped is not None:
        kernel.do_shutdown = wrapped
    library.disable()


def load_ipython_extension(shell):
    """%load_ext firstassert: enables recording in this kernel and shows the findings in the failing cells."""
    if library.enable():
        attach(shell)
        print("firstassert: on; a cell that fails with a CUDA error will show the first one; reports go to %s"
              % default_dir())


def unload_ipython_extension(shell):
    detach(shell)
