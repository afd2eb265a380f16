"""From a run's outcome to a row of scripts/gpu-check's table: what the report says, and which checks failed.

A failing case passes in a mode when: the job saw its device-side assert and ended as it does without the shim; a
report was written, its first error is 710 (cudaErrorAssert) and its culprit is the expected kernel, with a
confidence the mode allows, recorded by the mode's backend; the device's assertion line was read; the Python frames
name the case's `# FAILING_OP` line (Python cases; a graph case's `# CAPTURED_OP` line, see below); and the report was
rewritten at exit. The healthy loop passes when it leaves no report, prints exactly what it prints without the shim,
and the shim says nothing. Without the shim ("bare"), a case passes when it provokes its assert (or, healthy, exits 0)
and leaves no report.

A profiled case (profiler_late) must also, in every mode, bare included, have said that its torch.profiler profile
held kernel events, more than 0 (check "profiler"); with the shim, the backend it is judged against and the
tool.cupti_handed_over it must report (check "handed_over") are the case's in that mode (Case.tool_in).

A graph case (graph_replay) must also have its culprit named as a node of the replayed graph, "exact" in every mode
(Case.confidence_in): a graph launch that lists the graph's kernel nodes (check "graph"); a graph_node pointing at
the first of them that runs the expected kernel, those before it completed, it and those after it not, with the
culprit's launch configuration the node's (check "node"); captured at the case's `# CAPTURED_OP` line (check
"captured_at"), which its Python frames name too (check "python": they are the capture's, not the replay's).

A notebook case (notebook_armed, notebook_late) is judged on what its cells showed, as a user sees them, in place of
the Python frames: `%load_ext firstassert` said it is on (check "load"); the failing cell showed the first CUDA error
with the expected kernel, launched at the cell's `# FAILING_OP` line in the cell's terms (`Cell In[3], line 1`), and
the device's assertion (check "cell"); the cell after it said its error is secondary and named the failing cell
(check "secondary_cell"). Without the shim no cell may show a firstassert line (check "cells").

A case may ask more of its culprit (the torch suite's jobs do): its device assertion's condition (check
"condition"), a confidence its evidence allows, within the mode's (Case.confidence_in; check "confidence"), and the
shim's summary on stderr naming its marked line, `job.py:L in` (check "summary"; a graph node's, with where it was
captured from). A job that lets its error go uncaught ends as Python does (exit 1), its traceback on stderr saying
device-side assert.
"""
import json
import os
import re
import sys
from dataclasses import dataclass, field

from gpu_check_table import CASE_DIR

sys.path.insert(0, CASE_DIR)
import gpucase  # noqa: E402  (the case programs' exit codes and markers: one definition for both sides)

REPORT_SCHEMA = "firstassert/1"
ASSERT_CODE = 710  # cudaErrorAssert, CUDA_ERROR_ASSERT
GRAPH_LAUNCH = "(CUDA graph)"  # what a culprit that is a graph launch naming no kernel shows (a shim before issue 19)
GRAPH_LAUNCH_APIS = ("cudaGraphLaunch", "cuGraphLaunch")
FIRST_CELL = "firstassert: the first CUDA error"  # the title of what the first failing cell shows


@dataclass
class Row:
    case: str
    mode: str
    expected: str
    reported: str = "-"
    confidence: str = "-"
    python_frame: str = "-"
    secondary: str = "-"
    backend: str = "-"
    result: str = ""             # PASS, FAIL or SKIP
    failed: list = field(default_factory=list)  # names of the checks that failed
    skipped: str = ""            # why it was not run, or could not run here
    notes: list = field(default_factory=list)   # what a person needs to see why

    @property
    def verdict(self):
        if self.result == "FAIL":
            return "FAIL: " + ", ".join(self.failed)
        if self.result == "SKIP":
            return "SKIP: " + self.skipped
        return self.result


def kernel_name(launch):
    """The launch's kernel as the report's short name gives it (unqualified, without template arguments or
    parameters: the shim's own summary's words)."""
    return launch.get("short_name") or launch.get("kernel") or launch.get("mangled") or "?"


def failing_line(source, marker=gpucase.FAILING_OP):
    """The number of the source line that ends with marker (`# FAILING_OP` unless told), or 0."""
    with open(source, encoding="utf-8") as f:
        return gpucase.marked_line(f.read(), marker)


def matched_alternative(launch, expect):
    """Which expected alternative the launch object (a culprit, a node of culprit.graph_nodes) runs, or None."""
    if not launch:
        return None
    names = f"{launch.get('kernel') or ''}\n{launch.get('mangled') or ''}".lower()
    return next((alt for alt in expect if alt.lower() in names), None)


