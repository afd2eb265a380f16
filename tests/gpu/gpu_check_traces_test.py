#!/usr/bin/env python3
"""Test: scripts/gpu-check's callback-trace step (scripts/lib/gpu_check_traces.py) on the simulator: its runs under
the real tracer leave the traces and the stderr bytes the fixtures are copied from, its section says what was
recorded or why not, and the pack carries the tracer where gpu-check looks for it.

usage: gpu_check_traces_test.py TRACER SIM_DIR RUNTIME_JOB [TEST_NAME ...] [--except PATTERN ...]
       TRACER       build/tests/gpu/libfirstassert_callback_trace.so
       SIM_DIR      build/tests/sim (the simulator's libcuda.so.1, libcudart.so.13, libcupti.so.13)
       RUNTIME_JOB  build/tests/e2e/runtime_job, a CUDA runtime program of the simulator
"""
import os
import shutil
import sys
import tempfile
import unittest
import unittest.mock

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts", "lib"))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))

import callback_trace  # noqa: E402
import gpu_check  # noqa: E402
import gpu_check_traces as traces  # noqa: E402
import skip_aware  # noqa: E402
from gpu_check_run import Outcome  # noqa: E402
from gpu_check_table import CASES, PROBE_PROGRAMS  # noqa: E402

TRACER = SIM_DIR = RUNTIME_JOB = None
# What each stand-in program prints on stderr: not UTF-8 throughout, as a driver's bytes need not be.
STDERR_BYTES = b"driver says \xff\xfe at line 18\r\nno newline at the end"


def stand_in(directory, program):
    """A program standing in for the traced one: the simulator's runtime job (its own stderr dropped), then known
    bytes on stderr."""
    path = os.path.join(directory, program)
    escaped = "".join(f"\\{byte:03o}" for byte in STDERR_BYTES)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nLD_LIBRARY_PATH='{SIM_DIR}' '{RUNTIME_JOB}' --healthy 2>/dev/null >/dev/null\n"
                f"printf '{escaped}' >&2\n")
    os.chmod(path, 0o755)
    return path


def harness(out):
    args = gpu_check.make_parser().parse_args(["--timeout", "60", "--budget", "300"])
    return gpu_check.Harness(args, out, "")


