#!/usr/bin/env python3
"""Cost per kernel launch of each shim configuration, against the same simulator loop without the shim.

The headline, printed first, is the shim's own instructions per op as PyTorch shapes an eager CUDA op (launch_loop
--ops: two cudaGetDevice, the launch, cudaGetLastError; a stand-in until real torch counts them), then per non-launch
call (--calls: cudaGetDevice, cudaGetLastError and cudaStreamQuery in turn), then per launch, on the launching
thread, counted by
valgrind's callgrind (thread 1 of --separate-threads=yes): the instructions run in the stub (libfirstassert.so), the
recorder (libfirstassert_recorder.so) and libunwind, and apart from them what the shim makes the simulator (libcuda,
libcudart, libcupti, libsimkernels) and libc etc. (libc, ld.so, libstdc++, libm, libgcc_s) run on its behalf: their
instructions with the shim minus the bare loop's; "other +" is the rest (the loop program, Python). Each
configuration runs once with --callgrind-launches L timed launches and once with 2L, and the counts are the
differences divided by the launches between the two runs, so start-up and exit cancel out. The shim's own counts
repeat exactly from run to run, so one pair of runs is enough; libc's do only on an idle machine (malloc's and the
wake-ups' work follows how far the simulated device's thread lags behind the launches, which other load changes: by
hundreds of instructions a launch, up to ~1,400 seen, with a load of 4 on 2 cores). The targets (printed, not
fatal): an op at most 1,200 own instructions and a non-launch call at most 40 (defaults); record only at most 400 own
instructions a launch, defaults at most 1,000, and Python frames at most 150
more (the Python loop's "+ Python frames" minus "stacks 32 + breadcrumbs"). Without valgrind on PATH the headline is
skipped; --no-callgrind skips it, --only-callgrind prints only it.

The time rows run the same launch loop (tests/bench/launch_loop.cpp), which times itself after a warm-up:
the CPU time of the launching thread (where the shim works; the target is about it) and the wall time (which also
holds the simulated device's thread hand-offs, so it is noisier and says less about the shim);
runs are interleaved round by round so that drift on a noisy machine hits every configuration alike, and each
figure is the median over rounds. The sync rows compare FIRSTASSERT_SYNC=all with a loop that synchronizes after
every launch by itself, the stand-in for CUDA_LAUNCH_BLOCKING=1. With --python-loop, the Python rows run the same
loop from Python (python_launch_loop.py: 9 calls deep, through ctypes.CDLL, which releases the GIL as PyTorch
does), with Python frames off and on, in instructions and in time. --python-versions 3.12,3.13 adds the Python
loop's instruction table under each of those CPython versions, where an interpreter of it is found (python3.N on
PATH, or pyenv's): from 3.12 the shim reuses whole Python stacks under a code watcher, so the figure differs.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
import callgrind_counts  # noqa: E402  (scripts/lib: shared with scripts/gpu-bench)

TARGET_ADDED_NS = 1000.0  # record + stacks depth 32 + breadcrumbs
# The shim's own instructions per launch (stub + recorder + libunwind), by row of the C loop; and what Python frames
# may add to them in the Python loop.
TARGET_OWN_INSTRUCTIONS = {"record only": 400, "defaults": 1000}
TARGET_PYTHON_FRAMES_INSTRUCTIONS = 150

QUIET = {"FIRSTASSERT_BREADCRUMBS": "0", "FIRSTASSERT_STACK_DEPTH": "0", "FIRSTASSERT_PYTHON": "0"}

# (name, shim?, environment, loop flags); the first of each group is what the rest are compared with.
CONFIGURATIONS = [
    ("bare", False, {}, []),
    ("record only", True, QUIET, []),
    ("record + stacks 16", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="16"), []),
    ("record + stacks 32", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="32"), []),
    ("record + stacks 64", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="64"), []),
    ("record + breadcrumbs", True, dict(QUIET, FIRSTASSERT_BREADCRUMBS="1"), []),
    ("stacks 32 + breadcrumbs", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="32", FIRSTASSERT_BREADCRUMBS="1"), []),
    ("  same, interposition", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="32", FIRSTASSERT_BREADCRUMBS="1",
                                         FIRSTASSERT_BACKEND="interpose"), []),
    ("defaults", True, {}, []),
]
PYTHON_CONFIGURATIONS = [
    ("python loop, bare", False, {}, []),
    ("stacks 32 + breadcrumbs", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="32", FIRSTASSERT_BREADCRUMBS="1"), []),
    ("  + Python frames", True, dict(QUIET, FIRSTASSERT_STACK_DEPTH="32", FIRSTASSERT_BREADCRUMBS="1",
                                     FIRSTASSERT_PYTHON="1"), []),
]
# One op as PyTorch shapes an eager CUDA op (launch_loop --ops: two cudaGetDevice, the launch, cudaGetLastError),
# and the non-launch calls alone (--calls: cudaGetDevice, cudaGetLastError, cudaStreamQuery per iteration).
OP_CONFIGURATIONS = [
    ("ops, bare", False, {}, ["--ops"]),
    ("ops, defaults", True, {}, ["--ops"]),
    ("  same, interposition", True, {"FIRSTASSERT_BACKEND": "interpose"}, ["--ops"]),
]
CALL_CONFIGURATIONS = [
    ("calls, bare", False, {}, ["--calls"]),
    ("calls, defaults", True, {}, ["--calls"]),
    ("  same, interposition", True, {"FIRSTASSERT_BACKEND": "interpose"}, ["--calls"]),
]
CALLS_PER_ITERATION = 3
TARGET_OP_INSTRUCTIONS = {"ops, defaults": 1200}
TARGET_CALL_INSTRUCTIONS = {"calls, defaults": 40}
SYNC_CONFIGURATIONS = [
    ("bare, sync after each launch", False, {}, ["--sync-each"]),
    ("FIRSTASSERT_SYNC=all", True, {"FIRSTASSERT_SYNC": "all"}, []),
]


def environment(args, shim, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")
           and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    env.update(env_extra)
    env["FIRSTASSERT_DIR"] = args.report_dir
    if shim:
        env["LD_PRELOAD"] = args.shim
    return env


def run_once(args, shim, env_extra, flags, program):
    env = environment(args, shim, env_extra)
    completed = subprocess.run(program + [str(args.launches)] + flags, env=env, capture_output=True, text=True)
    figures = dict(line.split(": ", 1) for line in completed.stdout.splitlines() if ": " in line)
    if completed.returncode == 0 and "cpu_ns_per_launch" in figures and "wall_ns_per_launch" in figures:
        return float(figures["cpu_ns_per_launch"]), float(figures["wall_ns_per_launch"])
    raise RuntimeError(f"launch_loop failed (status {completed.returncode}) with {env_extra}: "
                       f"{completed.stderr.strip()}")


def measure(args, configurations, program=None):
    program = program or [args.loop]
    samples = {name: [] for name, *_ in configurations}
    for _ in range(args.rounds):
        for name, shim, env_extra, flags in configurations:
            samples[name].append(run_once(args, shim, env_extra, flags, program))
    return {name: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
            for name, values in samples.items()}


def print_table(title, medians, baseline, target_row=None):
    print(title)
    print(f"  {'configuration':<30} {'cpu ns':>9} {'added':>8} {'wall ns':>9} {'added':>8} {'wall ratio':>10}")
    base_cpu, base_wall = medians[baseline]
    for name, (cpu, wall) in medians.items():
        note = ""
        if name == target_row:
            note = f"  target <= {TARGET_ADDED_NS:.0f} cpu ns added: {'met' if cpu - base_cpu <= TARGET_ADDED_NS else 'MISSED'}"
        print(f"  {name:<30} {cpu:>9.1f} {cpu - base_cpu:>8.1f} {wall:>9.1f} {wall - base_wall:>8.1f} "
              f"{wall / base_wall:>10.2f}{note}")


# Which column an object's instructions go to, by the start of its file name; the first match wins, so the stub's
# exact name comes before the recorder's (libfirstassert_recorder.so, and any other library of the shim's).
OBJECT_COLUMNS = [
    ("stub", ("libfirstassert.so",)),
    ("recorder", ("libfirstassert",)),
    ("libunwind", ("libunwind.so",)),
    ("simulator", ("libcuda.so", "libcudart.so", "libcupti.so", "libsimkernels")),
    ("libc etc.", ("libc.so", "ld-linux", "libstdc++", "libm.so", "libm-", "libgcc_s")),
]
OWN_COLUMNS = ("stub", "recorder", "libunwind")
OTHER = "other"  # the loop program, Python, libffi, the vDSO (callgrind's ???)
COLUMNS = [column for column, _ in OBJECT_COLUMNS] + [OTHER]


class CallgrindFailed(Exception):
    """A callgrind run did not complete: the headline is skipped (valgrind cannot run every build)."""


class CountMismatch(Exception):
    """callgrind_counts' per-object sum is not callgrind's own total: every figure would be wrong."""


def object_column(path):
    name = os.path.basename(path)
    return next((column for column, prefixes in OBJECT_COLUMNS if name.startswith(prefixes)), OTHER)


def launches_made(timed):
    """Launches one run of the loop makes: launch_loop.cpp and python_launch_loop.py warm up with timed // 10 + 1."""
    return timed + timed // 10 + 1


