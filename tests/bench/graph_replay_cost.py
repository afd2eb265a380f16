#!/usr/bin/env python3
"""Cost of replaying a captured CUDA graph of 100 kernel nodes, bare and under the shim.

Every configuration runs the same program (tests/bench/graph_replay.cpp): it captures 100 small kernel launches on a
non-default stream, instantiates the graph, and times its replays after a warm-up, with a cudaStreamSynchronize
every 10 replays and at the end. Two figures per replay: the CPU time of the launching thread (where the shim's
callbacks run) and the wall time (which also holds the simulated device executing the nodes, and whatever the shim
adds to the graph at capture or queues before each launch). Runs are interleaved round by round so that drift on a
noisy machine hits every configuration alike; each figure is the median over rounds, and the ratios are of medians.

Where valgrind is installed, each configuration also runs once under callgrind (--instr-atstart=no: the program
instruments only its timed replays, in every thread): instructions per replay of the launching thread (repeatable to
0.1-2% here, and what a real GPU's host would pay) and of all threads (which adds the simulated device executing
the nodes: the simulator's cost, which a real GPU does not put on the CPU, but also where the nodes and operations
the shim adds to a graph or before a launch are executed).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
import callgrind_counts  # noqa: E402  (scripts/lib: shared with launch_cost and scripts/gpu-bench)

# (name, shim?, environment); the first is what the rest are compared with.
CONFIGURATIONS = [
    ("bare", False, {}),
    ("shim, defaults (CUPTI)", True, {}),
    ("shim, interposition", True, {"FIRSTASSERT_BACKEND": "interpose"}),
]


def environment(args, shim, env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")
           and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    env.update(env_extra)
    env["FIRSTASSERT_DIR"] = args.report_dir
    if shim:
        env["LD_PRELOAD"] = args.shim
    return env


def run_once(args, shim, env_extra):
    env = environment(args, shim, env_extra)
    command = [args.program, str(args.replays), "--nodes", str(args.nodes), "--sync-every", str(args.sync_every)]
    completed = subprocess.run(command, env=env, capture_output=True, text=True)
    figures = dict(line.split(": ", 1) for line in completed.stdout.splitlines() if ": " in line)
    if completed.returncode == 0 and "cpu_ns_per_replay" in figures and "wall_ns_per_replay" in figures:
        return float(figures["cpu_ns_per_replay"]), float(figures["wall_ns_per_replay"]), figures.get("graph_nodes")
    raise RuntimeError(f"graph_replay failed (status {completed.returncode}) with {env_extra}: "
                       f"{completed.stderr.strip()}")


def callgrind_once(args, name, shim, env_extra, out_dir, tag):
    """Instructions per replay under callgrind: (launching thread, all threads), or None if none were counted."""
    command = [args.program, str(args.callgrind_replays), "--nodes", str(args.nodes), "--sync-every", str(args.sync_every)]
    completed, files = callgrind_counts.run(args.valgrind, command, environment(args, shim, env_extra),
                                            os.path.join(out_dir, f"callgrind.{tag}"), options=["--instr-atstart=no"])
    if completed.returncode != 0:
        # Not fatal: valgrind cannot run everything (a sanitizer build, say); the timed rows stand without it.
        last = (completed.stderr.strip().splitlines() or [""])[-1]
        print(f"  callgrind run failed ({name}, status {completed.returncode}): {last}")
        return None
    per_thread = {thread: callgrind_counts.recorded_total(path) or 0 for thread, path in files.items()}
    if not per_thread or per_thread.get(1, 0) == 0:
        return None  # built without valgrind's header, the program never starts the instrumentation
    return per_thread[1] / args.callgrind_replays, sum(per_thread.values()) / args.callgrind_replays


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--program", required=True, help="path to the graph_replay program")
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--replays", type=int, default=2000, help="timed replays per run (default 2000)")
    parser.add_argument("--nodes", type=int, default=100, help="kernel launches captured (default 100)")
    parser.add_argument("--sync-every", type=int, default=10, help="replays between synchronizations (default 10)")
    parser.add_argument("--rounds", type=int, default=9, help="runs of every configuration (default 9)")
    parser.add_argument("--callgrind-replays", type=int, default=200,
                        help="timed replays of the callgrind runs (default 200)")
    parser.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    parser.add_argument("--report-dir", default=os.environ.get("TMPDIR", "/tmp"),
                        help="FIRSTASSERT_DIR for the runs (none should write a report)")
    args = parser.parse_args()
    if args.replays < 1 or args.callgrind_replays < 1 or args.nodes < 1 or args.sync_every < 0 or args.rounds < 1:
        parser.error("--replays, --callgrind-replays, --nodes and --rounds must be positive, --sync-every not "
                     "negative")
    for path in (args.program, args.shim):
        if not os.path.isfile(path):
            parser.error(f"no such file: {path}")

    samples = {name: [] for name, *_ in CONFIGURATIONS}
    graph_nodes = {}
    for _ in range(args.rounds):
        for name, shim, env_extra in CONFIGURATIONS:
            cpu, wall, nodes = run_once(args, shim, env_extra)
            samples[name].append((cpu, wall))
            graph_nodes[name] = nodes
    medians = {name: (statistics.median(s[0] for s in values), statistics.median(s[1] for s in values))
               for name, values in samples.items()}

    print(f"graph replay ({args.nodes} kernel nodes): wall clock and launching-thread CPU time, medians of "
          f"{args.rounds} interleaved rounds; {args.replays} timed replays per run, synchronizing every "
          f"{args.sync_every}")
    print(f"  {'configuration':<30} {'nodes':>5} {'cpu us':>9} {'added':>8} {'cpu ratio':>9} "
          f"{'wall us':>9} {'added':>8} {'wall ratio':>10}")
    base_cpu, base_wall = medians["bare"]
    for name, (cpu, wall) in medians.items():
        print(f"  {name:<30} {graph_nodes[name] or '?':>5} {cpu / 1000:>9.1f} {(cpu - base_cpu) / 1000:>8.1f} "
              f"{cpu / base_cpu:>9.2f} {wall / 1000:>9.1f} {(wall - base_wall) / 1000:>8.1f} {wall / base_wall:>10.2f}")

    counts = None
    args.valgrind = shutil.which("valgrind")
    if args.no_callgrind:
        print("  instruction counts: skipped (--no-callgrind)")
    elif args.valgrind is None:
        print("  instruction counts: skipped (no valgrind on PATH)")
    else:
        with tempfile.TemporaryDirectory(prefix="graph_replay_callgrind.") as out_dir:
            counts = {}
            for index, (name, shim, env_extra) in enumerate(CONFIGURATIONS):
                counts[name] = callgrind_once(args, name, shim, env_extra, out_dir, str(index))
        if any(value is None for value in counts.values()):
            print("  instruction counts: skipped (a callgrind run failed, or graph_replay was built without "
                  "<valgrind/callgrind.h> and counted nothing)")
            counts = None
    if counts:
        print(f"instructions per replay (callgrind, {args.callgrind_replays} timed replays, only those instrumented)")
        print(f"  {'configuration':<30} {'launching thread':>16} {'added':>8} {'ratio':>6} "
              f"{'all threads':>12} {'added':>8} {'ratio':>6}")
        base_own, base_all = counts["bare"]
        for name, (own, every) in counts.items():
            print(f"  {name:<30} {own:>16,.0f} {own - base_own:>8,.0f} {own / base_own:>6.3f} "
                  f"{every:>12,.0f} {every - base_all:>8,.0f} {every / base_all:>6.3f}")

    shim_cpu, shim_wall = medians["shim, defaults (CUPTI)"]
    row = (f"graph replay ({args.nodes} kernel nodes), per replay, shim defaults: wall (median of {args.rounds}) bare "
           f"{base_wall / 1000:.1f} us, shim {shim_wall / 1000:.1f} us, ratio {shim_wall / base_wall:.2f}")
    if counts:
        base_own, base_all = counts["bare"]
        own, every = counts["shim, defaults (CUPTI)"]
        row += (f"; instructions (callgrind) of the launching thread bare {base_own:,.0f}, shim {own:,.0f}, "
                f"ratio {own / base_own:.3f}, of all threads ratio {every / base_all:.3f}")
    else:
        row += (f"; launching-thread CPU bare {base_cpu / 1000:.1f} us, shim {shim_cpu / 1000:.1f} us, "
                f"ratio {shim_cpu / base_cpu:.2f}")
    print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
