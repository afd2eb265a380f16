#!/usr/bin/env python3
"""Test: the CUPTI callback tracer (tests/gpu/callback_trace.cpp) on the simulator (stdlib unittest).

usage: callback_trace_test.py TRACER RUNTIME_JOB SIM_DIR
       TRACER       build/tests/gpu/libfirstassert_callback_trace.so
       RUNTIME_JOB  build/tests/e2e/runtime_job, run with --healthy: 3 steps of 4 cudaLaunchKernel, one
                    cudaDeviceSynchronize at the end, all from its main thread
       SIM_DIR      build/tests/sim (the simulator's libcuda.so.1, libcudart.so.13 and libcupti.so.13)

The expectations come from the program and from what the simulator documents: its runtime makes each call through
the driver's exported entry points (tests/sim/runtime/driver_link.h), each wrapped in ENTER/EXIT callbacks
(tests/sim/common/api_trace.h), and cuCtxSynchronize fires CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED inside its own
call (tests/sim/driver/driver_api.cpp).
"""
import os
import subprocess
import sys
import tempfile
import unittest

TRACER = RUNTIME_JOB = SIM_DIR = None
HEADER = "# firstassert callback trace 1"
DOMAINS = {"runtime", "driver", "resource", "synchronize"}


def run_job(trace_path):
    env = dict(os.environ, LD_LIBRARY_PATH=SIM_DIR, CUDA_INJECTION64_PATH=TRACER)
    env.pop("FIRSTASSERT_CALLBACK_TRACE", None)
    if trace_path is not None:
        env["FIRSTASSERT_CALLBACK_TRACE"] = trace_path
    return subprocess.run([RUNTIME_JOB, "--healthy"], capture_output=True, text=True, env=env, timeout=60)


def records(text):
    """The trace's lines as (order, thread, domain, cbid, name, site, depth), read here without the comparison's parser
    so that the format itself is what is checked."""
    rows = []
    for line in text.splitlines()[1:-1]:
        order, thread, domain, cbid, name, site, depth = line.split("\t")
        rows.append((int(order), int(thread), domain, int(cbid), name, site, int(depth)))
    return rows


def find_all(rows, pattern):
    """Where pattern, a list of (domain, name, site, depth), occurs as consecutive records."""
    keys = [(r[2], r[4], r[5], r[6]) for r in rows]
    return [i for i in range(len(keys) - len(pattern) + 1) if keys[i:i + len(pattern)] == pattern]


class CallbackTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "runtime_job.trace")
        cls.done = run_job(cls.path)
        with open(cls.path, encoding="utf-8") as f:
            cls.text = f.read()
        cls.rows = records(cls.text)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_the_job_runs_as_it_does_without_the_tracer(self):
        self.assertEqual(self.done.returncode, 0, self.done.stderr)
        self.assertIn("launches: 12", self.done.stdout)
        self.assertEqual(self.done.stderr, "")

    def test_the_file_has_its_header_seven_fields_a_line_and_the_dropped_count(self):
        lines = self.text.splitlines()
        self.assertEqual(lines[0], HEADER)
        self.assertEqual(lines[-1], "# dropped 0")
        self.assertTrue(all(len(line.split("\t")) == 7 for line in lines[1:-1]))
        self.assertEqual([r[0] for r in self.rows], list(range(len(self.rows))))
        self.assertLessEqual({r[2] for r in self.rows}, DOMAINS)

    def test_the_main_thread_is_thread_1_and_the_only_one(self):
        self.assertEqual({r[1] for r in self.rows}, {1})

    def test_each_runtime_launch_holds_the_driver_launch_at_depth_1(self):
        launch = [("runtime", "cudaLaunchKernel_v7000", "enter", 0), ("driver", "cuLaunchKernel", "enter", 1),
                  ("driver", "cuLaunchKernel", "exit", 1), ("runtime", "cudaLaunchKernel_v7000", "exit", 0)]
        self.assertEqual(len(find_all(self.rows, launch)), 12)
        self.assertEqual(sum(1 for r in self.rows if r[4] == "cudaLaunchKernel_v7000"), 24)

    def test_the_device_sync_holds_the_context_sync_and_its_synchronize_event(self):
        sync = [("runtime", "cudaDeviceSynchronize_v3020", "enter", 0), ("driver", "cuCtxSynchronize", "enter", 1),
                ("synchronize", "-", "context_synchronized", 2), ("driver", "cuCtxSynchronize", "exit", 1),
                ("runtime", "cudaDeviceSynchronize_v3020", "exit", 0)]
        self.assertEqual(len(find_all(self.rows, sync)), 1)

    def test_every_exit_closes_the_last_open_enter_at_its_depth(self):
        # The job's first call (cudaFree) starts CUDA and so the tracer: its ENTER came before the subscription, and
        # the simulator sends no EXIT for a call it sent no ENTER for (tests/sim/common/api_trace.h).
        open_calls = []
        for _, _, domain, cbid, name, site, depth in self.rows:
            if site == "enter":
                self.assertEqual(depth, len(open_calls), name)
                open_calls.append((domain, cbid))
            elif site == "exit":
                self.assertEqual(open_calls.pop(), (domain, cbid), name)
                self.assertEqual(depth, len(open_calls), name)
            else:
                self.assertEqual(depth, len(open_calls), site)
        self.assertEqual(open_calls, [])


class Failures(unittest.TestCase):
    def test_without_a_trace_path_it_says_so_in_one_line_and_the_job_is_unchanged(self):
        done = run_job(None)
        self.assertEqual(done.returncode, 0)
        self.assertIn("launches: 12", done.stdout)
        self.assertEqual(done.stderr, "callback_trace: no trace: FIRSTASSERT_CALLBACK_TRACE is not set\n")

    def test_an_unwritable_path_is_one_line_and_no_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "missing", "x.trace")
            done = run_job(path)
            self.assertEqual(done.returncode, 0)
            self.assertEqual(done.stderr, f"callback_trace: cannot write {path}\n")
            self.assertFalse(os.path.exists(path))


if __name__ == "__main__":
    TRACER, RUNTIME_JOB, SIM_DIR = (os.path.abspath(p) for p in sys.argv[1:4])
    unittest.main(argv=sys.argv[:1] + sys.argv[4:], verbosity=2)