def launching_thread_counts(args, program, configuration, launches, out_prefix):
    """{object: own instructions} of thread 1 for one run of PROGRAM with LAUNCHES timed launches."""
    name, shim, env_extra, flags = configuration
    completed, files = callgrind_counts.run(args.valgrind, program + [str(launches)] + flags,
                                            environment(args, shim, env_extra), out_prefix)
    if completed.returncode != 0 or 1 not in files:
        # The program's own last line says more than valgrind's ("==pid== ..."), which ends with the counts.
        lines = completed.stderr.strip().splitlines()
        last = ([line for line in lines if not line.startswith("==")] or lines or ["no output"])[-1]
        raise CallgrindFailed(f"the callgrind run of '{name.strip()}' failed (status {completed.returncode}): {last}")
    counts = callgrind_counts.self_instructions_by_object(files[1])
    parsed, recorded = sum(counts.values()), callgrind_counts.recorded_total(files[1])
    if parsed != recorded:
        said = "nothing (no totals: or summary: line)" if recorded is None else f"{recorded:,}"
        raise CountMismatch(f"callgrind_counts summed {parsed:,} instructions by object on thread 1 of "
                            f"'{name.strip()}' ({launches} launches), callgrind's own total says {said}")
    return counts


def per_launch(single, double, launches):
    """{column: instructions per launch} from the counts of the runs with LAUNCHES and 2 x LAUNCHES timed launches:
    the difference holds only launches, as both runs start and exit alike."""
    added = {}
    for path, instructions in callgrind_counts.difference(single, double).items():
        column = object_column(path)
        added[column] = added.get(column, 0) + instructions
    made = launches_made(2 * launches) - launches_made(launches)
    figures = {column: added.get(column, 0) / made for column in COLUMNS}
    figures["own"] = sum(figures[column] for column in OWN_COLUMNS)
    figures["total"] = sum(added.values()) / made
    return figures


