#!/usr/bin/env python3
"""Test: probes 7 to 9 of scripts/gpu-check (tests/gpu/probe_facts.cu, scripts/lib/gpu_check_facts.py). Their sections
on given outcomes of the program; and the program itself, built by nvcc for the simulator, run there: it prints each
probe's lines and answer, and where the simulator does not model a call, its error name, never a crash.

usage: gpu_check_facts_test.py SIM_DIR NVCC [TEST_NAME ...] [--except PATTERN ...]
       SIM_DIR  build/tests/sim (the simulator's libcuda.so.1, libcudart.so.13 and libcupti.so.13)
       NVCC     the toolkit's nvcc (meson's cuda-root), present or not: OnTheSimulator needs it (its own meson test)
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "scripts", "lib"))
sys.path.insert(0, os.path.join(REPO, "tests", "support"))
sys.path.insert(0, HERE)

import callback_conformance  # noqa: E402  (its build: an nvcc program linked against the simulator's runtime)
import gpu_check_facts as facts  # noqa: E402
import skip_aware  # noqa: E402
from gpu_check_run import Outcome  # noqa: E402
from gpu_check_table import PROBE_PROGRAMS  # noqa: E402

SIM_DIR = NVCC = None
TITLES = [title for _, title in facts.SECTIONS]


def split(lines):
    """{section number: its lines without the indentation} of printed sections."""
    found, current = {}, None
    for line in lines:
        if not line.startswith("    "):
            current = int(line.split(".", 1)[0])
            found[current] = []
        else:
            found[current].append(line[4:])
    return found


class Sections(unittest.TestCase):
    def test_each_probe_gets_its_own_lines_under_its_title_in_order(self):
        said = {7: ["read 8 of 8", "answer: yes"], 8: ["cudaGetDevice: 20.0 ns", "answer: 5 ns"],
                9: ["global capture: CUDA_SUCCESS", "answer: global"]}
        stdout = "".join(f"probe{n}: {line}\n" for n in (8, 9, 7) for line in said[n])  # the order the program runs
        lines = facts.sections(Outcome(returncode=0, stdout="probe: not a probe's line\n" + stdout))
        self.assertEqual([line for line in lines if not line.startswith("    ")], TITLES)
        self.assertEqual(split(lines), said)

    def test_a_program_that_died_midway_says_so_under_each_probe(self):
        stdout = "probe8: cudaGetDevice: 20.0 ns\nprobe8: answer: 5 ns\nprobe9: global capture: CUDA_SUCCESS\n"
        died = Outcome(returncode=-11, stdout=stdout, stderr="one\ntwo\nthree\n")
        ended = "the probe ended with died of SIGSEGV"
        self.assertEqual(split(facts.sections(died)), {
            7: [ended, "stderr: two", "stderr: three"],
            8: ["cudaGetDevice: 20.0 ns", "answer: 5 ns", ended, "stderr: two", "stderr: three"],
            9: ["global capture: CUDA_SUCCESS", ended, "stderr: two", "stderr: three"]})

    def test_a_probe_without_an_answer_in_a_run_that_ended_well_says_so(self):
        stdout = "probe7: answer: yes\nprobe8: answer: 5 ns\nprobe9: global capture: CUDA_SUCCESS\n"
        found = split(facts.sections(Outcome(returncode=0, stdout=stdout)))
        self.assertEqual(found[9], ["global capture: CUDA_SUCCESS", "no answer: the program printed none for this "
                                                                    "probe"])
        self.assertEqual(found[7], ["answer: yes"])

    def test_a_program_that_did_not_run_or_found_no_device_says_why(self):
        self.assertEqual(split(facts.sections(Outcome(not_run="no nvcc (PATH, /usr/local/cuda/bin)"))),
                         {n: ["not run: no nvcc (PATH, /usr/local/cuda/bin)"] for n in (7, 8, 9)})
        self.assertEqual(split(facts.sections(None)), {n: ["not run"] for n in (7, 8, 9)})
        no_device = Outcome(returncode=5, stdout="probe: no usable CUDA device (cudaErrorNoDevice)\n")
        self.assertEqual(split(facts.sections(no_device)),
                         {n: ["the probe ended with exit 5: no usable CUDA device (cudaErrorNoDevice)"]
                          for n in (7, 8, 9)})

    def test_the_program_is_built_with_the_other_probes_against_the_shared_runtime(self):
        case = PROBE_PROGRAMS[facts.PROGRAM]
        self.assertEqual((case.program, case.nvcc_flags), ("probe_facts.cu", ("-cudart", "shared")))


class OnTheSimulator(unittest.TestCase):
    """probe_facts built by nvcc, linked against the simulator's runtime (as callback_conformance.py links its
    programs), run with the simulator's CUPTI. The simulator runs no device code of an nvcc program, so the answers
    are not the GPU's; what is checked is that every probe runs to its answer and says what it measured."""

    @classmethod
    def setUpClass(cls):
        if not os.access(NVCC, os.X_OK):
            raise unittest.SkipTest(f"no nvcc at {NVCC} (meson's cuda-root)")
        cls.work = tempfile.TemporaryDirectory()
        program = os.path.join(cls.work.name, "probe_facts")
        why = callback_conformance.build(NVCC, os.path.join(HERE, "probe_facts.cu"), program, SIM_DIR)
        if why:
            raise AssertionError(why)
        cls.done = subprocess.run([program, os.path.join(SIM_DIR, "libcupti.so.13")], capture_output=True,
                                  text=True, env=dict(os.environ, LD_LIBRARY_PATH=SIM_DIR), timeout=120)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def lines(self, number):
        return [line for line in self.done.stdout.splitlines() if line.startswith(f"probe{number}: ")]

    def test_it_runs_to_the_end_and_answers_every_probe(self):
        self.assertEqual(self.done.returncode, 0, self.done.stdout + self.done.stderr)
        for number in (7, 8, 9):
            with self.subTest(probe=number):
                said = self.lines(number)
                self.assertGreater(len(said), 1, self.done.stdout)
                self.assertTrue(said[-1].startswith(f"probe{number}: answer: "), said)

    def test_probe8_times_each_call_with_and_without_a_subscriber(self):
        for call in ("cudaGetDevice", "cudaStreamQuery (an idle stream)", "cudaLaunchKernel (an empty kernel)"):
            with self.subTest(call=call):
                said = [line for line in self.lines(8) if line.startswith(f"probe8: {call}: ")]
                self.assertEqual(len(said), 1, self.done.stdout)
                bare, subscribed, more = (float(n) for n in re.findall(r"([-+]?\d+\.\d) ns", said[0]))
                self.assertAlmostEqual(more, subscribed - bare, delta=0.11)

    def test_probe9_tells_each_capture_mode_with_result_names(self):
        said = self.lines(9)
        for mode in ("global", "thread-local", "relaxed"):
            with self.subTest(mode=mode):
                line = next((l for l in said if l.startswith(f"probe9: {mode} capture: ")), None)
                self.assertIsNotNone(line, self.done.stdout)
                # Each call's result by its name: the driver's CUresult, or the runtime's error where capture began.
                self.assertRegex(line, r"(returned CUDA_[A-Z_]+ \(\d+\)|cudaStreamBeginCapture returned cuda\w+ "
                                       r"\(\d+\))")

    def test_probe7_reads_each_streams_slots_after_the_sync(self):
        said = "\n".join(self.lines(7))
        self.assertRegex(said, r"the failing stream's sync returned cuda\w+ \(\d+\)")
        for part in ("failing stream, a kernel before the assert wrote 8 values 0x7a00..0x7a07: read ",
                     "other stream (synchronized before the assert, returned "):
            self.assertIn(part, said)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    SIM_DIR, NVCC = (os.path.abspath(a) for a in sys.argv[1:3])
    skip_aware.main(sys.argv[3:])
