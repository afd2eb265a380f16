#!/usr/bin/env python3
"""Bench: `firstassert triage` on a generated log of a given size (default 1 GiB): throughput in MB/s and the
command's peak memory, medians over repeats. The target is at least 100 MB/s with memory that does not grow with the
log (the log is 1024 times larger than any bound the reader keeps).

The log is what a long multi-rank job leaves: training lines under torchrun's [rankN]: prefixes, progress bars
redrawn with carriage returns, NCCL warnings, a few thousand device assertion lines (some glued to a progress bar,
some wrapped, some garbled), tracebacks with CUDA errors. It is written once into a temporary directory and removed.

usage: triage_bench.py --firstassert PATH [--size-mb N] [--repeats N] [--keep DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGET_MB_PER_S = 100.0

ASSERTION = ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [{b},0,0], "
             "thread: [{t},0,0] Assertion `t >= 0 && t < n_classes` failed.")
TRACEBACK = """Traceback (most recent call last):
  File "/work/fit.py", line 71, in <module>
    main()
  File "/work/fit.py", line 64, in main
    total += loss.item()
RuntimeError: CUDA error: device-side assert triggered
CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.
"""


def block_of_lines(index):
    """About 64 KiB of an ordinary log, with the odd line of note."""
    lines = []
    rank = index % 8
    for step in range(400):
        n = index * 400 + step
        lines.append("[rank%d]: step %d  loss %.4f  lr 3.0e-04  tokens/s 48211  grad_norm 1.07" % (rank, n, 2.3 - n * 1e-7))
        if step % 50 == 0:
            lines.append("[rank%d]: Epoch 3:  %d%%|####      | %d/1000 [00:02<00:03,  3.91it/s]\r"
                         "Epoch 3:  %d%%|#####     | %d/1000 [00:02<00:03,  3.90it/s]" % (rank, step // 10, step,
                                                                                       step // 10 + 1, step + 1))
        if step % 97 == 0:
            lines.append("[rank%d]:[W501 10:00:00.123 ProcessGroupNCCL.cpp:1234] Warning: something slow" % rank)
    if index % 64 == 0:
        lines.append("[rank%d]: " % rank + ASSERTION.format(b=index % 13, t=index % 32))
        lines.append("[rank%d]: 42%%|####| 3/7 [00:01<00:02]" % rank + ASSERTION.format(b=1, t=index % 31))
        wrapped = ASSERTION.format(b=2, t=3)
        lines.append(wrapped[:100])
        lines.append(wrapped[100:])
        lines.append("[106:1308: indexSelectLargeIndex: block: [91,0,0], thread: [32,0,0] Assertion "
                     "`srcIndex < srcSelectDimSize` failed.")
        lines.extend("[rank%d]: %s" % (rank, l) for l in TRACEBACK.splitlines())
    return ("\n".join(lines) + "\n").encode()


def write_log(path, size):
    written, index = 0, 0
    with open(path, "wb") as f:
        while written < size:
            chunk = block_of_lines(index)
            f.write(chunk)
            written += len(chunk)
            index += 1
    return written


def high_water_kib(pid):
    """The process's peak resident memory so far (VmHWM), or None once it is gone."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def run_once(firstassert, log):
    """Seconds and peak memory (KiB) of one run. The peak is the command's own (VmHWM, read while it runs and
    monotonic), not a child's maxrss, which would count the launching Python's pages before exec."""
    start = time.perf_counter()
    process = subprocess.Popen([firstassert, "triage", log], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while process.poll() is None:
        seen = high_water_kib(process.pid)
        if seen:
            peak = max(peak, seen)
        time.sleep(0.005)
    elapsed = time.perf_counter() - start
    errors = process.stderr.read()
    if process.returncode != 0:
        sys.exit("triage_bench: firstassert triage exited %d: %s" % (process.returncode, errors.decode()[-500:]))
    return elapsed, peak


def measure(firstassert, log, repeats):
    runs = [run_once(firstassert, log) for _ in range(repeats)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--firstassert", required=True, help="the firstassert command")
    parser.add_argument("--size-mb", type=int, default=1024, help="the log's size in MiB (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="runs to take the median of (default: %(default)s)")
    parser.add_argument("--keep", help="write the log into this directory and keep it")
    opts = parser.parse_args()
    directory = opts.keep or tempfile.mkdtemp(prefix="firstassert-triage-bench-")
    log = os.path.join(directory, "job.log")
    try:
        print("triage_bench: writing a %d MiB log (%s)" % (opts.size_mb, log), flush=True)
        size = write_log(log, opts.size_mb << 20)
        small = os.path.join(directory, "small.log")
        write_log(small, 1 << 20)
        seconds, peak = measure(opts.firstassert, log, opts.repeats)
        _, small_peak = measure(opts.firstassert, small, opts.repeats)
        rate = size / 1e6 / seconds
        print("triage_bench: %.0f MB in %.2f s (median of %d): %.0f MB/s; peak memory %.1f MiB (%.1f MiB on a 1 MiB log)"
              % (size / 1e6, seconds, opts.repeats, rate, peak / 1024, small_peak / 1024))
        print("triage_bench: target >= %.0f MB/s: %s; memory grew %.1f MiB for %dx the log" % (
            TARGET_MB_PER_S, "met" if rate >= TARGET_MB_PER_S else "MISSED", (peak - small_peak) / 1024,
            size >> 20))
    finally:
        if not opts.keep:
            for name in os.listdir(directory):
                os.unlink(os.path.join(directory, name))
            os.rmdir(directory)
    return 0


if __name__ == "__main__":
    sys.exit(main())