def culprit_text(culprit, matched):
    if not culprit:
        return "no culprit"
    if culprit.get("graph") and not culprit.get("kernel"):
        return GRAPH_LAUNCH
    name = kernel_name(culprit)
    if matched and matched.lower() not in name.lower():
        name += f" [{matched}]"  # the match is in the template arguments (a lambda of the op, say)
    node = culprit.get("graph_node")
    if isinstance(node, dict):
        name += f" (node {node.get('node')} of {node.get('nodes')})"
    return name


def names_line(where, source, line):
    """Whether where ("graph_replay.py:22", its file a base name or a path, perhaps " in f" after it) is source's
    line."""
    said = re.fullmatch(r"(.*):(\d+)(?: in .*)?", where) if isinstance(where, str) else None
    return bool(said) and int(said.group(2)) == line and os.path.basename(said.group(1)) == os.path.basename(source)


def python_frame(culprit, source, marker=gpucase.FAILING_OP):
    """(what to show, whether a frame names the source's line marked with marker)."""
    frames = (culprit or {}).get("python_stack") or []
    line = failing_line(source, marker)
    target = os.path.realpath(source)
    in_case = [f for f in frames if isinstance(f, dict) and os.path.realpath(str(f.get("file", ""))) == target]
    for f in in_case:
        if f.get("line") == line:
            return f"{os.path.basename(source)}:{line}", True
    if not frames:
        return "-", False
    shown = (in_case or frames)[0]
    return f"{os.path.basename(str(shown.get('file', '?')))}:{shown.get('line', '?')} (not {line})", False


def saw_assert(case, outcome):
    """The job saw its device-side assert: a case program printed that it caught it (its own words, whatever its exit
    status); a job that lets the error go uncaught shows it in its traceback, on stderr."""
    if case.uncaught:
        return gpucase.ASSERT_TEXT in without_firstassert_lines(outcome.stderr)
    return any(gpucase.ASSERT_TEXT in line for line in outcome.lines("gpu-check: caught"))


def assert_exit(case):
    """The exit status of a run that met its assert: a case program's own (gpucase), or Python's for an uncaught
    error."""
    return gpucase.EXIT_UNCAUGHT if case.uncaught else gpucase.EXIT_ASSERT


def marker_of(case):
    """What ends the case's line that the culprit's Python frames must name: a graph's capture line, where the
    case does not say."""
    return case.marker or (gpucase.CAPTURED_OP if case.graph else gpucase.FAILING_OP)


def skip_reason(outcome):
    if outcome.not_run:
        return outcome.not_run
    if outcome.returncode == gpucase.EXIT_SKIP:
        said = outcome.lines("gpu-check: skip: ")
        return said[0][len("gpu-check: skip: "):] if said else "the program skipped itself"
    return ""


def firstassert_lines(outcome, limit=3):
    return outcome.lines("firstassert: ", "stderr")[:limit]


def judge(case, mode, outcome, bare=None):
    """The row of case in mode; bare is the same case's run without the shim (the reference), when there is one."""
    row = Row(case.name, mode.name, case.shows)
    row.skipped = skip_reason(outcome)
    if row.skipped:
        row.result = "SKIP"
        return row

    def check(name, ok, note=""):
        if not ok:
            row.failed.append(name)
            if note:
                row.notes.append(note)

    row.notes.append(f"{outcome.ended} after {outcome.elapsed:.1f} s")
    if outcome.timed_out:
        check("timeout", False)
    if case.healthy:
        judge_healthy(row, mode, outcome, bare, check)
    elif not mode.shim:
        check("exit", outcome.returncode == assert_exit(case) and saw_assert(case, outcome),
              "the case did not end with its assert: " + describe_end(outcome))
        check("report", not outcome.reports, "a report without the shim: " + ", ".join(outcome.reports))
        if case.notebook:
            loud = [c["role"] for c in notebook_cells(outcome).values() if "firstassert" in c.get("shown", "")]
            check("cells", not loud, f"without the shim, the {', '.join(loud)} cell(s) showed firstassert lines")
    else:
        judge_failing(row, case, mode, outcome, bare, check)
    if case.profiled:
        judge_profile(row, case, outcome, check)
    row.result = "FAIL" if row.failed else "PASS"
    if row.failed:
        row.notes += [f"stderr: {line}" for line in firstassert_lines(outcome)]
        tail = [line for line in outcome.stderr.splitlines() if line.strip()][-3:]
        row.notes += [f"stderr tail: {line}" for line in tail if not line.startswith("firstassert: ")]
    return row


