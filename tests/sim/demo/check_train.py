#!/usr/bin/env python3
"""Test: the simulated training job fails the way a PyTorch job does, and a clean run does not.

usage: check_train.py LIB_DIR
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ASSERT_LINE = ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: "
               "block: [0,0,0], thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.")


def run(lib_dir, *args):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.pop("CUDA_INJECTION64_PATH", None)
    if os.environ.get("SANITIZER_RUNTIME"):  # set by the build under ThreadSanitizer
        env["LD_PRELOAD"] = os.environ["SANITIZER_RUNTIME"]
    return subprocess.run([sys.executable, os.path.join(HERE, "train.py"), "--lib-dir", lib_dir, *args],
                          capture_output=True, text=True, env=env, timeout=120)


def main():
    lib_dir = sys.argv[1]
    failures = []

    bad = run(lib_dir)
    if bad.returncode != 1:
        failures.append(f"failing job exited {bad.returncode}, expected 1")
    if ASSERT_LINE not in bad.stderr.splitlines():
        failures.append("the driver's assertion line is missing from stderr")
    if "RuntimeError: CUDA error: device-side assert triggered" not in bad.stderr:
        failures.append("no RuntimeError naming the device-side assert")
    # The bad batch is step 23; the host learns of it only at the next synchronizing call, the blocking copy of
    # step 24's batch: the traceback points at an innocent line, as torch's does.
    if "step  20  loss 2.3026" not in bad.stdout or "step  30" in bad.stdout:
        failures.append("steps logged before the failure are wrong: " + repr(bad.stdout))
    traceback = bad.stderr.split("Traceback")[-1]
    if "cuda.to_device(logits, logits_host)" not in traceback or "nll_loss" in traceback:
        failures.append("the traceback should point at the next batch's copy, not at the failing launch")

    good = run(lib_dir, "--bad-step", "-1")
    if good.returncode != 0 or "training finished" not in good.stdout or good.stderr:
        failures.append(f"a clean run failed: rc={good.returncode} stderr={good.stderr!r}")

    for f in failures:
        print("FAIL:", f)
    if failures:
        print("--- stdout of the failing job ---\n" + bad.stdout + "--- stderr ---\n" + bad.stderr)
        return 1
    print("ok: the assert in step 23's nll_loss surfaces at step 24's batch copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
