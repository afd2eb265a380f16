#!/usr/bin/env python3
"""Added CPU time per kernel launch of each shim configuration, against the same simulator loop without the shim.

Every configuration runs the same launch loop (tests/bench/launch_loop.cpp), which times itself after a warm-up:
the CPU time of the launching thread (where the shim works; the target is about it) and the wall time (which also
holds the simulated device's thread hand-offs, so it is noisier and says less about the shim);
runs are interleaved round by round so that drift on a noisy machine hits every configuration alike, and each
figure is the median over rounds. The sync rows compare FIRSTASSERT_SYNC=all with a loop that synchronizes after
every launch by itself, the stand-in for CUDA_LAUNCH_BLOCKING=1. With --python-loop, the Python rows run the same
loop from Python (python_launch_loop.py: 9 calls deep, through ctypes.CDLL, which releases the GIL as PyTorch
does), with Python frames off and on.
"""
import argparse
import os
import statistics
import subprocess
import sys

TARGET_ADDED_NS = 1000.0  # record + stacks depth 32 + breadcrumbs

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
SYNC_CONFIGURATIONS = [
    ("bare, sync after each launch", False, {}, ["--sync-each"]),
    ("FIRSTASSERT_SYNC=all", True, {"FIRSTASSERT_SYNC": "all"}, []),
]


def run_once(args, shim, env_extra, flags, program):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")
           and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    env.update(env_extra)
    env["FIRSTASSERT_DIR"] = args.report_dir
    if shim:
        env["LD_PRELOAD"] = args.shim
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loop", required=True, help="path to the launch_loop program")
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--launches", type=int, default=20000, help="timed launches per run (default 20000)")
    parser.add_argument("--sync-launches", type=int, default=5000, help="timed launches per sync run (default 5000)")
    parser.add_argument("--rounds", type=int, default=7, help="runs of every configuration (default 7)")
    parser.add_argument("--python-loop", help="python_launch_loop.py, for the Python rows")
    parser.add_argument("--sim-dir", help="the simulator's libraries, for the Python rows")
    parser.add_argument("--report-dir", default=os.environ.get("TMPDIR", "/tmp"),
                        help="FIRSTASSERT_DIR for the runs (none should write a report)")
    args = parser.parse_args()
    if args.launches < 1 or args.sync_launches < 1 or args.rounds < 1:
        parser.error("--launches, --sync-launches and --rounds must be positive")
    for path in (args.loop, args.shim):
        if not os.path.isfile(path):
            parser.error(f"no such file: {path}")

    print(f"median of {args.rounds} interleaved rounds; {args.launches} timed launches per run")
    print_table("launch path", measure(args, CONFIGURATIONS), "bare", target_row="stacks 32 + breadcrumbs")
    if args.python_loop and args.sim_dir:
        print("launched from Python, 9 calls deep, the GIL released (python_launch_loop.py)")
        print_table("", measure(args, PYTHON_CONFIGURATIONS, [sys.executable, args.python_loop, args.sim_dir]),
                    "python loop, bare")
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