def describe_end(outcome):
    said = outcome.lines("gpu-check: caught") + outcome.lines("gpu-check: no error")
    return f"{outcome.ended}" + (f"; it said: {said[0]}" if said else "; it never reached its error handling")


def profiler_kernels(outcome, prefix=gpucase.PROFILER_KERNELS):
    """The number of kernel events the case said its profile held, on its line that starts with prefix, or None when
    it said none."""
    for line in outcome.lines(prefix):
        try:
            return int(line[len(prefix):].strip())
        except ValueError:
            continue
    return None


def judge_profile(row, case, outcome, check):
    """The profile the case took around healthy kernels held some: then torch.profiler records CUDA kernels in this
    mode (without the shim: at all)."""
    kernels = profiler_kernels(outcome, case.profile_line or gpucase.PROFILER_KERNELS)
    if kernels is None:
        failed = outcome.lines(gpucase.PROFILER_FAILED)
        check("profiler", False, ("the profiler failed: " + failed[0][len(gpucase.PROFILER_FAILED):]) if failed else
              ("the profile's kernel count was never printed: " + describe_end(outcome)))
    elif kernels > 0:
        row.notes.append(f"the profile held {kernels} kernel events")
    else:
        check("profiler", False, "the profile held 0 kernel events: torch.profiler recorded no CUDA kernel")


def judge_healthy(row, mode, outcome, bare, check):
    check("exit", outcome.returncode == 0, "the healthy loop did not exit 0: " + outcome.ended)
    check("report", not outcome.reports, "reports written: " + ", ".join(os.path.basename(p) for p in outcome.reports))
    row.reported = "none" if not outcome.reports else "a report"
    if not mode.shim:
        return
    if bare is None or bare.returncode != 0:
        check("reference", False, "no healthy run without the shim to compare with")
        return
    # The program's own output byte for byte; and the shim quiet, as it is in a healthy run at the default settings.
    said = outcome.lines("firstassert: ", "stderr")
    for name, mine, reference in (("stdout", outcome.stdout, bare.stdout),
                                  ("stderr", without_firstassert_lines(outcome.stderr), bare.stderr)):
        check(name, mine == reference,
              f"{name} differs from the run without the shim: " + first_difference(mine, reference))
    check("quiet", not said, f"the shim said {len(said)} line(s), the first: {said[0] if said else ''}")


def without_firstassert_lines(text):
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith("firstassert: "))


def first_difference(text, reference):
    lines, expected = text.splitlines(), reference.splitlines()
    for number, (line, wanted) in enumerate(zip(lines, expected), 1):
        if line != wanted:
            return f"line {number} is {line[:100]!r}, without the shim {wanted[:100]!r}"
    return f"{len(lines)} lines, without the shim {len(expected)}"


