"""The torch suite: real PyTorch (the PyPI CUDA wheel, .tools/torch) running training jobs on the simulated GPU,
under firstassert as a user runs it (`firstassert run -- python job.py`), each job judged against what it planted:
the asserting kernel, the confidence the evidence allows, the job's own line that called the op (marked
`# the culprit` in the job), and the device's assertion text.

usage: torch_test.py TORCH_PYTHON SIM_DIR FIRSTASSERT PYTHON_PACKAGE_ROOT [unittest arguments]
"""
import json
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import unittest

TORCH_PYTHON, SIM_DIR, FIRSTASSERT, PACKAGE_ROOT = sys.argv[1:5]
del sys.argv[1:5]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import sim_job  # noqa: E402
from sim_job import JOBS  # noqa: E402


def simulated_gpu_env(extra=None):
    return sim_job.simulated_gpu_env(SIM_DIR, PACKAGE_ROOT, extra=extra)


def marked_line(job, mark="# the culprit"):
    return sim_job.marked(job, mark)[0]


class Run(sim_job.Run):
    def __init__(self, job, shim=True, env=None, timeout=300, args=()):
        super().__init__([TORCH_PYTHON, str(JOBS / job), *args], FIRSTASSERT, SIM_DIR, PACKAGE_ROOT, shim=shim,
                         env=env, timeout=timeout)


# nn.Embedding's forward selects rows (index_select) in one of these kernels, by torch version and shapes: each with
# its device condition.
EMBEDDING_LOOKUP = {
    "_scatter_gather_elementwise_kernel": "idx_dim >= 0 && idx_dim < index_size",
    "vectorized_gather_kernel": "ind >=0 && ind < ind_dim_size",
    "indexSelectLargeIndex": "srcIndex < srcSelectDimSize",
}


# The hint a culprit of each kernel family gets (src/report/hints.json), whatever the version launched; the
# binary_cross_entropy one by what was out of range.
HINTS_BY_KERNEL = {
    "nll_loss_forward_reduce_cuda_kernel_2d": {"class-index-out-of-range"},
    "_scatter_gather_elementwise_kernel": {"gather-scatter-index-out-of-bounds"},
    "vectorized_gather_kernel": {"gather-scatter-index-out-of-bounds", "index-select-out-of-range"},
    "indexSelectLargeIndex": {"index-select-out-of-range"},
    "binary_cross_entropy": {"bce-input-out-of-range", "bce-target-out-of-range"},
    "renormRowsL1": {"multinomial-invalid-distribution"},
    "sampleMultinomialOnce": {"multinomial-invalid-distribution"},
}

# The kernels the jobs plant their asserts in, by the name parts cubin_facts.py finds them with.
ASSERTING_KERNELS = ["nll_loss_forward_reduce_cuda_kernel_2d", "_scatter_gather_elementwise_kernel",
                     "vectorized_gather_kernel", "indexSelectLargeIndex", "29binary_cross_entropy_out_cuda",
                     "sampleMultinomialOnce", "renormRowsL1"]
_wheel_sites = None


def wheel_sites():
    """The wheel's assert sites (sim_job.wheel_assert_sites), read once."""
    global _wheel_sites
    if _wheel_sites is None:
        _wheel_sites = sim_job.wheel_assert_sites(TORCH_PYTHON, ASSERTING_KERNELS)
    return _wheel_sites


def device_printed(run):
    """Whether the device printed an assertion line on the job's stderr."""
    return re.search(r"Assertion `.*` failed", run.stderr) is not None


