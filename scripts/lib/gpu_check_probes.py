"""The probes scripts/gpu-check prints after its table: facts the design rests on, settled on the real driver. Each
returns its lines of text; they inform and do not change the exit status.

  1  does a runtime launch fire the nested driver callback          tests/gpu/probe_cupti.cu
  2  do CUDA calls made inside a callback re-enter callbacks         tests/gpu/probe_cupti.cu
  3  do breadcrumb writes read back correctly after a device assert  tests/gpu/probe_breadcrumbs.cu, the reports
  4  which libc functions libcuda prints the assertion line with     its dynamic imports against the shim's exports
  5  can the shim coexist with torch.profiler                        tests/gpu/profiler_probe.py
  6  do graph breadcrumbs name the node that asserted in a replay    tests/gpu/probe_graph_breadcrumbs.cu, the rows

Probe 5's late order, with the profiler stopped before the assert, is also judged, as the profiler_late case of the
table; the probe still tells the early order, and what a profile running when the assert fires does.
"""
import os
import subprocess

import elf_symbols
from gpu_check_judge import gpucase, kernel_name, matched_alternative, saw_assert

# libc functions a library can print a line with; the stderr tap (src/stub/stderr_tap.cpp) defines some of them.
OUTPUT_FUNCTIONS = (
    "fprintf", "vfprintf", "printf", "vprintf", "fwrite", "write", "fputs", "puts", "writev", "__fprintf_chk",
    "__vfprintf_chk", "__printf_chk", "__vprintf_chk", "dprintf", "vdprintf", "__dprintf_chk", "__vdprintf_chk",
    "fputc", "putc", "putchar", "fwrite_unlocked", "fputs_unlocked", "pwrite", "pwrite64", "syscall",
)


def program_lines(outcome, prefix):
    """The probe program's own lines that start with prefix (without it), or why there are none."""
    if outcome is None:
        return ["not run"]
    if outcome.not_run:
        return ["not run: " + outcome.not_run]
    lines = [line[len(prefix):] for line in outcome.lines(prefix)]
    if outcome.returncode != 0 or not lines:
        said = outcome.lines("probe: ")
        lines.append(f"the probe ended with {outcome.ended}" + (f": {said[0][len('probe: '):]}" if said else ""))
        lines += [f"stderr: {line}" for line in outcome.stderr.splitlines() if line.strip()][-2:]
    return lines


def breadcrumb_probe(outcome, default_runs):
    """default_runs: (case, outcome) of the failing cases in the default mode, whose reports say how the culprit was
    decided."""
    lines = program_lines(outcome, "probe3: ")
    decided = [o.report["culprit"].get("reason", "") for _, o in default_runs
               if isinstance(o.report, dict) and isinstance(o.report.get("culprit"), dict)]
    by_crumbs = sum(1 for reason in decided if reason.startswith("stream breadcrumbs"))
    lines.append(f"the shim's default-mode reports: {by_crumbs} of {len(decided)} culprits decided by stream "
                 "breadcrumbs")
    return lines


def graph_breadcrumb_probe(outcome, graph_rows):
    """graph_rows: the rows of the graph cases in the modes with the shim, which say whether their reports named the
    node that asserted (checks culprit, graph, node)."""
    lines = program_lines(outcome, "probe6: ")
    named = sum(1 for row in graph_rows if not {"culprit", "graph", "node"} & set(row.failed))
    lines.append(f"the shim's reports of the graph cases: the asserting node named in {named} of {len(graph_rows)}")
    return lines


def find_libcuda(loaded=None):
    """The driver library this machine's programs load: the one a CUDA process had mapped, else ldconfig's."""
    if loaded and os.path.exists(loaded):
        return loaded
    try:
        listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        listing = ""
    for line in listing.splitlines():
        if line.strip().startswith("libcuda.so.1 ") and "x86-64" in line:
            return os.path.realpath(line.split("=>")[-1].strip())
    for path in ("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"):
        if os.path.exists(path):
            return os.path.realpath(path)
    return None


def libc_probe(libcuda, shim, runs_with_reports):
    """runs_with_reports: (row) of the shim's runs of failing cases that left a report."""
    if libcuda is None:
        return ["no libcuda.so.1 found (ldconfig -p, /usr/lib/x86_64-linux-gnu)"]
    try:
        _, imports = elf_symbols.dynamic_symbols(libcuda)
        tapped, _ = elf_symbols.dynamic_symbols(shim)
    except (OSError, elf_symbols.ElfError) as error:
        return [f"cannot read the dynamic symbols: {error}"]
    used = [name for name in OUTPUT_FUNCTIONS if name in imports]
    interposed = [name for name in OUTPUT_FUNCTIONS if name in tapped]
    missed = [name for name in used if name not in interposed]
    with_message = sum(1 for row in runs_with_reports if "message" not in row.failed)
    return [
        f"driver: {libcuda}",
        f"output functions it imports: {', '.join(used) or 'none'}" +
        (" (and the stderr stream)" if "stderr" in imports else ""),
        f"the shim defines: {', '.join(interposed) or 'none'}",
        f"imported but not interposed: {', '.join(missed) or 'none'}" +
        (" (an assertion line printed through them is not read)" if missed else ""),
        f"assertion lines read by the shim: in {with_message} of {len(runs_with_reports)} reports of the matrix",
    ]


def profiler_run_text(outcome, case, with_shim):
    """One run of profiler_probe.py, which provokes case's assert (it catches it, as a case program does)."""
    if outcome is None or outcome.not_run:
        return "not run" + (": " + outcome.not_run if outcome is not None else "")
    if outcome.returncode == gpucase.EXIT_SKIP:
        return "skipped: " + "; ".join(line[len("gpu-check: skip: "):] for line in outcome.lines("gpu-check: skip: "))
    kernels = outcome.lines(gpucase.PROFILER_KERNELS)
    stop = outcome.lines("gpu-check: profiler stop after the assert: ")
    parts = [outcome.ended + (" (saw the assert)" if saw_assert(case, outcome) else " (did NOT see the assert)"),
             f"profiler recorded {kernels[0].rsplit(':', 1)[1].strip() if kernels else '?'} kernels",
             "stop after the assert: " + (stop[0].split(": ", 2)[-1] if stop else "never reached")]
    report = outcome.report
    if isinstance(report, dict):
        culprit = report.get("culprit") if isinstance(report.get("culprit"), dict) else {}
        name = kernel_name(culprit)
        right = matched_alternative(culprit, case.expect) is not None
        parts.append(f"report: {name} ({'right' if right else 'WRONG'}), {culprit.get('confidence', '?')}, "
                     f"backend {(report.get('tool') or {}).get('backend', '?')}")
    elif with_shim:
        parts.append("no report" + (f" ({outcome.report_error})" if outcome.report_error else ""))
    said = outcome.lines("firstassert: ", "stderr")
    said = [line for line in said if "CUPTI" in line or "interposition" in line]
    if said:
        parts.append("the shim said: " + said[0][len("firstassert: "):])
    return "; ".join(parts)


def profiler_probe(runs, case):
    """runs: {(when, with_shim): outcome} for when in early, late; case: the table's case whose assert the probe
    provokes (nll_loss)."""
    lines = []
    for when, words in (("early", "profiler started before CUDA"), ("late", "profiler started after CUDA")):
        lines.append(f"{words}, without the shim: {profiler_run_text(runs.get((when, False)), case, False)}")
        lines.append(f"{words}, with the shim:    {profiler_run_text(runs.get((when, True)), case, True)}")
    return lines