def judge_failing(row, case, mode, outcome, bare, check):
    same_as_bare = bare is not None and not bare.not_run and outcome.returncode == bare.returncode
    check("exit", saw_assert(case, outcome) and (outcome.returncode == assert_exit(case) or same_as_bare),
          "the job did not end as without the shim: " + describe_end(outcome) +
          (f" (without the shim: {bare.ended})" if bare is not None else ""))
    report = outcome.report
    if not isinstance(report, dict) or report.get("schema") != REPORT_SCHEMA:
        check("report", False, outcome.report_error or ("no report written" if not outcome.reports
                                                        else "the report is not of schema " + REPORT_SCHEMA))
        return
    culprit = report.get("culprit") if isinstance(report.get("culprit"), dict) else None
    first_error = report.get("first_error") if isinstance(report.get("first_error"), dict) else {}
    matched = matched_alternative(culprit, case.expect)
    row.reported = culprit_text(culprit, matched)
    row.confidence = str((culprit or {}).get("confidence", "-"))
    tool = report.get("tool") if isinstance(report.get("tool"), dict) else {}
    row.backend = str(tool.get("backend", "-"))
    backend, handed_over = case.tool_in(mode)
    if case.may_keep_cupti and handed_over and tool.get("cupti_handed_over") is False:
        backend, handed_over = mode.backend, False  # its profiler never subscribed: the shim kept CUPTI
    secondary = report.get("secondary") if isinstance(report.get("secondary"), dict) else {}
    row.secondary = str(secondary.get("count", "?")) + ("" if report.get("final") else " (not final)")

    check("710", first_error.get("code") == ASSERT_CODE,
          f"first error: {first_error.get('name')} ({first_error.get('code')}) at {first_error.get('api')}")
    check("culprit", matched is not None,
          f"culprit: {(culprit or {}).get('kernel') or (culprit or {}).get('mangled')}; expected one of "
          f"{', '.join(case.expect)}")
    confidence = case.confidence_in(mode)
    check("confidence", row.confidence in confidence,
          f"confidence {row.confidence} ({(culprit or {}).get('reason', '')}); this mode allows "
          f"{' or '.join(confidence)}" + (" for a graph node" if case.graph else "") +
          (f" for this case ({case.why})" if case.confidence else ""))
    check("backend", row.backend == backend, f"recorded by {row.backend}, not {backend}" +
          (" (a profiler subscribed to CUPTI after the shim)" if backend != mode.backend else ""))
    if handed_over is not None:
        said = json.dumps(tool["cupti_handed_over"]) if "cupti_handed_over" in tool else "absent (an older shim)"
        check("handed_over", tool.get("cupti_handed_over") is handed_over,
              f"tool.cupti_handed_over is {said}, not {json.dumps(handed_over)} (" +
              ("this mode records through CUPTI, which the shim hands over when the profiler subscribes" if handed_over
               else "in this mode firstassert never held CUPTI") + ")")
    check("message", bool(report.get("device_messages")), "no device assertion line was read from stderr")
    if case.condition:
        message = (culprit or {}).get("device_message")
        condition = str((message if isinstance(message, dict) else {}).get("condition") or "")
        check("condition", any(wanted in condition for wanted in case.condition),
              f"the culprit's device assertion condition is {condition!r}" + ("" if condition else " (none matched)") +
              f"; expected one holding {' or '.join(repr(c) for c in case.condition)}")
    if case.notebook:
        judge_cells(row, case, outcome, check)
    elif case.python:
        # A graph node's frames are those of its capture: the replay launched the whole graph, and the capture line
        # is the op whose input was bad.
        marker = marker_of(case)
        row.python_frame, ok = python_frame(culprit, case.source, marker)
        check("python", ok, f"the culprit's Python frames do not name {os.path.basename(case.source)}:"
                            f"{failing_line(case.source, marker)} ({len((culprit or {}).get('python_stack') or [])} "
                            f"frames)")
        if case.summary:
            judge_summary(case, outcome, check)
    else:
        row.python_frame = "n/a"
    if case.graph:
        judge_graph_node(case, culprit or {}, check)
    if outcome.returncode is not None and outcome.returncode >= 0:
        check("final", bool(report.get("final")), "the report was not rewritten at exit")


def judge_summary(case, outcome, check):
    """The shim's summary on stderr, what a user reads first, names the case's own marked line (`job.py:L in f`),
    not a line of torch; a graph node's, the line that captured it."""
    line = failing_line(case.source, marker_of(case))
    where = f"{os.path.basename(case.source)}:{line} in"
    said = outcome.lines("firstassert: ", "stderr")
    check("summary", where in outcome.stderr and (not case.graph or "captured from" in outcome.stderr),
          f"stderr does not name {where}" + (" as where the node was captured from" if case.graph else "") +
          (f"; the shim's first line: {said[0]}" if said else "; the shim said nothing"))


def notebook_cells(outcome):
    """The cells a notebook case ran, by role, as it printed them (tests/gpu/notebook_case.py)."""
    cells = {}
    for line in outcome.lines(gpucase.NOTEBOOK_CELL):
        try:
            cell = json.loads(line[len(gpucase.NOTEBOOK_CELL):])
        except ValueError:
            continue
        if isinstance(cell, dict) and isinstance(cell.get("role"), str):
            cells[cell["role"]] = cell
    return cells


def unwrapped(text):
    """firstassert's rows in a cell, their wrapped continuation lines joined again (notebook.render_text wraps)."""
    return re.sub(r"\n {15}(?=\S)", " ", text)


def cell_rows(text):
    """{label: value} of firstassert's rows in a cell ("  %-12s %s", as notebook.render_text writes them)."""
    return {line[2:14].strip(): line[15:].strip() for line in text.splitlines()
            if line.startswith("  ") and line[2:3].strip() and line[2:14].strip()}


