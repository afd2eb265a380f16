#!/usr/bin/env python3
"""Test: scripts/gpu-session, the prepared command of a GPU session, where there is no GPU: its refusals, and that it
runs gpu-check and gpu-bench in turn, leaving their output and its log under OUT with gpu-check's exit status.

usage: gpu_session_test.py [TEST_NAME ...] [--except PATTERN ...]
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "scripts", "gpu-session")
sys.path.insert(0, os.path.join(REPO, "tests", "support"))

import skip_aware  # noqa: E402


def session(*args, env=None):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300)


class GpuSession(unittest.TestCase):
    def test_help_documents_every_option_it_parses(self):
        done = session("--help")
        self.assertEqual(done.returncode, 0)
        with open(SCRIPT) as f:
            parsed = set(re.findall(r"^\s+(--[a-z-]+)\)", f.read(), re.MULTILINE))
        self.assertEqual(parsed, {"--check-budget", "--bench-budget", "--only", "--no-schedule"})
        documented = {line.split()[0] for line in done.stdout.splitlines() if line.startswith("  --")}
        self.assertEqual(parsed, documented)
        self.assertIn("usage: scripts/gpu-session", done.stdout)

    def test_a_bad_argument_is_one_line_and_status_2(self):
        with tempfile.TemporaryDirectory() as work:
            full = os.path.join(work, "full")
            os.makedirs(full)
            open(os.path.join(full, "left.txt"), "w").close()
            for args in (["--bogus", work], [], ["--check-budget", "0", work], ["--bench-budget", "soon", work],
                         ["--check-budget"], [work, work], [full]):
                with self.subTest(args=args):
                    done = session(*args)
                    self.assertEqual(done.returncode, 2)
                    self.assertEqual(done.stdout, "")
                    self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                    self.assertTrue(done.stderr.startswith("scripts/gpu-session: "), done.stderr)

    def test_it_runs_gpu_check_then_gpu_bench_and_keeps_what_they_say(self):
        # No torch here (one that cannot be imported, first on the path): both refuse at once, each in its own words.
        with tempfile.TemporaryDirectory() as work:
            fake = os.path.join(work, "python")
            os.makedirs(os.path.join(fake, "torch"))
            with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('no torch here')\n")
            out = os.path.join(work, "out")
            done = session("--check-budget", "30", "--bench-budget", "60", out, env=dict(os.environ, PYTHONPATH=fake))
            self.assertEqual(done.returncode, 2, done.stderr)
            self.assertEqual(sorted(os.listdir(out)), ["gpu-bench.stderr", "gpu-bench.txt", "gpu-check.stderr",
                                                       "gpu-check.txt", "session.txt"])
            with open(os.path.join(out, "gpu-check.stderr")) as f:
                self.assertIn("cannot import torch", f.read())
            with open(os.path.join(out, "gpu-bench.stderr")) as f:
                self.assertIn("cannot import torch", f.read())
            with open(os.path.join(out, "session.txt")) as f:
                log = f.read()
            self.assertRegex(log, r"\ngpu-check: exit 2 after \d+ s \(limit 90 s\): \S+/scripts/gpu-check --out "
                                  + re.escape(os.path.join(out, "gpu-check")) + r" --budget 30 --jobs 8\n")
            self.assertRegex(log, r"\ngpu-bench: exit 2 after \d+ s \(limit 60 s\): \S+/scripts/gpu-bench --runs 1 "
                                  r"--steps 20 --callgrind-steps 0\n")
            rerun = os.path.join(work, "rerun")
            again = session("--bench-budget", "0", "--only", "nll_loss", "--no-schedule", rerun,
                            env=dict(os.environ, PYTHONPATH=fake))
            self.assertNotIn("gpu-bench.txt", os.listdir(rerun), again.stderr)
            with open(os.path.join(rerun, "session.txt")) as f:
                self.assertRegex(f.read(), r"\ngpu-check: exit 2 after \d+ s \(limit 330 s\): \S+/scripts/gpu-check "
                                 r"--out " + re.escape(os.path.join(rerun, "gpu-check")) +
                                 r" --budget 270 --jobs 8 --only nll_loss --no-schedule\n")


if __name__ == "__main__":
    skip_aware.main(sys.argv[1:])
