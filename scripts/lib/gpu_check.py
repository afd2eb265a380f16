#!/usr/bin/env python3
"""Real-GPU validation of firstassert: every case of tests/gpu in every mode, each in a fresh process, then the
probes (see scripts/gpu-check, which checks the prerequisites and runs this)."""
import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict

import gpu_check_build as toolkit
import gpu_check_facts as fact_probes
import gpu_check_notebook as notebook
import gpu_check_print as printing
import gpu_check_probes as probes
import gpu_check_schedule as schedule
import gpu_check_shim as shim_files
import gpu_check_table as table
import gpu_check_traces as traces
from gpu_check_judge import Row, judge, marker_of
from gpu_check_run import STOPPING, Outcome, environment, run, stop_all

PREFLIGHT_TIMEOUT = 120
CUPTI_LINE = "firstassert: recording launches through CUPTI at "
NOTEBOOK_ORDER = {"armed": "%load_ext before torch", "late": "%load_ext after torch ran kernels"}


def positive(kind):
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if value <= 0:
            raise argparse.ArgumentTypeError(f"a positive number, not {text!r}")
        return value
    return parse


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line, as every command of the project says a bad argument (scripts/gpu-check prints the usage).
        print(f"scripts/gpu-check: {message} (see --help)", file=sys.stderr)
        sys.exit(2)


def make_parser():
    """The options scripts/gpu-check documents in its header (--help prints that; the suite holds them equal)."""
    parser = Parser(prog="scripts/gpu-check", add_help=False)
    parser.add_argument("--shim")
    parser.add_argument("--wheel")
    parser.add_argument("--jobs", type=positive(int), default=6)
    parser.add_argument("--timeout", type=positive(float), default=90)
    parser.add_argument("--budget", type=positive(float), default=420)
    parser.add_argument("--only", default="")
    parser.add_argument("--modes", default="")
    parser.add_argument("--out", default="")
    parser.add_argument("--arch", default="sm_90")
    parser.add_argument("--no-probes", action="store_true")
    parser.add_argument("--no-schedule", action="store_true")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--pack", nargs="?", const=shim_files.PACK_DIR, default=None)
    return parser


def torch_error():
    """Why this Python cannot run the cases (no torch, or no CUDA device for it), or "". In a child process: the
    harness itself never imports torch."""
    probe = "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=environment(),
                              timeout=PREFLIGHT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{sys.executable} did not import torch and count its devices within {PREFLIGHT_TIMEOUT} s"
    if done.returncode == 0:
        return ""
    if done.returncode == 3:
        return f"{sys.executable} imports torch, but torch sees no CUDA device"
    said = [line for line in done.stderr.splitlines() if line.strip()]
    return f"{sys.executable} cannot import torch ({said[-1] if said else 'exit ' + str(done.returncode)})"


def list_matrix():
    lines = ["cases (tests/gpu; then the torch suite's jobs, tests/torch/jobs):"]
    name_width = max(len(case.name) for case in table.CASES)
    program_width = max(len(case.program) for case in table.CASES)
    for case in table.CASES:
        marker = f"`{marker_of(case)}`"
        frame = f"; Python frame at its {marker} line" if case.python and not case.healthy else ""
        if case.summary:
            frame += ", which the shim's summary names"
        if case.notebook:
            frame = f"; shown in its failing cell at the cell's {marker} line"
        condition = f" ({' or '.join(case.condition)})" if case.condition else ""
        confidence = f"; confidence {' or '.join(case.confidence)}" if case.confidence else ""
        profile = ("; its profile holds kernels; CUPTI handed over (interpose) in the CUPTI modes"
                   if case.profiled else "")
        graph = "; its graph node named, exact in every mode" if case.graph else ""
        cells = f"; {NOTEBOOK_ORDER.get(case.args[0], case.args[0])}" if case.notebook else ""
        modes = f"; modes {', '.join(case.modes)}" if case.modes else ""
        lines.append(f"  {case.name:<{name_width}} {case.program:<{program_width}} expects {case.shows}{condition}"
                     f"{confidence}{frame}{profile}{graph}{cells}{modes}")
    lines.append("modes:")
    for mode in table.MODES:
        settings = " ".join(f"{k}={v}" for k, v in mode.env.items()) or ("no shim" if not mode.shim else "defaults")
        accepted = f"; confidence {' or '.join(mode.confidence)}, backend {mode.backend}" if mode.shim else ""
        lines.append(f"  {mode.name:<10} {settings}{accepted}")
    return lines + schedule.describe()