def measure_instructions(args, configurations, program):
    """{configuration name: per_launch figures}: two runs per configuration, one after the other, as libc's counts
    move with the machine's load (see the module's docstring): run side by side, they moved by up to ~150 a launch."""
    launches = args.callgrind_launches
    figures = {}
    with tempfile.TemporaryDirectory(prefix="launch_cost_callgrind.") as out_dir:
        for index, configuration in enumerate(configurations):
            single, double = [launching_thread_counts(args, program, configuration, n,
                                                      os.path.join(out_dir, f"callgrind.{index}.{n}"))
                              for n in (launches, 2 * launches)]
            figures[configuration[0]] = per_launch(single, double, launches)
    return figures


def target_note(value, limit, what):
    return f"  target <= {limit:,} {what}: {'met' if value <= limit else 'MISSED'}"


def per_call(figures):
    """The --calls rows per non-launch call instead of per iteration."""
    return {name: {column: value / CALLS_PER_ITERATION for column, value in row.items()}
            for name, row in figures.items()}


def print_instruction_table(title, figures, configurations, targets=None):
    """One row per configuration: the shim's own instructions per launch by object, then what the other objects run
    beyond the bare loop's (the first configuration's) count, then the launching thread's whole count."""
    baseline = configurations[0][0]
    shim_rows = {name for name, shim, *_ in configurations if shim}
    print(title)
    print(f"  {'configuration':<30} {'stub':>6} {'recorder':>8} {'libunwind':>9} {'own':>7} | {'simulator +':>11} "
          f"{'libc etc. +':>11} {'other +':>8} | {'thread 1':>9}")
    base = figures[baseline]
    for name, row in figures.items():
        # Rounded before formatting, so that a difference of a fraction of an instruction prints 0, not -0.
        shown = {column: round(row[column]) for column in OWN_COLUMNS + ("own", "total")}
        added = {column: round(row[column] - base[column]) for column in ("simulator", "libc etc.", OTHER)}
        note = target_note(row["own"], targets[name], "own") if targets and name in targets else ""
        if name in shim_rows and shown["recorder"] == 0:
            # The row measured no shim: seen when a build elsewhere relinked the recorder during the runs.
            note += "  the recorder ran nothing: not loaded?"
        print(f"  {name:<30} {shown['stub']:>6,} {shown['recorder']:>8,} {shown['libunwind']:>9,} {shown['own']:>7,} "
              f"| {added['simulator']:>11,} {added['libc etc.']:>11,} {added[OTHER]:>8,} | {shown['total']:>9,}{note}")


