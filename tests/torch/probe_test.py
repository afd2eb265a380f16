"""Values probe mode (firstassert.values.probe) on real PyTorch on the simulated GPU, as a user runs it:
`firstassert run --values=probe -- python job.py`, the job unchanged.

- Every covered op family (value_cases.py), in one process without ATen's device code (so nothing asserts): the
  values found for the launches of each bad call name the element and value the case planted, start with PyTorch's
  own CPU words where PyTorch has them, and those of each good call break nothing.
- Training jobs whose kernel asserts (tests/torch/jobs): the report's culprit carries the values of the very call
  that launched it, as each job marks the planted value (`# the bad value: target[17] = 10`); the stderr line and
  `firstassert show` say them; the launching line is still the job's. A graph replay's culprit says it was not
  probed. With two threads (only one probed), a kernel of the unprobed thread is never given a call's values.
- torchrun's ranks: each probed; `firstassert merge` gives the first rank's culprit value.
- A healthy job: no report, the same output as without firstassert, nothing said.

usage: probe_test.py TORCH_PYTHON SIM_DIR FIRSTASSERT PYTHON_PACKAGE_ROOT [unittest arguments]
"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

HERE = pathlib.Path(__file__).resolve().parent
TORCH_PYTHON, SIM_DIR, FIRSTASSERT, PACKAGE_ROOT = sys.argv[1:5]
del sys.argv[1:5]

sys.path.insert(0, str(HERE))
import sim_job  # noqa: E402
from sim_job import JOBS, marked  # noqa: E402


def simulated_gpu_env(device_code=True):
    return sim_job.simulated_gpu_env(SIM_DIR, PACKAGE_ROOT, device_code)


class Run(sim_job.Run):
    def __init__(self, arguments, values="probe", shim=True, device_code=True, timeout=300):
        super().__init__([TORCH_PYTHON] + arguments, FIRSTASSERT, SIM_DIR, PACKAGE_ROOT, options=["--values=" + values],
                         shim=shim, device_code=device_code, timeout=timeout)


class EveryFamily(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.job = Run([str(HERE / "probe_cases_job.py")], device_code=False, timeout=600)

    def test_each_bad_call_s_launches_carry_its_planted_value_in_pytorch_s_words(self):
        self.assertEqual(self.job.status, 0, self.job.stderr[-4000:])
        out = json.loads(self.job.stdout.splitlines()[-1])
        self.assertEqual(out["mode"], "probe")
        self.assertGreater(len(out["cases"]), 30)
        for seen in out["cases"]:
            with self.subTest(seen["name"]):
                bad, good = seen["bad"], seen["good"]
                self.assertGreater(bad["launches"], 0, "the op launched kernels to link its values to")
                values = bad["values"]
                self.assertIsNotNone(values, "a launch of the bad call has its values")
                self.assertTrue(values["found"], values)
                self.assertIn(seen["expect"], values["detail"])
                self.assertTrue(values["text"].startswith(values["torch_words"]), values["text"])
                if seen["cpu_raises"] and seen["same_words"]:
                    self.assertIsNotNone(seen["cpu"], "PyTorch's CPU op raises for this value")
                    self.assertEqual(seen["cpu"].split(": ", 1)[1], values["torch_words"].splitlines()[0])
                self.assertTrue(values["operands"], "the copied operands are summarized")
                self.assertGreater(good["launches"], 0)
                self.assertIsNotNone(good["values"], "a launch of the good call has its values")
                self.assertFalse(good["values"]["found"], good["values"])
                self.assertIn("breaks a condition", good["values"]["text"])

    def test_nothing_is_said_on_stderr(self):
        self.assertNotIn("firstassert:", self.job.stderr)


class AssertingJobs(unittest.TestCase):
    def assert_values(self, job, confidence, arguments=()):
        run = Run([str(JOBS / job)] + list(arguments))
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = run.report()
        culprit = report["culprit"]
        detail = json.dumps(culprit, indent=1)[:6000]
        values = culprit.get("values")
        self.assertIsNotNone(values, detail)
        _, planted = marked(job, "# the bad value:")
        self.assertTrue(values["found"], detail)
        self.assertIn(planted, values["detail"], detail)
        # The value is the planted one, as a number.
        self.assertEqual(values["value"], json.loads(planted.rsplit("= ", 1)[1]))
        # The confidence the job's launches allow (the same as under the torch suite's plain run: the probe's copies
        # are no kernel launches), and at exit the values are said of the culprit it claims.
        self.assertEqual(report["decision"]["confidence"], confidence, json.dumps(report["decision"]))
        self.assertRegex(run.stderr, r"values of the culprit's call( \([^)]*\))?: " + re.escape(values["torch_words"]))
        culprit_line, _ = marked(job, "# the culprit")
        self.assertIn(f"{job}:{culprit_line} in", run.stderr, "the summary names the job's line, not ours")
        shown = subprocess.run([FIRSTASSERT, "show", str(run.report_paths[-1])], capture_output=True, text=True,
                               env={"PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"})
        self.assertRegex(shown.stdout, r"\nvalues +" + re.escape(values["text"][:60]), shown.stdout[:4000])
        return report, run

    def test_classifier_s_bad_label(self):
        self.assert_values("mlp_bad_label.py", "exact")

    def test_token_model_s_id_past_the_vocabulary_while_a_side_stream_works(self):
        # Two launches could have failed: the embedding's gather and the side stream's matmul (still queued when the
        # gather asserted). The assertion line's block and thread fit only the gather, so the report singles it out
        # (likely, as the torch suite's plain run of the same job requires); its launch carries its call's values,
        # and the matmul's (no covered op) none found.
        job = "token_model_side_stream.py"
        run = Run([str(JOBS / job)])
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = run.report()
        launches = [report["culprit"]] + report["candidates"]
        detail = json.dumps(launches, indent=1)[:6000]
        self.assertEqual(report["decision"]["confidence"], "likely", detail)
        self.assertIn("_scatter_gather_elementwise_kernel", report["culprit"]["kernel"], detail)
        _, planted = marked(job, "# the bad value:")
        self.assertTrue(report["culprit"]["values"]["found"], detail)
        self.assertIn(planted, report["culprit"]["values"]["detail"], detail)
        for launch in launches:
            if "gemm" in (launch["kernel"] or ""):
                self.assertFalse((launch.get("values") or {}).get("found"), detail)
        # Said by the job's side at exit when the report it reads has singled out the gather already; else by the
        # shim's own exit handler, after the summary it repeats once the device's lines changed its answer.
        self.assertRegex(run.stderr, r"values of the culprit's call( \(_scatter_gather_elementwise_kernel\))?: "
                                     r"[^\n]*indices\[2, 5\] = 100", run.stderr[-3000:])

    def test_gather_s_index(self):
        self.assert_values("gather_bad_index.py", "exact")

    def test_binary_cross_entropy_s_probability(self):
        self.assert_values("bce_out_of_range.py", "exact")

    def test_multinomial_s_negative_weight(self):
        self.assert_values("multinomial_negative_weight.py", "exact")

    def test_the_probed_thread_s_bad_label_among_another_thread_s_launches(self):
        # Both threads run the same kernel: when the breadcrumbs leave one of each in flight, both fit the device's
        # line and the report keeps a window, whose shown launch may be the other thread's. Whatever the decision,
        # the values found are the main thread's (its tid is the process's pid), with the planted label, and the
        # culprit carries them when the report claims it.
        job = "two_threads_bad_label.py"
        run = Run([str(JOBS / job), "main"])
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = run.report()
        threads = {launch["thread"] for launch in report["recent_launches"]}
        self.assertGreaterEqual(len(threads), 2, "both threads' launches are in the numbering")
        launches = [report["culprit"]] + report["candidates"]
        detail = json.dumps([{k: l.get(k) for k in ("seq", "thread", "values")} for l in launches], indent=1)[:6000]
        found = [l for l in launches if (l.get("values") or {}).get("found")]
        self.assertTrue(found, detail)
        _, planted = marked(job, "# the bad value:")
        for launch in found:
            self.assertEqual(launch["thread"], report["process"]["pid"], detail)
            self.assertIn(planted, launch["values"]["detail"], detail)
        if report["decision"]["confidence"] in ("exact", "likely"):
            self.assertTrue((report["culprit"].get("values") or {}).get("found"), detail)

    def test_an_unprobed_thread_s_kernel_is_never_given_a_probed_call_s_values(self):
        run = Run([str(JOBS / "two_threads_bad_label.py"), "worker"])
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        culprit = run.report()["culprit"]
        detail = json.dumps(culprit, indent=1)[:4000]
        self.assertIn("nll_loss", culprit["kernel"], detail)
        values = culprit.get("values")
        self.assertIsNotNone(values, detail)
        self.assertFalse(values["probed"], detail)
        self.assertFalse(values["found"], detail)
        self.assertIn("no probed call made this launch", values["text"])

    def test_a_graph_replay_s_culprit_says_it_was_not_probed(self):
        run = Run([str(JOBS / "graph_replay_bad_label.py")])
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        culprit = run.report()["culprit"]
        self.assertIsNotNone(culprit["graph_node"])
        self.assertFalse(culprit["values"]["probed"], json.dumps(culprit)[:3000])
        self.assertIn("CUDA graph replay", culprit["values"]["text"])
        self.assertIn("ops captured into a CUDA graph are not probed", run.stderr)


class Distributed(unittest.TestCase):
    def test_torchrun_s_ranks_are_probed_and_merge_gives_the_first_rank_s_value(self):
        reports = tempfile.mkdtemp(prefix="firstassert-probe-torchrun-")
        job = "torchrun_rank1_bad_label.py"
        command = [FIRSTASSERT, "run", "--values=probe", "--dir", reports, "--", TORCH_PYTHON, "-m",
                   "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(JOBS / job)]
        done = subprocess.run(command, env=simulated_gpu_env(), capture_output=True, text=True, timeout=600)
        self.assertNotEqual(done.returncode, 0, done.stderr[-3000:])
        merged = subprocess.run([FIRSTASSERT, "merge", "--json", reports], capture_output=True, text=True)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        first = [f for f in json.loads(merged.stdout)["failures"] if f["role"] == "first"]
        self.assertEqual(len(first), 1, merged.stdout[:4000])
        self.assertEqual(first[0]["rank"], 1, merged.stdout[:4000])
        _, planted = marked(job, "# the bad value:")
        self.assertIn(planted, first[0]["values"] or "", merged.stdout[:4000])
        text = subprocess.run([FIRSTASSERT, "merge", reports], capture_output=True, text=True)
        self.assertIn("  values  Target 10 is out of bounds. nll_loss: " + planted, text.stdout)


class HealthyJob(unittest.TestCase):
    def test_no_report_the_same_output_nothing_said(self):
        bare = Run([str(JOBS / "healthy.py")], shim=False)
        probed = Run([str(JOBS / "healthy.py")])
        self.assertEqual(bare.status, 0, bare.stderr[-3000:])
        self.assertEqual(probed.status, 0, probed.stderr[-3000:])
        self.assertEqual(probed.stdout, bare.stdout)
        self.assertEqual(probed.report_paths, [])
        self.assertNotIn("firstassert:", probed.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
