"""The torch suite's jobs as scripts/gpu-check's cases, end to end on the simulated GPU: gpu-check's own harness
(main()) runs two of them, the classifier and the graph replay, with real PyTorch (this Python, the torch venv's) in
its bare and default modes, and its judge must pass them; the rows must say what the cases expect.
The same cases run on a GPU (scripts/gpu-check), so this shows they pass where the torch suite says the jobs do.

usage: gpu_check_jobs_test.py SIM_DIR SHIM PYTHON_PACKAGE_ROOT [unittest arguments]
       run with the python of the torch venv (scripts/test installs it)
"""
import os
import pathlib
import shutil
import sys
import tempfile
import unittest
import unittest.mock

SIM_DIR, SHIM, PACKAGE_ROOT = (os.path.abspath(path) for path in sys.argv[1:4])  # the runs have their own cwd
del sys.argv[1:4]

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "scripts" / "lib"))
sys.path.insert(0, str(HERE.parent / "support"))
import sim_job  # noqa: E402
from gpu_check_runs import rows_by_case_and_mode, run_main  # noqa: E402
from gpu_check_judge import failing_line, marker_of  # noqa: E402
from gpu_check_table import TORCH_JOBS  # noqa: E402

RUN = ("mlp_bad_label", "graph_replay_bad_label")
CASE = {case.name: case for case in TORCH_JOBS}


class JobsOnTheSimulator(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="gpu-check-jobs-")
        # The runs inherit the harness's environment: the simulator's libraries and ATen's device code, as the torch
        # suite gives its jobs (sim_job.simulated_gpu_env).
        with unittest.mock.patch.dict(os.environ, sim_job.simulated_gpu_env(SIM_DIR, PACKAGE_ROOT), clear=True):
            cls.status, cls.printed, summary = run_main(["--shim", SHIM, "--out", cls.out, "--jobs", "2", "--timeout",
                                                         "240", "--only", ",".join(RUN), "--no-probes",
                                                         "--no-schedule"])
        cls.rows = rows_by_case_and_mode(summary)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_every_row_passes(self):
        self.assertEqual(sorted(self.rows), sorted((name, mode) for name in RUN for mode in CASE[name].modes))
        for key, row in self.rows.items():
            self.assertEqual(row["verdict"], "PASS", (key, row["notes"]))
        self.assertEqual(self.status, 0, self.printed)

    def test_the_rows_name_the_expected_kernel_at_the_jobs_marked_line(self):
        for name in RUN:
            case = CASE[name]
            with self.subTest(case=name):
                row = self.rows[(name, "default")]
                self.assertTrue(row["reported"].startswith(case.expect[0]), row)
                self.assertIn(row["confidence"], case.confidence)
                self.assertEqual(row["python_frame"], f"{case.program}:{failing_line(case.source, marker_of(case))}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
