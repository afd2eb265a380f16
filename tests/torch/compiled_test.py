"""torch.compile on the simulated GPU: real torch and Triton compile each job's graphs (Dynamo, Inductor, Triton's
ptxas), the simulator runs the Triton kernels from the IR Triton keeps beside their cubins (tests/sim/triton), and
each job runs under `firstassert run` as a user runs it. A job is judged against what it planted: the kernel is a
Triton kernel of the op planted with the bad value, the confidence, and the model's line (the job's line marked
`# the culprit`), never the generated code.

usage: compiled_test.py TORCH_PYTHON SIM_DIR FIRSTASSERT PYTHON_PACKAGE_ROOT [unittest arguments]
"""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

TORCH_PYTHON, SIM_DIR, FIRSTASSERT, PACKAGE_ROOT = sys.argv[1:5]
del sys.argv[1:5]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import sim_job  # noqa: E402
from sim_job import JOBS  # noqa: E402


class Run(sim_job.Run):
    def __init__(self, job, shim=True, cache=None, timeout=600):
        # Each job compiles in its own Inductor cache (Triton's cache is inside it) unless one is handed over.
        self.cache = cache or tempfile.mkdtemp(prefix="firstassert-inductor-")
        super().__init__([TORCH_PYTHON, str(JOBS / job)], FIRSTASSERT, SIM_DIR, PACKAGE_ROOT, shim=shim,
                         env={"TORCHINDUCTOR_CACHE_DIR": self.cache}, timeout=timeout)


def step_lines(text):
    """The job's own progress lines ("step N ..."), less what Triton's warnings add."""
    return [line for line in text.splitlines() if line.startswith("step ")]


def planted_step(job):
    """The step whose batch the job plants the bad value in (its `if step == N:`)."""
    found = re.findall(r"if step == (\d+):", (JOBS / job).read_text())
    assert len(found) == 1, f"{job} plants {len(found)} times"
    return int(found[0])


def numbers(line):
    return [float(word) for word in line.split()[2:] if re.fullmatch(r"-?[0-9.e+-]+", word)]