class TraceStep(unittest.TestCase):
    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="gpu-check-traces-")
        self.cupti = os.path.join(SIM_DIR, "libcupti.so.13")

    def tearDown(self):
        shutil.rmtree(self.out, ignore_errors=True)

    def run_jobs(self, binaries, tracer):
        h = harness(self.out)
        results = {}
        for key, label, argv, why, name, shim, env in traces.jobs(binaries, tracer, self.cupti, self.out):
            results[key] = h.run(label, argv, name, shim, env) if argv else Outcome(not_run=why)
        return results

    def test_each_traced_program_leaves_its_trace_and_its_stderr_bytes_as_printed(self):
        builds = traces.traced_builds()
        binaries = {case.slug: (stand_in(self.out, case.slug), "") for case in builds.values()}
        results = self.run_jobs(binaries, TRACER)
        lines = traces.section(results, self.out, TRACER, self.cupti)
        where = os.path.join(self.out, traces.TRACE_DIR)
        self.assertEqual(lines[0], f"callback traces, without the shim (tracer {TRACER}; CUPTI {self.cupti}), in "
                                   f"{where}:")
        for index, program in enumerate(callback_trace.TRACED_PROGRAMS):
            with self.subTest(program=program):
                trace = callback_trace.read(os.path.join(where, program + ".trace"))
                events = sum(len(thread) for thread in trace.threads.values())
                self.assertGreater(events, 0)
                with open(os.path.join(where, program + ".stderr"), "rb") as f:
                    self.assertEqual(f.read(), STDERR_BYTES)
                said = lines[1 + index].strip()
                self.assertTrue(said.startswith(f"{program}: recorded, {events} callbacks ("), said)
                self.assertIn(f"on {len(trace.threads)} thread(s), 0 dropped", said)
                self.assertIn(f"exit 0, {len(STDERR_BYTES)} bytes on stderr", said)
        self.assertIn(f"cp {where}/*.trace {where}/*.stderr tests/gpu/fixtures/callbacks/", lines[4])
        self.assertIn(os.path.join(self.out, "runs") + "/<case>.<mode>/stdout.txt and stderr.txt", lines[5])
        self.assertEqual(sorted(os.listdir(where)),
                         sorted(p + s for p in callback_trace.TRACED_PROGRAMS for s in (".trace", ".stderr")))

    def test_without_the_tracer_or_the_programs_it_says_why_and_copies_nothing(self):
        results = self.run_jobs({}, None)
        lines = traces.section(results, self.out, None, None)
        self.assertIn("tracer none; CUPTI libcupti.so.13, as the loader finds it", lines[0])
        for index, program in enumerate(callback_trace.TRACED_PROGRAMS):
            self.assertTrue(lines[1 + index].strip().startswith(f"{program}: not recorded: no callback "
                                                                f"tracer ({traces.TRACER})"), lines[1 + index])
        self.assertFalse(any(" cp " in line for line in lines), lines)
        results = self.run_jobs({}, TRACER)
        lines = traces.section(results, self.out, TRACER, None)
        self.assertEqual(lines[1].strip(), f"{callback_trace.TRACED_PROGRAMS[0]}: not recorded: not built")
        self.assertEqual(os.listdir(os.path.join(self.out, traces.TRACE_DIR)), [])

    def test_a_run_that_leaves_no_trace_says_what_the_tracer_said(self):
        program = callback_trace.TRACED_PROGRAMS[0]
        traces.jobs({}, TRACER, None, self.out)  # makes the directory
        said = Outcome(returncode=3, stderr="probe output\ncallback_trace: no trace: cannot load CUPTI\n")
        self.assertEqual(traces.collect(program, said, self.out),
                         f"{program}: not recorded: the run (exit 3) left no trace; the tracer said: no trace: "
                         "cannot load CUPTI")
        silent = Outcome(returncode=0)
        self.assertIn("the tracer said nothing", traces.collect(program, silent, self.out))

    def test_an_unreadable_trace_is_set_aside_so_that_no_copy_takes_it(self):
        program = callback_trace.TRACED_PROGRAMS[0]
        traces.jobs({}, TRACER, None, self.out)
        path = os.path.join(self.out, traces.TRACE_DIR, program + ".trace")
        with open(path, "w") as f:
            f.write("# firstassert callback trace 1\n0\t1\truntime\n")
        line = traces.collect(program, Outcome(returncode=0), self.out)
        self.assertTrue(line.startswith(f"{program}: not recorded: "), line)
        self.assertEqual(os.listdir(os.path.dirname(path)), [program + ".trace.unreadable"])

    def test_a_rerun_into_the_same_out_starts_from_no_trace(self):
        program = callback_trace.TRACED_PROGRAMS[0]
        traces.jobs({}, TRACER, None, self.out)
        for suffix in (".trace", ".stderr", ".trace.unreadable"):
            open(os.path.join(self.out, traces.TRACE_DIR, program + suffix), "w").close()
        traces.jobs({}, TRACER, None, self.out)
        self.assertEqual(os.listdir(os.path.join(self.out, traces.TRACE_DIR)), [])


class Pieces(unittest.TestCase):
    def test_traced_programs_run_as_built_against_the_shared_runtime(self):
        nvcc_shared = next(case for case in CASES if case.name == "nvcc_shared")
        self.assertEqual(traces.traced_builds(), {"probe_breadcrumbs": PROBE_PROGRAMS["probe_breadcrumbs"],
                                                  "probe_graph_breadcrumbs": PROBE_PROGRAMS["probe_graph_breadcrumbs"],
                                                  "nvcc_assert": nvcc_shared})
        self.assertEqual(traces.traced_builds(cases=[c for c in CASES if c.name != "nvcc_shared"]).keys(),
                         {"probe_breadcrumbs", "probe_graph_breadcrumbs"}, "the static build is not a stand-in")

    def test_the_pack_carries_the_tracer_and_gpu_check_finds_it_beside_the_packed_shim(self):
        with tempfile.TemporaryDirectory() as pack, unittest.mock.patch.object(traces, "BUILT_TRACER", TRACER):
            said = []
            self.assertEqual(traces.pack(pack, said.append), [traces.TRACER])
            self.assertEqual(said, [])
            with open(TRACER, "rb") as built, open(os.path.join(pack, traces.TRACER), "rb") as packed:
                self.assertEqual(built.read(), packed.read())
            self.assertEqual(traces.find_tracer(os.path.join(pack, "libfirstassert.so")),
                             os.path.join(pack, traces.TRACER))
            with unittest.mock.patch.object(traces, "BUILT_TRACER", os.path.join(pack, "none", traces.TRACER)):
                self.assertEqual(traces.pack(pack, said.append), [])
            self.assertEqual(len(said), 1)
            self.assertIn("the pack records no callback traces", said[0])


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    TRACER, SIM_DIR, RUNTIME_JOB = (os.path.abspath(a) for a in sys.argv[1:4])
    skip_aware.main(sys.argv[4:])
