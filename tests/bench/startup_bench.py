#!/usr/bin/env python3
"""Process start-up cost of an idle shim: programs that never use CUDA, with and without LD_PRELOAD.

Runs are interleaved (bare, preloaded, bare, ...) so that drift on a noisy machine hits both sides alike; each
side's figure is the median of its repeats, and the ratio of medians is what the target (at most 2%) is about.
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


def measure(argv, shim, repeats):
    bare_env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    preloaded_env = dict(bare_env, LD_PRELOAD=shim)
    # Warm the page cache and the dynamic loader's caches for both sides before anything is counted.
    time_once(argv, bare_env)
    _, stderr = time_once(argv, preloaded_env)
    if stderr:
        raise RuntimeError(f"the idle shim wrote to stderr under {argv}: {stderr.decode(errors='replace')}")
    bare, preloaded = [], []
    for _ in range(repeats):
        bare.append(time_once(argv, bare_env)[0])
        preloaded.append(time_once(argv, preloaded_env)[0])
    return statistics.median(bare), statistics.median(preloaded)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--repeats", type=int, default=200, help="runs per side and program (default 200)")
    args = parser.parse_args()
    if args.repeats < 3:
        parser.error("--repeats must be at least 3")
    if not os.path.isfile(args.shim):
        parser.error(f"no shim at {args.shim}")

    programs = [["/bin/true"], [sys.executable, "-c", "pass"]]
    print(f"start-up, median of {args.repeats} interleaved runs each (target: preloaded/bare <= {TARGET_RATIO:.2f})")
    print(f"{'program':<28} {'bare us':>10} {'preloaded us':>13} {'added us':>9} {'ratio':>7}  target")
    for argv in programs:
        bare, preloaded = measure(argv, args.shim, args.repeats)
        ratio = preloaded / bare
        name = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(argv))
        verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
        print(f"{name:<28} {bare / 1e3:>10.1f} {preloaded / 1e3:>13.1f} {(preloaded - bare) / 1e3:>9.1f} "
              f"{ratio:>7.3f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
