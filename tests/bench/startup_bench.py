#!/usr/bin/env python3
"""Process start-up cost of an idle shim: programs that never use CUDA, with and without LD_PRELOAD.

Runs are interleaved (bare, preloaded, bare, ...) so that drift on a noisy machine hits both sides alike; each
side's figure is the median of its repeats, and the ratio of medians is what the target (at most 2%) is about.
With --empty, an empty C library is preloaded too, interleaved with the rest: the floor that any LD_PRELOAD pays.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

TARGET_RATIO = 1.02


def time_once(argv, env):
    start = time.perf_counter_ns()
    completed = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter_ns() - start
    if completed.returncode != 0:
        raise RuntimeError(f"{argv} exited with {completed.returncode}: {completed.stderr.decode(errors='replace')}")
    return elapsed, completed.stderr


def measure(argv, preloads, repeats):
    """Median wall time of argv bare and under each preload (name -> library), runs interleaved."""
    bare_env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    envs = {"bare": bare_env}
    envs.update({name: dict(bare_env, LD_PRELOAD=library) for name, library in preloads.items()})
    # Warm the page cache and the dynamic loader's caches for every side before anything is counted.
    for name, env in envs.items():
        _, stderr = time_once(argv, env)
        if stderr and name != "bare":
            raise RuntimeError(f"{name} wrote to stderr under {argv}: {stderr.decode(errors='replace')}")
    samples = {name: [] for name in envs}
    for _ in range(repeats):
        for name, env in envs.items():
            samples[name].append(time_once(argv, env)[0])
    return {name: statistics.median(values) for name, values in samples.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--empty", help="an empty C library, preloaded as the floor any LD_PRELOAD pays")
    parser.add_argument("--repeats", type=int, default=200, help="runs per side and program (default 200)")
    args = parser.parse_args()
    if args.repeats < 3:
        parser.error("--repeats must be at least 3")
    for library in filter(None, (args.shim, args.empty)):
        if not os.path.isfile(library):
            parser.error(f"no library at {library}")
    preloads = {"firstassert": args.shim}
    if args.empty:
        preloads = {"an empty library": args.empty, **preloads}

    programs = [["/bin/true"], [sys.executable, "-c", "pass"]]
    print(f"start-up, median of {args.repeats} interleaved runs each (target: firstassert/bare <= {TARGET_RATIO:.2f})")
    print(f"{'program':<22} {'preloaded':<18} {'bare us':>9} {'preloaded us':>13} {'added us':>9} {'ratio':>7}  target")
    for argv in programs:
        medians = measure(argv, preloads, args.repeats)
        bare = medians["bare"]
        program = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))
        for name in preloads:
            ratio = medians[name] / bare
            verdict = ("met" if ratio <= TARGET_RATIO else "MISSED") if name == "firstassert" else "(floor)"
            print(f"{program:<22} {name:<18} {bare / 1e3:>9.1f} {medians[name] / 1e3:>13.1f} "
                  f"{(medians[name] - bare) / 1e3:>9.1f} {ratio:>7.3f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