class Harness:
    """Runs programs for the matrix and the probes under one time budget, saying on stderr what finished."""

    def __init__(self, args, out_dir, lib_path):
        self.args = args
        self.lib_path = lib_path
        self.out_dir = out_dir
        self.deadline = time.monotonic() + args.budget
        self.lock = threading.Lock()
        self.finished = 0
        self.total = 0

    def say(self, text):
        with self.lock:
            print(f"gpu-check: {text}", file=sys.stderr, flush=True)

    def run(self, label, argv, name, shim, extra, timeout=None):
        left = self.deadline - time.monotonic()
        if STOPPING.is_set():
            outcome = Outcome(argv=argv, not_run="gpu-check was stopped (SIGTERM) before it started")
        elif left < 10:
            outcome = Outcome(argv=argv, not_run="the time budget (--budget) was spent")
        else:
            env = environment(self.args.shim if shim else None, extra, self.lib_path)
            try:
                outcome = run(argv, os.path.join(self.out_dir, "runs", name), env,
                              min(timeout or self.args.timeout, left))
            except Exception as error:  # noqa: BLE001  one run's trouble must not cost the table of all the others
                outcome = Outcome(argv=argv, not_run=f"the harness failed to run it ({type(error).__name__}: {error})")
        with self.lock:
            self.finished += 1
            progress = f"[{self.finished}/{self.total}]" if self.total else "[setup]"
        report = f", {len(outcome.reports)} report(s)" if outcome.reports else ""
        self.say(f"{progress} {label}: {outcome.ended}{report} ({outcome.elapsed:.1f} s)")
        return outcome

    def preflight(self, extra=None):
        """(facts, the CUPTI the shim said it took or "", the shim's first line otherwise). Without facts, the facts
        say how the run ended instead."""
        argv = [sys.executable, os.path.join(table.CASE_DIR, table.PREFLIGHT)]
        extra = dict(extra or {}, FIRSTASSERT_LOG="info")
        named = extra.get("FIRSTASSERT_CUPTI")
        name = "preflight" + ("-" + os.path.basename(named) if named else "")
        outcome = self.run("preflight", argv, name, True, extra, PREFLIGHT_TIMEOUT)
        facts = {}
        for line in reversed(outcome.stdout.splitlines()):
            try:
                facts = json.loads(line)
                break
            except ValueError:
                continue
        if not facts:
            tail = [line for line in outcome.stderr.splitlines() if line.strip()][-2:]
            facts = {"preflight": "; ".join([outcome.ended] + outcome.lines("gpu-check: skip: ") + tail)}
        taken, why = cupti_taken(outcome)
        return facts, taken, why

    def choose_cupti(self, facts, taken, why, nvcc):
        """FIRSTASSERT_CUPTI for the Python runs: none when the shim's own search worked, else the first candidate
        (PyTorch's wheels, the toolkit) with which it records. Returns (env, notes)."""
        if taken:
            return {}, [f"the shim's own search found CUPTI at {taken}"]
        if "device" not in facts:
            return {}, [f"not known: the first run did not reach CUDA ({facts.get('preflight', '?')})"]
        notes = [f"the shim did not record through CUPTI ({why})"]
        if "slot is taken" in why:
            return {}, notes  # another CUPTI would be refused the same way
        candidates = list(facts.get("cupti_candidates", []))
        own = toolkit.toolkit_cupti(toolkit.toolkit_root(nvcc)) if nvcc else None
        if own and own not in candidates:
            candidates.append(own)
        for candidate in candidates[:3]:
            _, taken, _ = self.preflight({"FIRSTASSERT_CUPTI": candidate})
            if taken:
                notes.append(f"the Python runs name it in FIRSTASSERT_CUPTI={candidate}")
                return {"FIRSTASSERT_CUPTI": candidate}, notes
        notes.append("no CUPTI candidate worked (" + (", ".join(candidates[:3]) or "none found") + "); the runs go on "
                     "without one, so the CUPTI modes will show another backend")
        return {}, notes

    def build(self, nvcc, case):
        """(path of the nvcc-built program, or None and why)."""
        if nvcc is None:
            return None, "no nvcc (PATH, /usr/local/cuda/bin)"
        output = os.path.join(self.out_dir, "bin", case.slug)
        os.makedirs(os.path.dirname(output), exist_ok=True)
        error = toolkit.build(nvcc, case.source, output, list(case.nvcc_flags), self.args.arch)
        self.say(f"[setup] built {case.slug}" if not error else f"[setup] {error}")
        return (None, error) if error else (output, "")