class CompiledJobs(unittest.TestCase):
    def assert_failed_at_the_planted_step(self, run, job):
        """Every step before the planted one ran whole (what flowed into the kernels was the job's data) and the
        planted one did not finish."""
        steps = [int(line.split()[1]) for line in step_lines(run.stdout)]
        self.assertEqual(steps, list(range(planted_step(job))), run.stdout + run.stderr[-3000:])

    def assert_compiled_culprit(self, run, job, kernel_words, condition, confidences=("exact",)):
        self.assert_failed_at_the_planted_step(run, job)
        report = run.report()
        culprit = report["culprit"]
        detail = json.dumps({k: report[k] for k in ("decision", "culprit")}, indent=1)[:8000]
        self.assertIsNotNone(culprit, detail + run.stderr[-3000:])
        self.assertTrue(culprit["kernel"].startswith("triton_"), detail)
        for word in kernel_words:
            self.assertIn(word, culprit["kernel"], detail)
        self.assertIn(report["decision"]["confidence"], confidences, detail)
        message = culprit["device_message"] or {}
        self.assertIn(condition, message.get("condition", ""), detail)
        self.assertEqual(message.get("function"), "unknown", detail)  # what Triton's __assertfail is given
        compiled = culprit["compiled"]
        self.assertIsNotNone(compiled, detail)
        self.assertEqual(compiled["kernel"], culprit["kernel"], detail)
        # The device's location is the Triton kernel's generated file: the report says so, and names the model.
        self.assertEqual(message.get("file"), compiled["kernel_file"], detail)
        line, code = sim_job.marked(job, "# the culprit")
        model = [(pathlib.Path(m["file"]).name, m["line"]) for m in compiled["model_lines"]]
        self.assertIn((job, line), model, detail)
        self.assertIn(f"model: {JOBS / job}:{line} in ", run.stderr)
        # The values modes do not reach inside the graph: the report says what to rerun instead.
        self.assertIn("TORCH_COMPILE_DISABLE=1", compiled["values"], detail)
        # The summary names no generated file as the job's line.
        self.assertNotIn(f"launched from {run.cache}", run.stderr)
        # show (and the notebook cell, which shows the same rows) says where the device's location is.
        shown = subprocess.run([FIRSTASSERT, "show", str(run.report_paths[-1])], capture_output=True, text=True)
        self.assertEqual(shown.returncode, 0, shown.stderr)
        self.assertIn("that file and line are the Triton kernel's generated code, not the model", shown.stdout)
        self.assertIn(f"{JOBS / job}:{line} in ", shown.stdout)
        self.assertIn(code, shown.stdout)
        return report

    def test_compiled_embedding_out_of_range(self):
        job = "compiled_embedding_out_of_range.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_compiled_culprit(run, job, ["embedding"], "index out of bounds: 0 <= ")
        condition = report["culprit"]["device_message"]["condition"]
        self.assertTrue(condition.endswith(" < 64"), condition)  # the vocabulary's size, a static bound
        self.assertIn("aten.embedding", report["culprit"]["compiled"]["aten_ops"])
        # A second run of the same job loads its graph from Inductor's cache: the model's line is still known.
        again = Run(job, cache=run.cache)
        self.assert_compiled_culprit(again, job, ["embedding"], "index out of bounds: 0 <= ")

    def test_a_job_rerun_under_firstassert_finds_the_model_line_of_a_graph_compiled_without_it(self):
        # The usual way: the job fails bare (its graph compiled into Inductor's cache), then runs under firstassert,
        # which loads the graph from the cache instead of compiling it.
        job = "compiled_embedding_out_of_range.py"
        bare = Run(job, shim=False)
        self.assertNotEqual(bare.status, 0, bare.stderr[-3000:])
        self.assertIn("device-side assert triggered", bare.stderr)
        self.assertEqual(list(pathlib.Path(bare.cache).rglob("*.firstassert-nodes.json")), [])
        rerun = Run(job, cache=bare.cache)
        self.assert_compiled_culprit(rerun, job, ["embedding"], "index out of bounds: 0 <= ")

    def test_compiled_center_loss_with_dynamic_shapes(self):
        job = "compiled_center_loss_dynamic.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_compiled_culprit(run, job, ["index"], "index out of bounds: 0 <= ")
        condition = report["culprit"]["device_message"]["condition"]
        self.assertRegex(condition, r" < ks\d+$")  # the bound is the symbolic size of centers

    def test_compiled_loss_with_a_bad_label(self):
        job = "compiled_loss_bad_label.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        self.assert_compiled_culprit(run, job, [], "index out of bounds: 0 <= ")

    def test_compiled_gather_with_a_bad_index(self):
        job = "compiled_gather_bad_index.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        self.assert_compiled_culprit(run, job, ["gather"], "index out of bounds: 0 <= ")

    def test_hand_written_triton_kernel(self):
        job = "triton_kernel_assert.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        self.assert_failed_at_the_planted_step(run, job)
        report = run.report()
        culprit = report["culprit"]
        detail = json.dumps({k: report[k] for k in ("decision", "culprit")}, indent=1)[:8000]
        self.assertEqual(culprit["kernel"], "gather_rows", detail)
        self.assertEqual(report["decision"]["confidence"], "exact", detail)
        message = culprit["device_message"]
        self.assertEqual(message["condition"], "row index out of range", detail)
        self.assertEqual(pathlib.Path(message["file"]).name, job, detail)  # the kernel is the job's own code
        self.assertIsNone(culprit["compiled"], detail)  # not a torch.compile graph
        line, _ = sim_job.marked(job, "# the culprit")
        frames = [(pathlib.Path(f["file"]).name, f["line"]) for f in culprit["python_stack"]]
        self.assertIn((job, line), frames, detail)
        self.assertIn(f"{job}:{line} in", run.stderr)

    def test_reduce_overhead_replay(self):
        job = "compiled_reduce_overhead.py"
        run = Run(job)
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_compiled_culprit(run, job, ["embedding"], "index out of bounds: 0 <= ")
        self.assertIsNotNone(report["culprit"]["graph_node"], "the kernel ran as a node of a replayed CUDA graph")

    def test_healthy_compiled_job(self):
        job = "compiled_healthy.py"
        bare = Run(job, shim=False)
        self.assertEqual(bare.status, 0, bare.stderr[-3000:])
        watched = Run(job)
        self.assertEqual(watched.status, 0, watched.stderr[-3000:])
        self.assertEqual(step_lines(watched.stdout), step_lines(bare.stdout))
        self.assertEqual(watched.report_paths, [], watched.stderr[-3000:])
        # The compiled kernels computed: losses and gradients agree with the same steps run eagerly on the CPU.
        reference = subprocess.run([TORCH_PYTHON, str(JOBS / job), "eager-cpu"], capture_output=True, text=True,
                                   timeout=300)
        self.assertEqual(reference.returncode, 0, reference.stderr[-3000:])
        expected, got = step_lines(reference.stdout), step_lines(watched.stdout)
        self.assertEqual(len(got), 3, watched.stdout)
        self.assertEqual(len(expected), len(got), reference.stdout)
        for want, have in zip(expected, got):
            for a, b in zip(numbers(want), numbers(have)):
                self.assertAlmostEqual(a, b, delta=1e-3 * max(1.0, abs(a)), msg=f"{want} / {have}")


if __name__ == "__main__":
    unittest.main()