def judge_cells(row, case, outcome, check):
    cells = notebook_cells(outcome)
    load, failing, secondary = (cells.get(role) or {} for role in ("load", "failing", "secondary"))
    check("load", load.get("error") is None and "firstassert: on" in load.get("shown", ""),
          "%load_ext firstassert " + (f"failed: {load['error']}" if load.get("error") else
                                      f"did not say it is on; it showed {load.get('shown', 'nothing')!r}"[:300]))
    shown = unwrapped(failing.get("shown", ""))
    rows = cell_rows(shown.split(FIRST_CELL, 1)[1]) if FIRST_CELL in shown else {}
    where = failing.get("launched_at", "?")
    at = re.match(r"Cell In\[\d+\], line \d+", rows.get("launched at", ""))
    row.python_frame = at.group(0) if at else "-"
    problems = []
    if not rows:
        problems.append(f"the failing cell showed no {FIRST_CELL!r}: " + (repr(shown[-200:]) if shown else "nothing"))
    else:
        if matched_alternative({"kernel": rows.get("kernel", "")}, case.expect) is None:
            problems.append(f"its kernel row is {rows.get('kernel')!r}, not one of {', '.join(case.expect)}")
        if row.python_frame != where:
            problems.append(f"its launched at row is {rows.get('launched at')!r}, not {where}")
        device = rows.get("device", "")
        if "failed" not in device or "none matched" in device:
            problems.append(f"its device row is {device!r}, not the culprit's assertion line")
    check("cell", not problems, "; ".join(problems))
    cell_name = where.split(",")[0].replace("Cell ", "")
    said = unwrapped(secondary.get("shown", ""))
    check("secondary_cell", "firstassert: a secondary CUDA error" in said and f"lost in cell {cell_name}" in said,
          f"the cell after it did not say it is secondary to {cell_name}: " + (repr(said[:200]) if said else "nothing"))


def judge_graph_node(case, culprit, check):
    """The culprit is the node of the replayed graph that asserted. A replay stops at its failing node, so it is the
    first node that runs the expected kernel (the case captures one), and the graph breadcrumbs must say: the nodes
    before it completed, it and the nodes after it (which wait for it) did not. Those after it also show that the
    breadcrumbs were reset before this replay: the healthy replays before it had set every one (a job whose asserting
    kernel is the graph's last, Case.captures_after false, cannot show that)."""
    nodes = culprit.get("graph_nodes")
    listed = (isinstance(nodes, list) and bool(nodes) and all(isinstance(n, dict) for n in nodes) and
              [n.get("node") for n in nodes] == list(range(1, len(nodes) + 1)))
    check("graph", culprit.get("graph") is True and culprit.get("api") in GRAPH_LAUNCH_APIS and listed,
          f"culprit.graph is {json.dumps(culprit.get('graph'))}, api {culprit.get('api')}, graph_nodes " +
          (f"numbered {[n.get('node') if isinstance(n, dict) else n for n in nodes]}" if isinstance(nodes, list)
           else json.dumps(nodes)) + "; expected a graph launch listing the graph's kernel nodes 1..n")
    if not listed:
        return
    node = culprit.get("graph_node")
    if not isinstance(node, dict):
        check("node", False, f"culprit.graph_node is {json.dumps(node)}; expected the node that asserted")
        return
    number = node.get("node")
    first = next((n["node"] for n in nodes if matched_alternative(n, case.expect)), None)
    problems = []
    if node.get("nodes") != len(nodes):
        problems.append(f"graph_node.nodes is {node.get('nodes')}, but graph_nodes lists {len(nodes)}")
    if first is None:
        problems.append(f"no node of graph_nodes runs {' or '.join(case.expect)}")
    elif number != first:
        problems.append(f"graph_node.node is {number}, but node {first} is the first to run "
                        f"{matched_alternative(nodes[first - 1], case.expect)}")
    else:
        named = nodes[number - 1]
        if number == 1 or (case.captures_after and number == len(nodes)):
            problems.append(f"node {number} of {len(nodes)}: the case must capture kernels before " +
                            ("and after it" if case.captures_after else "it"))
        states = [n.get("state") for n in nodes]
        wanted = ["completed"] * (number - 1) + ["not completed"] * (len(nodes) - number + 1)
        if states != wanted:
            problems.append(f"the nodes' states are {states}, expected {wanted}")
        if node.get("state") != named.get("state") or node.get("captured_at") != named.get("captured_at"):
            problems.append(f"graph_node {json.dumps(node)} differs from graph_nodes[{number - 1}]")
        launch = {key: culprit.get(key) for key in ("grid", "block", "shared_mem")}
        if launch != {key: named.get(key) for key in launch}:
            problems.append(f"the culprit's launch configuration {json.dumps(launch)} is not node {number}'s")
    check("node", not problems, "; ".join(problems))
    line = failing_line(case.source, marker_of(case))
    check("captured_at", names_line(node.get("captured_at"), case.source, line),
          f"graph_node.captured_at is {json.dumps(node.get('captured_at'))}, not "
          f"{os.path.basename(case.source)}:{line} (its {marker_of(case)} line)")