def interpreter_of_version(version):
    """A python3.N of that version on PATH or among pyenv's versions (a pyenv shim of another version is not one)."""
    root = os.environ.get("PYENV_ROOT", os.path.join(os.path.expanduser("~"), ".pyenv"))
    candidates = [os.path.join(d, f"python{version}") for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    versions = os.path.join(root, "versions")
    if os.path.isdir(versions):
        candidates += [os.path.join(versions, v, "bin", f"python{version}") for v in sorted(os.listdir(versions))
                       if v.startswith(version + ".")]
    for python in candidates:
        if not os.access(python, os.X_OK):
            continue
        said = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                              capture_output=True, text=True)
        if said.returncode == 0 and said.stdout.strip() == version:
            return python
    return None


def python_version_of(python):
    said = subprocess.run([python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
                          capture_output=True, text=True)
    return said.stdout.strip() if said.returncode == 0 else "?"


def print_headline(args, python_programs):
    """The instruction tables. Returns False if a callgrind run failed (the tables are then skipped)."""
    try:
        ops = measure_instructions(args, OP_CONFIGURATIONS, [args.loop])
        calls = per_call(measure_instructions(args, CALL_CONFIGURATIONS, [args.loop]))
        loop = measure_instructions(args, CONFIGURATIONS, [args.loop])
        pythons = [(program, measure_instructions(args, PYTHON_CONFIGURATIONS, program))
                   for program in python_programs]
    except CallgrindFailed as failure:
        print(f"headline (instructions per launch): skipped: {failure}")
        return False
    print(f"headline: the shim's own instructions per op, per non-launch call and per launch on the launching thread (callgrind thread 1), by "
          f"object, and the other objects' beyond the bare loop's; runs of {args.callgrind_launches} and "
          f"{2 * args.callgrind_launches} timed launches, differenced")
    print_instruction_table("per op (two cudaGetDevice, a launch, cudaGetLastError: an eager PyTorch op's CUDA calls)",
                            ops, OP_CONFIGURATIONS, TARGET_OP_INSTRUCTIONS)
    print_instruction_table("per non-launch call (cudaGetDevice, cudaGetLastError, cudaStreamQuery in turn)", calls,
                            CALL_CONFIGURATIONS, TARGET_CALL_INSTRUCTIONS)
    print_instruction_table("per launch", loop, CONFIGURATIONS, TARGET_OWN_INSTRUCTIONS)
    for program, python in pythons:
        print(f"launched from Python (CPython {python_version_of(program[0])}), 9 calls deep, the GIL released "
              f"(python_launch_loop.py)")
        print_instruction_table("", python, PYTHON_CONFIGURATIONS)
        frames = python["  + Python frames"]["own"] - python["stacks 32 + breadcrumbs"]["own"]
        print(f"  Python frames add {round(frames):,} own instructions a launch (+ Python frames minus stacks 32 + "
              f"breadcrumbs){target_note(frames, TARGET_PYTHON_FRAMES_INSTRUCTIONS, 'added')}")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop", required=True, help="path to the launch_loop program")
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--launches", type=int, default=20000, help="timed launches per run (default 20000)")
    parser.add_argument("--sync-launches", type=int, default=5000, help="timed launches per sync run (default 5000)")
    parser.add_argument("--rounds", type=int, default=7, help="runs of every configuration (default 7)")
    parser.add_argument("--python-loop", help="python_launch_loop.py, for the Python rows")
    parser.add_argument("--sim-dir", help="the simulator's libraries, for the Python rows")
    parser.add_argument("--python-versions", default="",
                        help="comma-separated CPython versions (3.N) whose Python-loop instruction tables the "
                             "headline adds, where an interpreter of each is found")
    parser.add_argument("--report-dir", default=os.environ.get("TMPDIR", "/tmp"),
                        help="FIRSTASSERT_DIR for the runs (none should write a report)")
    parser.add_argument("--callgrind-launches", type=int, default=2000,
                        help="timed launches of the shorter callgrind run of each configuration; the longer makes "
                             "twice as many (default 2000)")
    headline = parser.add_mutually_exclusive_group()
    headline.add_argument("--no-callgrind", action="store_true", help="skip the headline (the instruction counts)")
    headline.add_argument("--only-callgrind", action="store_true", help="print only the headline, no time rows")
    args = parser.parse_args()
    if args.launches < 1 or args.sync_launches < 1 or args.rounds < 1 or args.callgrind_launches < 1:
        parser.error("--launches, --sync-launches, --rounds and --callgrind-launches must be positive")
    for path in (args.loop, args.shim):
        if not os.path.isfile(path):
            parser.error(f"no such file: {path}")
    args.valgrind = shutil.which("valgrind")
    if args.only_callgrind and args.valgrind is None:
        parser.error("--only-callgrind needs valgrind on PATH")
    python_program = [sys.executable, args.python_loop, args.sim_dir] if args.python_loop and args.sim_dir else None
    python_programs = [python_program] if python_program else []
    for version in filter(None, (v.strip() for v in args.python_versions.split(","))):
        if not (version.startswith("3.") and version[2:].isdigit()):
            parser.error(f"--python-versions takes versions such as 3.12, not '{version}'")
        python = interpreter_of_version(version)
        if python is None:
            print(f"CPython {version}: no interpreter here (python{version} on PATH or pyenv's): its table is left out")
        elif python_program and not any(os.path.samefile(python, p[0]) for p in python_programs):
            python_programs.append([python] + python_program[1:])

    if args.no_callgrind:
        print("headline (instructions per launch): skipped (--no-callgrind)")
    elif args.valgrind is None:
        print("headline (instructions per launch): skipped (no valgrind on PATH; scripts/bench installs it)")
    else:
        try:
            counted = print_headline(args, python_programs)
        except CountMismatch as mismatch:
            print(f"launch_cost: FAILED: {mismatch}", file=sys.stderr)
            return 1
        if args.only_callgrind:
            return 0 if counted else 1

    print(f"median of {args.rounds} interleaved rounds; {args.launches} timed launches per run")
    print_table("launch path", measure(args, CONFIGURATIONS), "bare", target_row="stacks 32 + breadcrumbs")
    if python_program:
        print("launched from Python, 9 calls deep, the GIL released (python_launch_loop.py)")
        print_table("", measure(args, PYTHON_CONFIGURATIONS, python_program), "python loop, bare")
    args.launches = args.sync_launches
    print(f"synchronizing after every launch ({args.launches} timed launches per run)")
    sync = measure(args, SYNC_CONFIGURATIONS)
    print_table("", sync, "bare, sync after each launch")
    baseline, forced = sync["bare, sync after each launch"][1], sync["FIRSTASSERT_SYNC=all"][1]
    print(f"  target FIRSTASSERT_SYNC=all no slower (wall) than syncing after each launch: "
          f"{'met' if forced <= baseline * 1.02 else 'MISSED'} (ratio {forced / baseline:.2f}, 2% noise allowed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