def cupti_taken(outcome):
    """(the CUPTI library the shim said it records with, at FIRSTASSERT_LOG=info; or "" and the shim's first line)."""
    said = outcome.lines("firstassert: ", "stderr")
    for line in said:
        if line.startswith(CUPTI_LINE):
            return line[len(CUPTI_LINE):].split(" (activated by ")[0], ""
    return "", said[0] if said else f"the run ended with {outcome.ended} and the shim said nothing"


def case_argv(case, binaries):
    """(argv, or None and why it cannot run)."""
    if case.python:
        return [sys.executable, case.source, *case.args], ""
    path, why = binaries.get(case.slug, (None, "not built"))
    return ([path, *case.args], "") if path else (None, why)


def main(argv=None, cases_table=table.CASES, modes_table=table.MODES, python_error=torch_error,
         schedule_step=schedule.Step()):
    """The suite runs this with the simulator's cases and schedule program (tests/gpu/gpu_check_test.py), and no
    torch to ask for."""
    args = make_parser().parse_args(argv)
    if args.list:
        print("\n".join(list_matrix()))
        return 0
    try:
        cases = table.find(args.only, cases_table, "case")
        modes = table.find(args.modes, modes_table, "mode")
        if args.pack is not None:
            shim = shim_files.find_or_build(args.shim)
            names = shim_files.pack(shim, args.pack)
            say = lambda text: print(f"gpu-check: {text}", file=sys.stderr, flush=True)  # noqa: E731
            names += notebook.pack(shim, args.pack, say) + traces.pack(args.pack, say)
            print(f"packed into {args.pack}: {', '.join(names)}; carry that directory to the GPU machine, where "
                  f"scripts/gpu-check finds it (or pass --shim {os.path.join(args.pack, 'libfirstassert.so')})")
            return 0
        if args.wheel:
            if args.shim:
                raise ValueError("--shim and --wheel name two shims; give one")
            args.shim = shim_files.from_wheel(args.wheel)
        args.shim = shim_files.find_or_build(args.shim)
        lib_path = shim_files.library_path_for(args.shim)
    except (ValueError, shim_files.ShimError) as error:
        print(f"scripts/gpu-check: {error}", file=sys.stderr)
        return 2
    why_not = python_error()
    if why_not:
        print(f"scripts/gpu-check: {why_not}; nothing was run", file=sys.stderr)
        return 2
    out_dir = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="gpu-check-")
    os.makedirs(out_dir, exist_ok=True)
    harness = Harness(args, out_dir, lib_path)
    nvcc = toolkit.find_nvcc()
    toolkit_cupti = toolkit.toolkit_cupti(toolkit.toolkit_root(nvcc)) if nvcc else None

    # Set-up, all at once: the first look at the machine (under the shim), and the nvcc builds.
    to_build = {c.slug: c for c in cases if not c.python}
    if not args.no_schedule and not schedule_step.program:
        to_build[schedule.PROGRAM.slug] = schedule.PROGRAM
    if not args.no_probes:
        to_build.update({c.slug: c for c in table.PROBE_PROGRAMS.values()})
        to_build.update({c.slug: c for c in traces.traced_builds().values()})
    tracer = traces.find_tracer(args.shim)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        first_look = pool.submit(harness.preflight)
        built = {slug: pool.submit(harness.build, nvcc, case) for slug, case in to_build.items()}
        facts, taken, why = first_look.result()
        binaries = {slug: future.result() for slug, future in built.items()}
    cupti_env, cupti_notes = harness.choose_cupti(facts, taken, why, nvcc)
    notebook_env, notebook_why = {}, ""
    if any(case.notebook for case in cases):
        notebook_env, notebook_why = notebook.prepare(sys.executable, args.shim, out_dir, environment())
        kernel = ("unpacked from the packed wheels" if "GPU_CHECK_NOTEBOOK_SITE" in notebook_env else
                  "of this Python")
        harness.say(f"[setup] notebook cases: {notebook_why or 'a Jupyter kernel ' + kernel}")

    # The matrix and the probes, most telling first: if the budget runs out, what is left undone is the least.
    jobs = []  # (key, label, argv or None, why not, name, shim, env)
    for mode in modes:
        for case in cases:
            if not case.runs_in(mode):
                continue
            argv_, why_not = case_argv(case, binaries)
            extra = dict(cupti_env if case.python else {}, **mode.env)
            if case.toolkit_cupti and toolkit_cupti:
                extra["FIRSTASSERT_CUPTI"] = toolkit_cupti
            preload = mode.shim
            if case.notebook:
                # The kernel loads the shim itself (%load_ext firstassert): named, never preloaded.
                if notebook_why:
                    argv_, why_not = None, notebook_why
                extra.update(notebook_env, **({"FIRSTASSERT_LIB": args.shim} if mode.shim else {}))
                preload = False
            jobs.append(((case.name, mode.name), f"{case.name} / {mode.name}", argv_, why_not,
                         f"{case.slug}.{mode.name.replace('=', '_')}", preload, extra))
        if mode.name == "default" and not args.no_probes:
            jobs += probe_jobs(binaries, toolkit_cupti, cupti_env)
            jobs += traces.jobs(binaries, tracer, toolkit_cupti, out_dir)
    if "default" not in [mode.name for mode in modes] and not args.no_probes:
        jobs += probe_jobs(binaries, toolkit_cupti, cupti_env)
        jobs += traces.jobs(binaries, tracer, toolkit_cupti, out_dir)
    timeouts = {}
    if not args.no_schedule:
        schedule_jobs, timeouts = scheduled(schedule_step, binaries)
        jobs += schedule_jobs
    harness.total, harness.finished = len(jobs), 0
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = {}
        for key, label, argv_, why_not, name, shim, extra in jobs:
            if argv_ is None:
                results[key] = Outcome(not_run=why_not)
                continue
            futures[pool.submit(harness.run, label, argv_, name, shim, extra, timeouts.get(key))] = key
        for future in concurrent.futures.as_completed(futures):
            results[futures[future]] = future.result()

    rows = []
    for case in cases:
        bare = results.get((case.name, "bare"))
        for mode in modes:
            if case.runs_in(mode):
                rows.append(safe_judge(case, mode, results[(case.name, mode.name)], bare))
    lines = header(facts, args, nvcc, cupti_notes, lib_path) + [""] + printing.table(rows) + ["", printing.counts(rows)]
    notes = printing.failure_notes(rows)
    if notes:
        lines += ["", "why the failing rows failed:"] + notes
    if not args.no_probes:
        try:
            lines += [""] + probe_sections(results, rows, cases, facts, args.shim)
        except Exception as error:  # noqa: BLE001  the probes inform; the table above must still be printed
            lines += ["", f"probes: their answers could not be put together ({type(error).__name__}: {error}); "
                          f"their runs are under {os.path.join(out_dir, 'runs')}"]
        try:
            lines += [""] + traces.section(results, out_dir, tracer, toolkit_cupti)
        except Exception as error:  # noqa: BLE001  as above: the table and the probes are printed whatever this does
            lines += ["", f"callback traces: not put together ({type(error).__name__}: {error}); their runs are "
                          f"under {os.path.join(out_dir, 'runs')}"]
    verdicts = []
    if not args.no_schedule:
        verdicts = [safe_schedule_judge(seed, mode, results[("schedule", seed.name, mode.name)])
                    for seed, mode in schedule.planned_runs(schedule_step.seeds, schedule_step.modes)]
        lines += [""] + schedule.section(verdicts)
    lines += ["", f"the runs' output and reports: {out_dir}"]
    print("\n".join(lines), flush=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump({"facts": facts, "cupti": cupti_notes, "rows": [asdict(r) | {"verdict": r.verdict} for r in rows],
                   "schedule": [asdict(v) | {"result": v.result} for v in verdicts], "text": lines}, f, indent=1)
    rows_passed = rows and all(row.result == "PASS" for row in rows)
    return 0 if rows_passed and (args.no_schedule or schedule.passed(verdicts)) else 1


def scheduled(step, binaries):
    """The schedule property's jobs (as main's), and their timeouts by key."""
    path, why = (step.program, "") if step.program else binaries.get(schedule.PROGRAM.slug, (None, "not built"))
    jobs, timeouts = [], {}
    for seed, mode in schedule.planned_runs(step.seeds, step.modes):
        key = ("schedule", seed.name, mode.name)
        jobs.append((key, f"schedule seed {seed.name} / {mode.name}", seed.argv(path) if path else None, why,
                     schedule.run_name(seed, mode), True, dict(mode.env)))
        timeouts[key] = schedule.timeout_for(seed)
    return jobs, timeouts


def safe_schedule_judge(seed, mode, outcome):
    """schedule.judge(), or a failed verdict saying why the run could not be judged."""
    try:
        return schedule.judge(seed, mode, outcome)
    except Exception as error:  # noqa: BLE001  one run's odd report must not cost the table
        return schedule.Verdict(seed.name, mode.name,
                                failed=[f"{outcome.ended}; not judged ({type(error).__name__}: {error})"])


def safe_judge(case, mode, outcome, bare):
    """judge(), or a FAIL row saying why a report it did not expect could not be judged (the table is printed
    whatever one run left)."""
    try:
        return judge(case, mode, outcome, bare)
    except Exception as error:  # noqa: BLE001
        return Row(case.name, mode.name, case.shows, result="FAIL", failed=["judge"],
                   notes=[f"{outcome.ended}; its outcome could not be judged ({type(error).__name__}: {error})"])


def probe_jobs(binaries, toolkit_cupti, cupti_env):
    jobs = []
    for slug in ("probe_cupti", "probe_breadcrumbs", "probe_graph_breadcrumbs", "probe_facts"):
        path, why = binaries.get(slug, (None, "not built"))
        args = []
        if slug == "probe_cupti":
            if toolkit_cupti is None:
                path, why = None, why if path is None else "the toolkit has no CUPTI library"
            args = [toolkit_cupti]
        if slug == "probe_facts":
            args = [toolkit_cupti or traces.DEFAULT_CUPTI]  # only probe 8 needs CUPTI; it says when it has none
        jobs.append(((slug,), slug, [path, *args] if path else None, why, slug, False, {}))
    script = os.path.join(table.CASE_DIR, table.PROFILER_PROBE)
    for when in ("early", "late"):
        for shim in (False, True):
            name = f"profiler_{when}" + (".shim" if shim else ".bare")
            jobs.append((("profiler", when, shim), name, [sys.executable, script, when], "", name, shim,
                         dict(cupti_env)))
    return jobs


def header(facts, args, nvcc, cupti_notes, lib_path):
    device = facts.get("device", f"an unknown device (preflight: {facts.get('preflight', '?')})")
    return [
        f"firstassert gpu-check on {device} (capability {facts.get('capability', '?')}), driver CUDA "
        f"{facts.get('driver', '?')}; torch {facts.get('torch', '?')} (CUDA {facts.get('torch_cuda', '?')}), "
        f"Triton {facts.get('triton') or 'absent'}, Python {facts.get('python', '?')}",
        f"shim: {args.shim}" + "".join(f"; {part}" for part in (shim_files.describe(args.shim),) if part) +
        (f" (its libraries from {lib_path}, on LD_LIBRARY_PATH)" if lib_path else ""),
        f"nvcc: {nvcc} {toolkit.nvcc_version(nvcc)}, building for {args.arch}" if nvcc else
        "nvcc: none (the nvcc cases, probes 1-3 and 6-9 and the callback traces are skipped)",
    ] + [f"CUPTI: {note}" for note in cupti_notes]


def answered(answer):
    """A probe's lines, or one saying why they could not be put together: one probe's trouble must not cost the
    others' answers, which a GPU session may not get again soon."""
    try:
        return answer()
    except Exception as error:  # noqa: BLE001
        return [not_put_together(error)]


def not_put_together(error):
    return f"not put together ({type(error).__name__}: {error}); the runs are under --out/runs/"


def probe_sections(results, rows, cases, facts, shim):
    default_runs = [(c, results[(c.name, "default")]) for c in cases
                    if not c.healthy and (c.name, "default") in results]
    healthy = {c.name for c in cases if c.healthy}
    reported = [r for r in rows if r.mode != "bare" and r.case not in healthy and r.result != "SKIP"
                and "report" not in r.failed]
    nll_loss = next(c for c in table.CASES if c.name == "nll_loss")
    graphs = {c.name for c in cases if c.graph}
    graph_rows = [r for r in reported if r.case in graphs]
    profiler_runs = {key[1:]: outcome for key, outcome in results.items() if key[0] == "profiler"}
    libcuda = facts.get("loaded", {}).get("libcuda")
    answers = [
        ("1. does a runtime launch fire the nested driver callback?",
         lambda: probes.program_lines(results.get(("probe_cupti",)), "probe1: ")),
        ("2. do CUDA calls made inside a callback re-enter callbacks?",
         lambda: probes.program_lines(results.get(("probe_cupti",)), "probe2: ")),
        ("3. do breadcrumb writes read back correctly after a device assert?",
         lambda: probes.breadcrumb_probe(results.get(("probe_breadcrumbs",)), default_runs)),
        ("4. which libc functions does libcuda print the assertion line with?",
         lambda: probes.libc_probe(probes.find_libcuda(libcuda), shim, reported)),
        ("5. can the shim coexist with torch.profiler (nll_loss case)?",
         lambda: probes.profiler_probe(profiler_runs, nll_loss)),
        ("6. do graph breadcrumbs (a leaf write after each captured kernel) name the node that asserted in a replay?",
         lambda: probes.graph_breadcrumb_probe(results.get(("probe_graph_breadcrumbs",)), graph_rows)),
    ]
    lines = ["probes (facts the design rests on):"]
    for title, answer in answers:
        lines += printing.section(title, answered(answer))
    try:
        lines += fact_probes.sections(results.get(("probe_facts",)))
    except Exception as error:  # noqa: BLE001  as in answered(), for the three sections probe_facts answers
        lines += printing.section("7-9. pinned memory, CUPTI's cost, a write in a capture", [not_put_together(error)])
    return lines


if __name__ == "__main__":
    # Stopped from outside (timeout(1) at the end of a lease, say): the runs in flight are killed, the rest are not
    # started, and the table of what did run is still printed, its stopped rows SKIP.
    signal.signal(signal.SIGTERM, lambda signum, frame: stop_all())
    sys.exit(main())