class TorchJobs(unittest.TestCase):
    def assert_device_line_is_the_wheels(self, culprit, detail):
        """The assertion line the device printed for the culprit is one the wheel's own device code holds for that
        kernel: its file, line, function and condition, as the wheel's cubins pass them to __assertfail. Where the
        kernel's own code holds no call cubin_facts.py can read (the assert sits in a device function it calls), the
        sites of its family's other instances stand in."""
        message = culprit["device_message"]
        self.assertIn(culprit["mangled"], wheel_sites(), f"not a kernel of the wheel's cubins\n{detail}")
        sites = wheel_sites()[culprit["mangled"]]
        if not sites:
            family = next(part for part in ASSERTING_KERNELS if part in culprit["mangled"])
            sites = [site for name, found in wheel_sites().items() if family in name for site in found]
        printed = (message["line"], message["file"], message["function"], message["condition"])
        self.assertTrue(any(line == printed[0] and set(printed[1:]) <= strings for line, strings in sites),
                        f"{printed} is not among the wheel's {sorted((l, sorted(s)) for l, s in sites)}")

    def assert_culprit(self, run, job, kernel, condition, confidences):
        """condition: the device's assertion condition the culprit carries; None where the device printed none.
        kernel: a part of the culprit kernel's name, or {name part: condition} where torch versions launch different
        kernels for the op (the condition is then the named kernel's)."""
        report = run.report()
        culprit = report["culprit"]
        detail = json.dumps({k: report[k] for k in ("decision", "culprit")}, indent=1)[:6000]
        self.assertIsNotNone(culprit, detail)
        if isinstance(kernel, dict):
            named = [part for part in kernel if part in culprit["kernel"]]
            self.assertEqual(len(named), 1, detail)
            kernel, condition = named[0], kernel[named[0]]
        self.assertIn(kernel, culprit["kernel"], detail)
        if not device_printed(run):
            # The device prints its lines at a synchronization; torch 2.4 and 2.8 may end the job first (std::terminate
            # from a destructor once a cudaGetLastError saw the error): no line, so none can be attached.
            condition = None
        self.assertIn(report["decision"]["confidence"], confidences, detail)
        if condition is None:
            self.assertIsNone(culprit["device_message"], detail)
        else:
            self.assertIn(condition, (culprit["device_message"] or {}).get("condition", ""), detail)
            self.assert_device_line_is_the_wheels(culprit, detail)
        frames = [(pathlib.Path(f["file"]).name, f["line"]) for f in culprit["python_stack"]]
        self.assertIn((job, marked_line(job)), frames, detail)
        # The hint is the one for what the job planted (its `# the culprit` line's comment names no hint: the kernel
        # family does), found by the device line's condition. The summary, printed when the error is first seen, has
        # it where it had the device's line to match by.
        # Without the line, a hint found by the kernel's name alone can be another family's (binary_cross_entropy's
        # kernels match class-index-out-of-range's "cross_entropy": a defect of hints.json, in the note).
        family = next(k for k in HINTS_BY_KERNEL if k in culprit["kernel"])
        if culprit["device_message"] is not None:
            self.assertIsNotNone(culprit["hint"], detail)
            self.assertIn(culprit["hint"]["id"], HINTS_BY_KERNEL[family], detail)
        if "firstassert: device: " in run.stderr:
            self.assertIn("firstassert: hint: ", run.stderr)
        # The summary on stderr names the job's own line, not torch's.
        self.assertIn(f"{job}:{marked_line(job)} in", run.stderr)
        return report

    def test_mlp_classifier_with_a_bad_label(self):
        run = Run("mlp_bad_label.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        self.assertIn("device-side assert triggered", run.stderr)
        # One launching thread on one stream at the fault (autograd's thread has not run backward for the failing
        # step): the breadcrumbs leave one candidate.
        self.assert_culprit(run, "mlp_bad_label.py", "nll_loss_forward_reduce_cuda_kernel_2d",
                            "t >= 0 && t < n_classes", {"exact"})

    def test_a_model_split_over_two_gpus_whose_loss_asserts_on_cuda_1(self):
        job = "split_model_bad_label.py"
        run = Run(job, env={"SIMCUDA_DEVICES": "2"})
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_culprit(run, job, "nll_loss_forward_reduce_cuda_kernel_2d", "t >= 0 && t < n_classes",
                                     {"exact"})
        detail = json.dumps({k: report[k] for k in ("first_error", "devices", "decision")}, indent=1)
        # The failing GPU is cuda:1, named first; cuda:0's launches were never candidates.
        self.assertEqual(report["first_error"]["device"], 1, detail)
        self.assertEqual(report["culprit"]["device"], 1, detail)
        self.assertTrue(all(c["device"] == 1 for c in report["candidates"]), detail)
        self.assertEqual([d["ordinal"] for d in report["devices"]], [1, 0], detail)
        self.assertNotEqual(report["devices"][0]["uuid"], report["devices"][1]["uuid"], detail)
        self.assertIn("firstassert: gpu: cuda:1 ", run.stderr)
        self.assertIn("1 of the 2 GPUs this process used", run.stderr)

    def assert_exact_at_the_first_summary(self, run):
        """The summary printed when the error was seen already names the culprit exactly (not only the report
        rewritten at exit)."""
        kernel_lines = [line for line in run.stderr.splitlines() if line.startswith("firstassert: kernel ")]
        self.assertTrue(kernel_lines, run.stderr[-3000:])
        self.assertIn("nll_loss_forward_reduce_cuda_kernel_2d", kernel_lines[0])
        self.assertIn("[exact: ", kernel_lines[0])

    def plain_loop_condition(self, run):
        """How PyTorch ended the plain loop, which depends on timing alone: the error raised in Python at the next
        call of the main thread (exit 1), or, where autograd's thread meets the sticky error first (its device guard
        at the start of backward), std::terminate from that thread (SIGABRT), before any host sync had the device
        print its assertion line. Returns the condition the culprit must carry: the device's, where it printed one."""
        aborted = run.status == -signal.SIGABRT
        if aborted:
            # torch's own std::terminate: a c10 error thrown where torch cannot pass it on (autograd's thread in
            # 2.15; a device guard's destructor on the main thread in 2.8).
            self.assertRegex(run.stderr, r"terminate called after throwing an instance of 'c10::\w*Error'")
        else:
            self.assertEqual(run.status, 1, run.stderr[-3000:])
            self.assertIn("device-side assert triggered", run.stderr)
        printed = "Assertion `t >= 0 && t < n_classes` failed" in run.stderr
        self.assertTrue(printed or aborted, run.stderr[-3000:])
        return "t >= 0 && t < n_classes" if printed else None

    def test_the_plain_loop_without_a_host_read_before_backward(self):
        run = Run("plain_loop_bad_label.py")
        condition = self.plain_loop_condition(run)
        # The backward pass's launches on autograd's thread were queued after the loss kernel's call had returned,
        # behind its breadcrumb: the loss kernel is the only launch that can have failed. (Where torch ended the job
        # before backward launched anything, as 2.4 and 2.8 may, there are no such launches to explain.)
        report = self.assert_culprit(run, "plain_loop_bad_label.py", "nll_loss_forward_reduce_cuda_kernel_2d",
                                     condition, {"exact"})
        if any(launch["seq"] > report["culprit"]["seq"] for launch in report["recent_launches"]):
            self.assertIn("each call began after the call of an unfinished launch", report["decision"]["reason"])
        self.assert_exact_at_the_first_summary(run)

    def test_the_plain_loop_whose_data_loader_pins_memory_on_its_own_thread(self):
        run = Run("plain_loop_bad_label.py", args=["pinned"])
        condition = self.plain_loop_condition(run)
        self.assert_culprit(run, "plain_loop_bad_label.py", "nll_loss_forward_reduce_cuda_kernel_2d", condition,
                            {"exact"})
        self.assert_exact_at_the_first_summary(run)

    def test_token_model_with_an_id_past_the_vocabulary_while_a_side_stream_works(self):
        run = Run("token_model_side_stream.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        # The side stream's matmuls were still queued when the embedding's gather asserted (the fault drops them),
        # so two launches could have failed; the assertion line's block and thread fit only the gather. Which gather
        # kernel index_select runs for these rows is the version's choice (2.15: the scatter-gather one; 2.8: the
        # vectorized gather; 2.4: indexSelectLargeIndex). The device prints its lines at a synchronization; where
        # torch ends the job first (2.8 aborts from a device guard's destructor when a cudaGetLastError has seen the
        # error), there is no line to tell the two apart, and both are named, neither claimed.
        if device_printed(run):
            report = self.assert_culprit(run, "token_model_side_stream.py", EMBEDDING_LOOKUP, None, {"likely"})
        else:
            report = run.report()
            self.assertEqual(report["decision"]["confidence"], "window", json.dumps(report["decision"]))
            line = ("token_model_side_stream.py", marked_line("token_model_side_stream.py"))
            lookups = [c for c in report["candidates"] if any(k in c["kernel"] for k in EMBEDDING_LOOKUP)
                       and line in [(pathlib.Path(f["file"]).name, f["line"]) for f in c["python_stack"]]]
            self.assertEqual(len(lookups), 1, json.dumps(report["candidates"])[:4000])
            self.assertIn("token_model_side_stream.py:%d" % line[1], run.stderr)
        self.assertGreaterEqual(report["decision"]["candidates"], 2)

    def test_gather_with_an_index_past_the_dimension(self):
        run = Run("gather_bad_index.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        self.assert_culprit(run, "gather_bad_index.py", "_scatter_gather_elementwise_kernel",
                            "idx_dim >= 0 && idx_dim < index_size", {"exact"})

    def test_binary_cross_entropy_with_a_probability_above_one(self):
        run = Run("bce_out_of_range.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        # One stream, one launching thread, and the step's .item() reads the error back: one candidate.
        report = self.assert_culprit(run, "bce_out_of_range.py",
                                     "vectorized_elementwise_kernel<4, at::native::binary_cross_entropy_out_cuda",
                                     "input_val >= zero && input_val <= one", {"exact"})
        # 2048 aligned floats: vectorized_elementwise_kernel<4> with 8 elements per thread, grid 2 of 128 threads.
        # Pixel (19, 18) is element 1234: block 1 (elements 1024..2047, a full block: vectorized loads), its element
        # 210, in the 4-float vector 52 that thread 52 loads. (The line is the wheel's: assert_culprit checks it.)
        message = report["culprit"]["device_message"]
        if device_printed(run):
            self.assertEqual((message["block"], message["thread"]), ([1, 0, 0], [52, 0, 0]))

    def test_multinomial_with_replacement_and_a_negative_weight(self):
        run = Run("multinomial_negative_weight.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_culprit(run, "multinomial_negative_weight.py", "renormRowsL1", "!(val < zero)", {"exact"})
        # renormRows: grid min(8 rows, 4 * SMs), 64 threads (50 columns in warps); row 3 in block 3, column 17 in
        # thread 17. (The line is the wheel's: assert_culprit checks it.)
        message = report["culprit"]["device_message"]
        if device_printed(run):
            self.assertEqual((message["block"], message["thread"]), ([3, 0, 0], [17, 0, 0]))

    def test_every_bce_forward_kernel_the_wheel_can_launch_is_one_libsimaten_models(self):
        # binary_cross_entropy.cpp builds its exact kernel names from parts, for each wheel it runs. The wheel's own:
        # the forward kernels of its cubins, less those gpu_kernel never launches for BCE (the dynamic-casting ones,
        # LoadWithCast and gpu_kernel_impl<, and the sm_10.7-only one, a `true` last template argument).
        names = subprocess.run(
            [TORCH_PYTHON, "-c", "import ctypes, sys; f = ctypes.CDLL(sys.argv[1]).simaten_bce_forward_names; "
             "f.restype = ctypes.c_char_p; print(f().decode(), end='')", f"{SIM_DIR}/aten/libsimaten.so"],
            env=simulated_gpu_env(), capture_output=True, text=True, timeout=120)
        self.assertEqual(names.returncode, 0, names.stderr[-3000:])
        registered = set(names.stdout.split())
        forward = {n for n in wheel_sites() if "29binary_cross_entropy_out_cuda" in n}
        reachable = {n for n in forward if "LoadWithCast" not in n and "gpu_kernel_implI" not in n
                     and not re.search(r"Lb1EEEviT0_T1_$", n)}
        self.assertGreaterEqual(len(reachable), 16, sorted(forward))
        self.assertEqual(sorted(reachable - registered), [])

    def test_a_bad_label_inside_a_cuda_graph_replay_names_the_node_where_it_was_captured(self):
        run = Run("graph_replay_bad_label.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        report = self.assert_culprit(run, "graph_replay_bad_label.py", "nll_loss_forward_reduce_cuda_kernel_2d",
                                     "t >= 0 && t < n_classes", {"exact"})
        self.assertIsNotNone(report["culprit"]["graph_node"], "the culprit is a node of the replayed graph")
        self.assertIn("captured from", run.stderr)

    def test_profiler_started_mid_job_lists_kernels_and_the_culprit_is_still_named(self):
        run = Run("profiler_mid_job.py")
        self.assertNotEqual(run.status, 0, run.stderr[-3000:])
        counts = [int(line.split()[1]) for line in run.stdout.splitlines() if line.startswith("PROFILED_KERNELS")]
        self.assertTrue(counts and counts[0] > 0, run.stdout + run.stderr[-3000:])
        self.assertIn("gemm", run.stdout, "the profile lists the cuBLAS stand-in's kernels")
        self.assert_culprit(run, "profiler_mid_job.py", "nll_loss_forward_reduce_cuda_kernel_2d",
                            "t >= 0 && t < n_classes", {"exact"})

    def test_torchrun_job_whose_rank_1_fails_is_merged_to_name_rank_1(self):
        reports = tempfile.mkdtemp(prefix="firstassert-torchrun-")
        job = str(JOBS / "torchrun_rank1_bad_label.py")
        command = [FIRSTASSERT, "run", "--dir", reports, "--", TORCH_PYTHON, "-m", "torch.distributed.run",
                   "--standalone", "--nproc_per_node=2", job]
        done = subprocess.run(command, env=simulated_gpu_env(), capture_output=True, text=True, timeout=600)
        self.assertNotEqual(done.returncode, 0, done.stderr[-3000:])
        merged = subprocess.run([FIRSTASSERT, "merge", "--json", reports], capture_output=True, text=True)
        self.assertEqual(merged.returncode, 0, merged.stderr)
        detail = merged.stdout[:4000]
        first = [f for f in json.loads(merged.stdout)["failures"] if f["role"] == "first"]
        self.assertEqual(len(first), 1, detail)
        self.assertEqual(first[0]["rank"], 1, detail)
        self.assertEqual(first[0]["culprit"], "nll_loss_forward_reduce_cuda_kernel_2d", detail)

    def test_a_healthy_job_leaves_no_report_and_its_output_unchanged(self):
        bare = Run("healthy.py", shim=False)
        watched = Run("healthy.py")
        self.assertEqual(bare.status, 0, bare.stderr[-3000:])
        self.assertEqual(watched.status, 0, watched.stderr[-3000:])
        self.assertEqual(watched.stdout, bare.stdout)
        self.assertEqual(watched.report_paths, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
