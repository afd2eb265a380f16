#!/usr/bin/env python3
"""Test: scripts/gpu-check where there is no GPU (stdlib unittest). Its command line, its refusals, and its harness
run end to end on the CUDA simulator: the real shim, real reports, judged into the same rows as on a GPU, with the
checks shown able to fail.

usage: gpu_check_test.py SHIM SIM_DIR NVCC [TEST_NAME ...] [--except PATTERN ...]
       SHIM     build/src/libfirstassert.so
       SIM_DIR  build/tests/sim (the simulator's libcuda.so.1, libcudart.so.13, libcupti.so.13, libsimkernels.so)
       NVCC     the nvcc of the toolkit the build was configured with (meson's cuda-root), present or not
       then which tests, as tests/support/skip_aware.py takes them
"""
import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(REPO, "scripts", "gpu-check")
DEMO_DIR = os.path.join(REPO, "tests", "sim", "demo")
sys.path.insert(0, os.path.join(REPO, "scripts", "lib"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "support"))

import callback_conformance  # noqa: E402  (its build: an nvcc program linked against the simulator's runtime)
import callback_trace  # noqa: E402
import elf_symbols  # noqa: E402
from gpu_check_runs import rows_by_case_and_mode, run_main  # noqa: E402
import gpu_check  # noqa: E402
import gpu_check_build  # noqa: E402
import gpu_check_notebook  # noqa: E402
import gpu_check_probes as probes  # noqa: E402
import gpu_check_schedule as schedule  # noqa: E402
import gpu_check_shim  # noqa: E402
import gpu_check_traces  # noqa: E402
import gpucase  # noqa: E402
import notebook_case  # noqa: E402
import skip_aware  # noqa: E402
from gpu_check_judge import failing_line, judge, marker_of  # noqa: E402
from gpu_check_run import Outcome, environment, run  # noqa: E402
from gpu_check_table import (CASE_DIR, CASES, MODES, NOTEBOOK_MODES, PROBE_PROGRAMS, TORCH_JOBS, Case,  # noqa: E402
                             Mode)

SHIM = SIM_DIR = NVCC = None
MODE = {mode.name: mode for mode in MODES}


def sim_case(name, what, **fields):
    """A case of the simulator's program (the expected culprit is its nll_loss kernel, unless fields say otherwise)."""
    settings = dict(expect=("nll_loss",), shows="nll_loss_forward_reduce_cuda_kernel_2d", args=(SIM_DIR, what))
    settings.update(fields)
    return Case(name, "sim_case.py", **settings)


def sim_graph_case():
    return sim_case("sim_graph", "graph", graph=True, shows="graph node nll_loss_forward_reduce_cuda_kernel_2d")


FAKE_PROBE = "import ipykernel, jupyter_client; assert ipykernel.FAKE"  # true of fake_kernel_wheels' ipykernel only


def wheel_name(name, version):
    return f"{name}-{version}-py3-none-any.whl"


def fake_kernel_wheels(directory):
    """Wheels named and pinned as tests/gpu/notebook-requirements.txt asks (for any CPython), without dependencies:
    pip's whole index for the pack's download (offline_pip), which needs no network then. Their ipykernel sets
    FAKE."""
    os.makedirs(directory, exist_ok=True)
    pins = {tuple(r.split("==")) for v in gpu_check_notebook.PYTHONS for r in gpu_check_notebook.requirements_for(v)}
    for name, version in sorted(pins):
        info = f"{name}-{version}.dist-info"
        files = {f"{name}/__init__.py": "FAKE = True\n",
                 f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                 f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: gpu_check_test\nRoot-Is-Purelib: true\n"
                                  "Tag: py3-none-any\n"}
        files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in files) + f"{info}/RECORD,,\n"
        with zipfile.ZipFile(os.path.join(directory, wheel_name(name, version)), "w") as archive:
            for path, text in files.items():
                archive.writestr(path, text)


def offline_pip(index):
    """The environment of a pack whose pip sees only the wheels in index."""
    return dict(os.environ, PIP_NO_INDEX="1", PIP_FIND_LINKS=index, PIP_CONFIG_FILE=os.devnull)


def run_script(*args, env=None):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, env=env, timeout=120)


class CommandLine(unittest.TestCase):
    def test_help_documents_exactly_the_options_it_takes(self):
        done = run_script("--help")
        self.assertEqual(done.returncode, 0)
        documented = set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", done.stdout))
        taken = {option for action in gpu_check.make_parser()._actions for option in action.option_strings}
        self.assertEqual(documented, taken)
        for word in ("usage: scripts/gpu-check", "Exit status"):
            self.assertIn(word, done.stdout)

    def test_list_names_every_case_and_mode_of_the_table(self):
        done = run_script("--list")
        self.assertEqual(done.returncode, 0)
        table_part, _, schedule_part = done.stdout.partition("schedule property: ")
        listed = [line.split()[0] for line in table_part.splitlines() if line.startswith("  ")]
        self.assertEqual(listed, [case.name for case in CASES] + [mode.name for mode in MODES])
        seeds = [line.split()[0] for line in schedule_part.splitlines() if line.startswith("    ")]
        self.assertEqual(seeds, [seed.name for seed in schedule.SEEDS])
        for mode in schedule.MODES:
            self.assertIn(mode.name, schedule_part.splitlines()[1])

    def test_a_bad_argument_is_one_line_and_status_2(self):
        for args in (["--bogus"], ["--jobs", "0"], ["--timeout", "soon"], ["--only", "nll_loss,nope"],
                     ["--modes", "fast"], ["--shim", "/nonexistent/libfirstassert.so"], ["--budget"],
                     ["--wheel", "/nonexistent/firstassert.whl"], ["--wheel", __file__],
                     ["--wheel", "x.whl", "--shim", "y.so"]):
            with self.subTest(args=args):
                done = run_script(*args)
                self.assertEqual(done.returncode, 2)
                self.assertEqual(done.stdout, "")
                self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                self.assertTrue(done.stderr.startswith("scripts/gpu-check: "), done.stderr)

    def test_without_torch_or_a_device_it_is_one_line_and_status_2(self):
        # A torch that cannot be imported, and one that sees no device, put first on the path.
        for body, words in (("raise ImportError('no torch here')", "cannot import torch"),
                            ("class cuda:\n    is_available = staticmethod(lambda: False)\n", "sees no CUDA device")):
            with self.subTest(words=words), tempfile.TemporaryDirectory() as fake:
                os.makedirs(os.path.join(fake, "torch"))
                with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                    f.write(body)
                done = run_script("--shim", SHIM, env=dict(os.environ, PYTHONPATH=fake))
                self.assertEqual(done.returncode, 2)
                self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
                self.assertIn(words, done.stderr)
                self.assertIn("nothing was run", done.stderr)

    def test_pack_holds_the_shim_the_libraries_it_needs_its_package_and_the_kernels_wheels(self):
        with tempfile.TemporaryDirectory() as work:
            index, pack = os.path.join(work, "index"), os.path.join(work, "pack")
            fake_kernel_wheels(index)  # pip's index here: the requirements' names and pins, nothing else
            done = run_script("--pack", pack, "--shim", SHIM, env=offline_pip(index))
            self.assertEqual(done.returncode, 0, done.stderr)
            files = set(os.listdir(pack))
            # The two libraries, and what they need beyond what every glibc system has (the development build's
            # recorder needs libunwind.so.8; a wheel's has it inside, and its C++ runtime in both).
            needed = {name for library in (SHIM, gpu_check_shim.recorder_of(SHIM))
                      for name, _ in gpu_check_shim.needed_libraries(library)}
            self.assertEqual(files, {"libfirstassert.so", "libfirstassert_recorder.so", "pack-info.txt", "python",
                                     "notebook-wheels", gpu_check_traces.TRACER} | needed)
            self.assertFalse(any(name.startswith(("libc.so", "libstdc++")) for name in files), files)
            self.assertEqual(gpu_check_shim.load_error(os.path.join(pack, "libfirstassert.so"), pack), "")
            self.assertTrue(os.path.isfile(os.path.join(pack, "python", "firstassert", "notebook.py")))
            wheels = os.path.join(pack, "notebook-wheels")
            for version in gpu_check_notebook.PYTHONS:
                with self.subTest(python=version):
                    tag = "cp" + version.replace(".", "")
                    with open(os.path.join(wheels, tag + ".txt")) as f:
                        listed = f.read().split()
                    # The requirements whose markers hold for that version, not for the Python that downloaded.
                    self.assertEqual(listed, sorted(wheel_name(*r.split("==")) for r in
                                                    gpu_check_notebook.requirements_for(version)))
                    self.assertEqual("exceptiongroup-1.3.0-py3-none-any.whl" in listed, version == "3.10")
            # gpu-check there, for a Python without the kernel: the wheels of its version unpacked, importable.
            out = os.path.join(work, "out")
            with unittest.mock.patch.object(gpu_check_notebook, "PROBE", FAKE_PROBE):
                settings, why = gpu_check_notebook.prepare(sys.executable, os.path.join(pack, "libfirstassert.so"),
                                                           out, environment())
            self.assertEqual(why, "")
            self.assertEqual(settings, {"GPU_CHECK_PACKAGE": os.path.join(pack, "python"),
                                        "GPU_CHECK_NOTEBOOK_SITE": os.path.join(out, "notebook-site")})
            self.assertTrue(os.path.isfile(os.path.join(out, "notebook-site", "ipykernel", "__init__.py")))

    def test_a_pack_without_pypi_says_so_and_its_notebook_cases_say_why_they_cannot_run(self):
        with tempfile.TemporaryDirectory() as work:
            index, pack = os.path.join(work, "index"), os.path.join(work, "pack")
            os.makedirs(index)
            done = run_script("--pack", pack, "--shim", SHIM, env=offline_pip(index))
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("no Jupyter wheels packed", done.stderr)
            self.assertNotIn("notebook-wheels", os.listdir(pack))
            # Nor a default pack this machine may have (build/gpu-check-pack), where prepare() looks next.
            with unittest.mock.patch.object(gpu_check_notebook, "PROBE", FAKE_PROBE), \
                    unittest.mock.patch.object(gpu_check_notebook, "PACK_DIR", os.path.join(work, "no-pack")):
                settings, why = gpu_check_notebook.prepare(sys.executable, os.path.join(pack, "libfirstassert.so"),
                                                           os.path.join(work, "out"), environment())
            self.assertEqual(settings, {})
            self.assertIn("has no Jupyter kernel", why)
            self.assertIn("no wheels were packed beside the shim", why)

    def test_a_wheels_shim_is_unpacked_with_its_recorder_and_loads(self):
        with tempfile.TemporaryDirectory() as work:
            wheel = os.path.join(work, "firstassert-0.1.0-py3-none-manylinux_2_28_x86_64.whl")
            with zipfile.ZipFile(wheel, "w") as archive:
                for library in (SHIM, gpu_check_shim.recorder_of(SHIM)):
                    info = zipfile.ZipInfo("firstassert/_native/" + os.path.basename(library))
                    info.external_attr = 0o755 << 16
                    with open(library, "rb") as f:
                        archive.writestr(info, f.read())
            shim = gpu_check_shim.from_wheel(wheel)
            self.assertTrue(shim.endswith("/firstassert/_native/libfirstassert.so"), shim)
            self.assertTrue(os.access(gpu_check_shim.recorder_of(shim), os.X_OK), "the mode came back")
            self.assertEqual(gpu_check_shim.load_error(shim), "")
            shutil.rmtree(os.path.dirname(os.path.dirname(os.path.dirname(shim))))

    def test_no_shim_and_no_way_to_build_one_is_one_line_and_status_2(self):
        # What gpu-check could find is set here, whatever this machine has: no build or pack (an empty build
        # directory), no Meson it may use (the set-up's tools directory empty, and a meson 1.0 first on PATH, as
        # Debian 12's), and no torch.
        with tempfile.TemporaryDirectory() as empty:
            bin_dir, fake = os.path.join(empty, "bin"), os.path.join(empty, "python")
            os.makedirs(bin_dir)
            with open(os.path.join(bin_dir, "meson"), "w") as f:
                f.write("#!/bin/sh\necho 1.0.1\n")
            os.chmod(os.path.join(bin_dir, "meson"), 0o755)
            os.makedirs(os.path.join(fake, "torch"))
            with open(os.path.join(fake, "torch", "__init__.py"), "w") as f:
                f.write("raise ImportError('no torch here')\n")
            env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")}
            env.update(PATH=bin_dir + ":/usr/bin:/bin", PYTHONPATH=fake,
                       FIRSTASSERT_BUILD_DIR=os.path.join(empty, "build"),
                       FIRSTASSERT_TOOLS_DIR=os.path.join(empty, "tools"))
            done = subprocess.run([sys.executable, os.path.join(REPO, "scripts", "lib", "gpu_check.py")], env=env,
                                  capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 2)
        said = [line for line in done.stderr.splitlines() if line.startswith("scripts/gpu-check: ")]
        self.assertEqual(len(said), 1, done.stderr)
        self.assertIn("cannot be built here (no meson >= 1.3 here)", said[0])


class CasePrograms(unittest.TestCase):
    def test_every_case_program_is_there_and_marks_its_failing_line(self):
        for case in CASES:
            with self.subTest(case=case.name):
                self.assertTrue(os.path.isfile(case.source), case.source)
                with open(case.source) as f:
                    text = f.read()
                if not case.python:
                    self.assertIn("// FAILING_OP", text)
                    continue
                compile(text, case.source, "exec")
                marked = failing_line(case.source, marker_of(case))
                self.assertEqual(marked == 0, case.healthy, "a failing case marks its failing op, the healthy none")
                if case.directory == CASE_DIR:
                    captured = failing_line(case.source, gpucase.CAPTURED_OP)
                    self.assertEqual(captured != 0, case.graph, "a graph case marks the op it captured, no other case")

    def test_every_nvcc_program_builds_for_the_gpu(self):
        # As scripts/gpu-check builds them on the GPU machine (the device code for sm_90 too; nothing runs here),
        # with the toolkit the build was configured with. Its own meson test (gpu_check_nvcc).
        if not os.access(NVCC, os.X_OK):
            self.skipTest(f"no nvcc at {NVCC} (meson's cuda-root)")
        nvcc = NVCC
        programs = [case for case in CASES if not case.python] + list(PROBE_PROGRAMS.values()) + [schedule.PROGRAM]
        with tempfile.TemporaryDirectory() as out:
            for case in programs:
                with self.subTest(program=case.slug):
                    output = os.path.join(out, case.slug)
                    self.assertEqual(gpu_check_build.build(nvcc, case.source, output, list(case.nvcc_flags), "sm_90"),
                                     "")
                    self.assertTrue(os.access(output, os.X_OK))

    def test_the_expected_culprits_are_shown_in_the_table(self):
        for case in CASES:
            with self.subTest(case=case.name):
                self.assertTrue(case.shows)
                self.assertEqual(bool(case.expect), not case.healthy)


class Harness(unittest.TestCase):
    """The whole harness, main() included, with the simulator's cases in place of PyTorch's."""

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="gpu-check-test-")
        cases = (sim_case("sim_nll_loss", "assert"),
                 sim_case("sim_profiled", "profiled", profiled=True),
                 Case("sim_healthy", "sim_case.py", shows="no report, same output", healthy=True,
                      args=(SIM_DIR, "healthy")))
        # The schedule property needs nvcc: ScheduleOnSimulator runs it, apart.
        cls.status, cls.printed, summary = run_main(
            ["--shim", SHIM, "--out", cls.out, "--jobs", "2", "--timeout", "60", "--no-schedule"],
            cases_table=cases, python_error=lambda: "")
        cls.rows = rows_by_case_and_mode(summary)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_every_row_passes_on_the_simulator(self):
        self.assertEqual(self.status, 0, self.printed)
        self.assertEqual(len(self.rows), 3 * len(MODES))
        for key, row in self.rows.items():
            self.assertEqual(row["verdict"], "PASS", key)

    def test_rows_say_what_the_reports_say(self):
        line = failing_line(os.path.join(HERE, "sim_case.py"))
        for mode, backend, secondary in (("default", "cupti", "0"), ("sync=all", "cupti", "1"),
                                         ("interpose", "interpose", "0")):
            with self.subTest(mode=mode):
                row = self.rows[("sim_nll_loss", mode)]
                self.assertEqual(row["reported"], "nll_loss_forward_reduce_cuda_kernel_2d")
                self.assertEqual(row["confidence"], "exact")
                self.assertEqual(row["python_frame"], f"sim_case.py:{line}")
                self.assertEqual(row["backend"], backend)
                self.assertEqual(row["secondary"], secondary)
        self.assertEqual(self.rows[("sim_healthy", "default")]["reported"], "none")

    def test_a_profiler_started_later_is_handed_cupti_and_the_culprit_is_still_named(self):
        # The simulator's CUPTI has one subscriber slot, as CUDA 13's: under the shim, the stand-in profiler gets it
        # only by the hand-over, after which the shim records through interposition.
        for mode in ("default", "sync=all", "interpose"):
            with self.subTest(mode=mode):
                row = self.rows[("sim_profiled", mode)]
                self.assertEqual(row["reported"], "nll_loss_forward_reduce_cuda_kernel_2d")
                self.assertEqual(row["backend"], "interpose")
                self.assertIn("the profile held 3 kernel events", row["notes"])
        self.assertIn("the profile held 3 kernel events", self.rows[("sim_profiled", "bare")]["notes"])

    def test_the_table_has_one_line_per_row_then_the_probes(self):
        lines = self.printed.splitlines()
        heading = next(i for i, text in enumerate(lines) if text.startswith("case "))
        for column in ("expected culprit", "reported culprit", "confidence", "Python frame", "secondary", "result"):
            self.assertIn(column, lines[heading])
        body = lines[heading + 2:heading + 2 + len(self.rows)]
        self.assertEqual(sorted((text.split()[0], text.split()[1]) for text in body), sorted(self.rows))
        self.assertIn("12 rows: 12 pass, 0 fail, 0 skipped", self.printed)
        for number in range(1, 10):
            self.assertRegex(self.printed, rf"\n{number}\. ")
        traced = lines.index(next(text for text in lines if text.startswith("callback traces, without the shim")))
        self.assertGreater(traced, heading)
        for program, line in zip(callback_trace.TRACED_PROGRAMS, lines[traced + 1:]):
            self.assertTrue(line.startswith(f"    {program}: "), line)

    def test_each_run_keeps_its_output_and_reports(self):
        run_dir = os.path.join(self.out, "runs", "sim_nll_loss.default")
        names = os.listdir(run_dir)
        self.assertIn("stdout.txt", names)
        self.assertTrue(any(name.startswith("firstassert-") for name in names), names)
        self.assertEqual([n for n in os.listdir(os.path.join(self.out, "runs", "sim_healthy.default"))
                          if n.startswith("firstassert-")], [])


class Checks(unittest.TestCase):
    """Each check of a row, shown failing on real runs of the simulator."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gpu-check-checks-")
        cls.case = sim_case("sim_nll_loss", "assert")
        cls.outcomes = {}
        cls.profiled = sim_case("sim_profiled", "profiled", profiled=True)
        for name, what, shim, extra in (("bare", "assert", False, {}), ("default", "assert", True, {}),
                                        ("healthy", "healthy", True, {}), ("differs_bare", "differs", False, {}),
                                        ("differs", "differs", True, {}), ("profiled_bare", "profiled", False, {}),
                                        ("profiled", "profiled", True, {}),
                                        ("profiled_interpose", "profiled", True, MODE["interpose"].env)):
            argv = [sys.executable, os.path.join(HERE, "sim_case.py"), SIM_DIR, what]
            cls.outcomes[name] = run(argv, os.path.join(cls.dir, name), environment(SHIM if shim else None, extra),
                                     60)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def verdict(self, case, mode, outcome, bare=None):
        return judge(case, mode, outcome, bare if bare is not None else self.outcomes["bare"]).verdict

    def test_the_runs_pass_as_they_are(self):
        self.assertEqual(self.outcomes["default"].returncode, gpucase.EXIT_ASSERT)
        self.assertEqual(self.verdict(self.case, MODE["default"], self.outcomes["default"]), "PASS")
        self.assertEqual(self.verdict(self.case, MODE["bare"], self.outcomes["bare"]), "PASS")

    def test_a_wrong_culprit_fails(self):
        wrong = sim_case("sim", "assert", expect=("indexSelect", "vectorized_gather"))
        self.assertEqual(self.verdict(wrong, MODE["default"], self.outcomes["default"]), "FAIL: culprit")

    def test_a_confidence_or_backend_the_mode_does_not_allow_fails(self):
        strict = Mode("strict", backend="interpose", confidence=("likely",))
        self.assertEqual(self.verdict(self.case, strict, self.outcomes["default"]), "FAIL: confidence, backend")

    def test_python_frames_must_name_the_case_files_failing_line(self):
        elsewhere = Case("sim", "gather.py", ("nll_loss",), "x")  # its FAILING_OP line is not what launched
        row = judge(elsewhere, MODE["default"], self.outcomes["default"], self.outcomes["bare"])
        self.assertEqual(row.verdict, "FAIL: python")
        self.assertIn("(not ", row.python_frame)

    def test_no_report_fails_and_the_bare_run_may_not_leave_one(self):
        self.assertEqual(self.verdict(self.case, MODE["default"], self.outcomes["bare"]), "FAIL: report")
        self.assertEqual(self.verdict(self.case, MODE["bare"], self.outcomes["default"]), "FAIL: report")

    def test_a_case_that_does_not_assert_fails_on_its_exit(self):
        verdict = self.verdict(self.case, MODE["default"], self.outcomes["healthy"])
        self.assertTrue(verdict.startswith("FAIL: exit, report"), verdict)

    def test_the_healthy_loop_must_print_what_it_prints_without_the_shim(self):
        healthy = Case("sim_healthy", "sim_case.py", healthy=True)
        self.assertEqual(self.verdict(healthy, MODE["default"], self.outcomes["differs"],
                                      self.outcomes["differs_bare"]), "FAIL: stdout")
        self.assertEqual(self.verdict(healthy, MODE["default"], self.outcomes["differs_bare"],
                                      self.outcomes["differs_bare"]), "PASS")
        self.assertEqual(self.verdict(healthy, MODE["default"], self.outcomes["default"],
                                      self.outcomes["differs_bare"]), "FAIL: exit, report, stdout, stderr, quiet")

    def test_a_hung_run_is_killed_at_its_timeout_and_fails(self):
        argv = [sys.executable, os.path.join(HERE, "sim_case.py"), SIM_DIR, "hang"]
        outcome = run(argv, os.path.join(self.dir, "hang"), environment(SHIM), 1)
        self.assertTrue(outcome.timed_out)
        self.assertLess(outcome.elapsed, 10)
        self.assertTrue(self.verdict(self.case, MODE["default"], outcome).startswith("FAIL: timeout, exit"))

    def profiled_outcome(self, name, kernels_line=None, **tool):
        """A copy of a run of the profiled case, with its kernels line replaced (None: as it was; "": left out) and
        its report's tool object changed (a value None: the key removed)."""
        outcome = self.outcomes[name]
        stdout = outcome.stdout
        if kernels_line is not None:
            lines = [line for line in stdout.splitlines(keepends=True)
                     if not line.startswith((gpucase.PROFILER_KERNELS, gpucase.PROFILER_FAILED))]
            stdout = "".join(([kernels_line + "\n"] if kernels_line else []) + lines)
        report = copy.deepcopy(outcome.report)
        for key, value in tool.items():
            if value is None:
                report["tool"].pop(key)
            else:
                report["tool"][key] = value
        return dataclasses.replace(outcome, stdout=stdout, report=report)

    def test_a_profiled_case_passes_with_kernels_and_the_tool_its_mode_expects(self):
        for name, mode in (("profiled", "default"), ("profiled_interpose", "interpose"), ("profiled_bare", "bare")):
            with self.subTest(mode=mode):
                self.assertIn(gpucase.PROFILER_KERNELS + "3", self.outcomes[name].stdout)
                self.assertEqual(self.verdict(self.profiled, MODE[mode], self.outcomes[name],
                                              self.outcomes["profiled_bare"]), "PASS")

    def test_a_profile_without_kernels_fails_in_every_mode_the_bare_one_too(self):
        bare = self.outcomes["profiled_bare"]
        for name, mode in (("profiled", "default"), ("profiled_interpose", "interpose"), ("profiled_bare", "bare")):
            for line, says in ((gpucase.PROFILER_KERNELS + "0", "the profile held 0 kernel events"),
                               ("", "kernel count was never printed"),
                               (gpucase.PROFILER_FAILED + "RuntimeError: no CUPTI",
                                "the profiler failed: RuntimeError: no CUPTI")):
                with self.subTest(mode=mode, line=line):
                    row = judge(self.profiled, MODE[mode], self.profiled_outcome(name, line), bare)
                    self.assertEqual(row.verdict, "FAIL: profiler")
                    self.assertTrue(any(says in note for note in row.notes), row.notes)
        # A case that takes no profile is not asked for one.
        self.assertEqual(self.verdict(self.case, MODE["default"], self.outcomes["default"]), "PASS")

    def test_the_hand_over_is_what_the_mode_expects(self):
        bare = self.outcomes["profiled_bare"]
        for name, mode, tool, verdict in (
                # Recorded through CUPTI and never handed over: the profiler did not subscribe (or was refused).
                ("profiled", "default", dict(backend="cupti", cupti_handed_over=False), "FAIL: backend, handed_over"),
                ("profiled", "sync=all", dict(cupti_handed_over=False), "FAIL: handed_over"),
                ("profiled", "default", dict(cupti_handed_over=None), "FAIL: handed_over"),  # a shim before issue 18
                # Under FIRSTASSERT_BACKEND=interpose firstassert never held CUPTI: true would be wrong.
                ("profiled_interpose", "interpose", dict(cupti_handed_over=True), "FAIL: handed_over")):
            with self.subTest(mode=mode, tool=tool):
                row = judge(self.profiled, MODE[mode], self.profiled_outcome(name, **tool), bare)
                self.assertEqual(row.verdict, verdict)
                if "handed_over" in verdict:
                    self.assertTrue(any("tool.cupti_handed_over is " in note for note in row.notes), row.notes)

    def graph_outcome(self, change=None):
        """A copy of the default run, its culprit made what the report of sim_case.py's graph mode says (issue 19's
        fields): node 3, nll_loss, of the graph's five kernel nodes asserted in the replay, captured at the
        `# CAPTURED_OP` line; then change(culprit) applied. Built by hand, so that the graph checks are shown here
        whatever the shim writes (GraphReplay runs the case itself)."""
        source = os.path.join(HERE, "sim_case.py")
        captured = failing_line(source, gpucase.CAPTURED_OP)
        report = copy.deepcopy(self.outcomes["default"].report)
        culprit = report["culprit"]
        add = dict(kernel="void at::native::elementwise_add_kernel<float>(float*, float const*, float const*, float, "
                          "long)", mangled="_ZN2at6native21elementwise_add_kernelIfEEvPT_PKS2_S5_S2_l", grid=[1, 1, 1],
                   block=[128, 1, 1], shared_mem=0)
        busy = dict(kernel="simkernels::busy_kernel(unsigned long long)", mangled="_ZN10simkernels11busy_kernelEy",
                    grid=[1, 1, 1], block=[1, 1, 1], shared_mem=0)
        nll_loss = {key: culprit[key] for key in ("kernel", "mangled", "grid", "block", "shared_mem")}
        nodes = []
        for number, kernel in enumerate((add, busy, nll_loss, add, busy), 1):
            nodes.append(dict(kernel, node=number, state="completed" if number < 3 else "not completed",
                              captured_at=f"sim_case.py:{captured - 3 + number}"))
        culprit.update(graph=True, api="cudaGraphLaunch", graph_nodes=nodes,
                       python_stack=[dict(file=source, function="capture_graph", line=captured)],
                       graph_node={key: nodes[2][key] for key in ("node", "state", "captured_at")} | {"nodes": 5})
        if change:
            change(culprit)
        return dataclasses.replace(self.outcomes["default"], report=report)

    def test_a_graph_case_wants_its_node_named_exactly_where_it_was_captured(self):
        graph = sim_graph_case()
        row = judge(graph, MODE["default"], self.graph_outcome(), self.outcomes["bare"])
        self.assertEqual(row.verdict, "PASS", row.notes)
        self.assertEqual(row.reported, "nll_loss_forward_reduce_cuda_kernel_2d (node 3 of 5)")
        self.assertEqual(row.python_frame, f"sim_case.py:{failing_line(graph.source, gpucase.CAPTURED_OP)}")

        def node(field, value, *numbers):
            def change(culprit):
                for number in numbers:
                    culprit["graph_nodes"][number - 1][field] = value
                if 3 in numbers and field in culprit["graph_node"]:
                    culprit["graph_node"][field] = value
            return change

        def graph_node(**fields):
            return lambda culprit: culprit["graph_node"].update(fields)

        def replayed(culprit):  # the replay's frames, not the capture's
            culprit["python_stack"] = [dict(file=graph.source, function="<module>",
                                            line=failing_line(graph.source))]

        for what, change, verdict in (
                ("no graph_node", lambda c: c.update(graph_node=None), "FAIL: node"),
                ("another node", graph_node(node=2), "FAIL: node"),
                ("a node count that is not the list's", graph_node(nodes=4), "FAIL: node"),
                ("a node before it not completed", node("state", "not completed", 2), "FAIL: node"),
                ("a node after it completed: the breadcrumbs were not reset", node("state", "completed", 4),
                 "FAIL: node"),
                ("its state unknown", node("state", "unknown", 3), "FAIL: node"),
                ("a launch configuration that is not the node's", lambda c: c.update(grid=[2, 1, 1]), "FAIL: node"),
                ("captured elsewhere", node("captured_at", "sim_case.py:1", 3), "FAIL: captured_at"),
                ("no capture line", node("captured_at", None, 3), "FAIL: captured_at"),
                ("the replay's Python frames", replayed, "FAIL: python"),
                ("likely, which the default mode allows other cases", lambda c: c.update(confidence="likely"),
                 "FAIL: confidence"),
                ("not launched as a graph", lambda c: c.update(api="cudaLaunchKernel"), "FAIL: graph"),
                ("a shim before issue 19: the graph launch, no kernel named",
                 lambda c: [c.pop(k) for k in ("graph_node", "graph_nodes")] + [c.update(kernel=None, mangled=None)],
                 "FAIL: culprit, graph")):
            with self.subTest(what):
                row = judge(graph, MODE["default"], self.graph_outcome(change), self.outcomes["bare"])
                self.assertEqual(row.verdict, verdict, row.notes)
        # A culprit that is no graph node at all: the sim's plain nll_loss launch, its frames those of the replay line.
        self.assertEqual(self.verdict(graph, MODE["default"], self.outcomes["default"]), "FAIL: python, graph")

    def test_what_did_not_run_is_skip_never_pass(self):
        self.assertEqual(self.verdict(self.case, MODE["default"], Outcome(not_run="no nvcc")), "SKIP: no nvcc")
        said = Outcome(returncode=gpucase.EXIT_SKIP, stdout="gpu-check: skip: Triton cannot be imported\n")
        self.assertEqual(self.verdict(self.case, MODE["default"], said), "SKIP: Triton cannot be imported")


def job_kernel(name):
    return {"kernel": f"void at::native::{name}<float>(float*, long)", "mangled": "", "grid": [1, 1, 1],
            "block": [32, 1, 1], "shared_mem": 0}


def job_outcome(case, mode, change=None):
    """A run of a torch suite's job as the judge sees it, built from the case: the job's uncaught traceback, the
    shim's summary naming its marked line, and a report whose culprit runs the case's first kernel, with its first
    condition and confidence, launched at that line (a graph job's: its last node, captured there); then
    change(report) applied. Bare: the traceback alone."""
    line = failing_line(case.source, marker_of(case))
    where = f"{case.source}:{line} in <module> (Python)"
    stdout = f"{case.profile_line or gpucase.PROFILER_KERNELS} 17\n" if case.profiled else ""
    traceback = ("Traceback (most recent call last):\n  File \"job.py\", line 30, in <module>\n"
                 "torch.AcceleratorError: CUDA error: device-side assert triggered\n")
    if not mode.shim:
        return Outcome(argv=[case.source], returncode=1, stdout=stdout, stderr=traceback)
    culprit = dict(job_kernel(case.expect[0]), confidence=case.confidence[0], reason="breadcrumbs",
                   api="cudaLaunchKernel", python_stack=[{"file": case.source, "function": "<module>", "line": line}],
                   device_message={"condition": case.condition[0]})
    summary = f"firstassert: launched from {where}\n"
    if case.graph:
        nodes = [dict(job_kernel(name), node=number, state="completed" if number < 3 else "not completed",
                      captured_at=f"{os.path.basename(case.source)}:{line}")
                 for number, name in enumerate(("gemm", "softmax", case.expect[0]), 1)]
        culprit.update(nodes[-1], graph=True, api="cudaGraphLaunch", graph_nodes=nodes,
                       graph_node={key: nodes[-1][key] for key in ("node", "state", "captured_at")} | {"nodes": 3})
        summary = f"firstassert: captured from {where}\n"
    backend, handed_over = case.tool_in(mode)
    report = {"schema": "firstassert/1", "first_error": {"code": 710, "name": "cudaErrorAssert"}, "culprit": culprit,
              "tool": {"backend": backend, "cupti_handed_over": bool(handed_over)}, "secondary": {"count": 2},
              "final": True, "device_messages": [culprit["device_message"]]}
    if change:
        change(report)
    return Outcome(argv=[case.source], returncode=1, stdout=stdout, stderr=summary + traceback,
                   reports=["firstassert-1.json"], report=report)


class ProfilerProbe(unittest.TestCase):
    """Probe 5's lines on given runs of profiler_probe.py: whether each saw nll_loss's assert, how many kernels its
    profile held, and whether the report blamed the case's kernel."""

    CASE = next(c for c in CASES if c.name == "nll_loss")

    def run_of(self, kernels, culprit=None):
        stdout = (f"{gpucase.PROFILER_KERNELS}{kernels}\n"
                  f"gpu-check: caught AcceleratorError: CUDA error: {gpucase.ASSERT_TEXT} triggered\n")
        report = {"culprit": {"kernel": culprit, "confidence": "exact"}, "tool": {"backend": "interpose"}} \
            if culprit else None
        return Outcome(argv=["profiler_probe.py"], returncode=gpucase.EXIT_ASSERT, stdout=stdout, report=report)

    def test_each_run_says_what_it_saw_and_whether_the_report_blamed_the_case_kernel(self):
        right = self.CASE.expect[0]
        runs = {("early", False): self.run_of(12),
                ("early", True): self.run_of(7, f"void at::native::{right}<float, long>(float*)"),
                ("late", False): Outcome(not_run="the time budget (--budget) was spent"),
                ("late", True): self.run_of(0, "void at::native::softmax_warp_forward<float>(float*)")}
        lines = probes.profiler_probe(runs, self.CASE)
        self.assertEqual(len(lines), 4, lines)
        self.assertIn("exit 3 (saw the assert); profiler recorded 12 kernels", lines[0])
        self.assertIn("profiler recorded 7 kernels", lines[1])
        self.assertIn("(right), exact, backend interpose", lines[1])
        self.assertIn("not run: the time budget (--budget) was spent", lines[2])
        self.assertIn("(WRONG)", lines[3])

    def test_a_probe_that_cannot_be_put_together_costs_no_other_probe_its_answer(self):
        with unittest.mock.patch.object(probes, "profiler_probe", side_effect=RuntimeError("no such run")):
            lines = gpu_check.probe_sections({}, [], CASES, {}, "/nonexistent/libfirstassert.so")
        titles = [line for line in lines if line[:1].isdigit()]
        self.assertEqual([title.split(".", 1)[0] for title in titles], [str(n) for n in range(1, 10)], lines)
        fifth = lines.index(next(t for t in titles if t.startswith("5.")))
        self.assertEqual(lines[fifth + 1], "    not put together (RuntimeError: no such run); the runs are under "
                                           "--out/runs/")

    def test_a_run_that_did_not_see_the_assert_says_so(self):
        run = Outcome(argv=["profiler_probe.py"], returncode=gpucase.EXIT_NO_ERROR, stdout="gpu-check: no error\n")
        line = probes.profiler_probe({("early", False): run}, self.CASE)[0]
        self.assertIn("exit 0 (did NOT see the assert)", line)


class TorchJobs(unittest.TestCase):
    """The torch suite's jobs as cases (gpu_check_table.TORCH_JOBS), judged on outcomes built from each case (the
    torch suite's own run of two of them through gpu-check is tests/torch/gpu_check_jobs_test.py)."""
    FAILING = [case for case in TORCH_JOBS if not case.healthy]
    JOB = {case.name: case for case in TORCH_JOBS}

    def verdict(self, case, change=None, mode="default", **outcome):
        built = dataclasses.replace(job_outcome(case, MODE[mode], change), **outcome)
        return judge(case, MODE[mode], built, job_outcome(case, MODE["bare"])).verdict

    def test_each_job_runs_from_the_torch_suite_in_bare_and_default(self):
        self.assertTrue({"mlp_bad_label", "token_model_side_stream", "graph_replay_bad_label", "profiler_mid_job",
                         "healthy_job"} <= set(self.JOB))
        for case in TORCH_JOBS:
            with self.subTest(case=case.name):
                self.assertEqual(os.path.dirname(case.source), os.path.join(REPO, "tests", "torch", "jobs"))
                self.assertEqual([mode.name for mode in MODES if case.runs_in(mode)], ["bare", "default"])

    def test_each_job_passes_with_its_kernel_at_its_marked_line(self):
        for case in self.FAILING:
            for mode in ("bare", "default"):
                with self.subTest(case=case.name, mode=mode):
                    self.assertEqual(self.verdict(case, mode=mode), "PASS")

    def test_every_mode_of_a_job_allows_a_confidence(self):
        for case in CASES:
            for mode in MODES:
                if case.runs_in(mode) and mode.shim and not case.healthy:
                    with self.subTest(case=case.name, mode=mode.name):
                        self.assertTrue(case.confidence_in(mode))

    def test_another_kernel_fails(self):
        def gemm(report):
            report["culprit"].update(job_kernel("gemm_kernel"))
        for case in self.FAILING:
            with self.subTest(case=case.name):
                self.assertTrue(self.verdict(case, gemm).startswith("FAIL: culprit"))

    def test_the_marked_line_missing_from_the_frames_or_the_summary_fails(self):
        def torch_frames(report):
            report["culprit"]["python_stack"] = [{"file": "/site-packages/torch/nn/functional.py", "line": 3000}]
        for case in self.FAILING:
            with self.subTest(case=case.name):
                self.assertEqual(self.verdict(case, torch_frames), "FAIL: python")
                self.assertEqual(self.verdict(case, stderr="torch.AcceleratorError: device-side assert triggered\n"),
                                 "FAIL: summary")

    def test_a_confidence_its_evidence_does_not_allow_fails(self):
        def likely(report):
            report["culprit"]["confidence"] = "likely"
        self.assertEqual(self.verdict(self.JOB["mlp_bad_label"], likely), "FAIL: confidence")
        self.assertEqual(self.verdict(self.JOB["graph_replay_bad_label"], likely), "FAIL: confidence")
        # The side stream's matmuls may all have completed on a GPU, or not: either is the gather's, named.
        self.assertEqual(self.verdict(self.JOB["token_model_side_stream"], likely), "PASS")

    def test_another_condition_fails(self):
        def other(report):
            report["culprit"]["device_message"] = {"condition": "srcIndex < srcSelectDimSize"}
        self.assertEqual(self.verdict(self.JOB["token_model_side_stream"], other), "FAIL: condition")

    def test_a_job_that_did_not_meet_its_assert_fails_on_its_exit(self):
        for mode in ("bare", "default"):
            with self.subTest(mode=mode):
                verdict = self.verdict(self.JOB["mlp_bad_label"], mode=mode, stderr="ValueError: bad shape\n")
                self.assertTrue(verdict.startswith("FAIL: exit"), verdict)

    def test_the_profiled_job_needs_kernels_in_its_profile_and_a_hand_over_that_fits_its_backend(self):
        case = self.JOB["profiler_mid_job"]
        self.assertEqual(self.verdict(case, stdout=""), "FAIL: profiler")

        def kept(report):  # the profiler never subscribed, as on the simulator: the shim kept CUPTI
            report["tool"] = {"backend": "cupti", "cupti_handed_over": False}

        def half(report):  # handed over, yet still recording through CUPTI
            report["tool"] = {"backend": "cupti", "cupti_handed_over": True}
        self.assertEqual(self.verdict(case, kept), "PASS")
        self.assertEqual(self.verdict(case, half), "FAIL: backend")

    def test_the_graph_job_names_its_last_node_but_not_its_first(self):
        case = self.JOB["graph_replay_bad_label"]

        def first(report):
            nodes = report["culprit"]["graph_nodes"]
            nodes[0].update(job_kernel(case.expect[0]))
            for node in nodes:
                node["state"] = "not completed"
            report["culprit"].update(nodes[0], graph_node={k: nodes[0][k] for k in ("node", "state", "captured_at")} |
                                     {"nodes": 3})
        self.assertEqual(self.verdict(case, first), "FAIL: node")


def schedule_outcome(oracle, report, reports=1, sync="cudaErrorAssert"):
    """An Outcome of the schedule program as the judge sees it, built from the case: the oracle it printed (stream,
    shared_mem, busy, threads) and the report."""
    stream, shared, busy, threads = oracle
    stdout = (f"plan: streams 3 threads {threads} steps 500 named\nbusy: {busy}\n"
              f"asserting: stream {stream} shared_mem {shared} grid 4 block 64\nsync: {sync}\n")
    return Outcome(argv=["schedule_property", "1"], returncode=0, stdout=stdout, report=report,
                   reports=[f"firstassert-{n}.json" for n in range(reports)])


def launch(stream, shared, kernel="at::native::reduce_kernel(schedule::KernelArgs)"):
    return {"kernel": kernel, "stream": stream, "shared_mem": shared}


def schedule_report(confidence, reason, culprit=None, candidates=()):
    return {"first_error": {"code": 710}, "culprit": culprit or {},
            "decision": {"confidence": confidence, "reason": reason, "candidates": len(candidates) or 1},
            "candidates": list(candidates)}


class ScheduleJudge(unittest.TestCase):
    """The schedule step's judge, on outcomes built here: the asserting launch is on stream 0x10 with shared_mem 7."""
    SEED = schedule.Seed(5)
    MODE = {mode.name: mode for mode in schedule.MODES}
    ORACLE = ("0x10", 7, 0, 2)  # several busy streams, two launching threads: no mode must be exact
    IT, SAME_STREAM, OTHER_STREAM = launch("0x10", 7), launch("0x10", 8), launch("0x20", 7)

    def verdict(self, report, mode="default", oracle=ORACLE, **outcome):
        return schedule.judge(self.SEED, self.MODE[mode], schedule_outcome(oracle, report, **outcome))

    def test_a_claim_of_the_asserting_launch_passes(self):
        for confidence in ("exact", "likely"):
            with self.subTest(confidence=confidence):
                v = self.verdict(schedule_report(confidence, "stream breadcrumbs: ...", self.IT))
                self.assertEqual((v.result, v.claim, v.failed), ("PASS", True, []))

    def test_a_claim_of_another_launch_fails(self):
        for other in (self.SAME_STREAM, self.OTHER_STREAM):
            with self.subTest(other=other):
                v = self.verdict(schedule_report("likely", "the last launch", other))
                self.assertEqual((v.result, v.claim), ("FAIL", False))
                self.assertIn("the asserting launch is on 0x10 shared_mem 7", v.failed[0])

    def test_a_window_that_holds_it_passes_and_one_that_does_not_fails(self):
        holding = schedule_report("window", "the failing launch is one of 3 launches", self.IT,
                                  (self.SAME_STREAM, self.IT, self.OTHER_STREAM))
        v = self.verdict(holding)
        self.assertEqual((v.result, v.window), ("PASS", True))
        missing = schedule_report("window", "the failing launch is one of 2 launches", self.SAME_STREAM,
                                  (self.SAME_STREAM, self.OTHER_STREAM))
        v = self.verdict(missing)
        self.assertEqual((v.result, v.window), ("FAIL", False))
        self.assertIn("does not hold the asserting launch", v.failed[0])
        miscounted = schedule_report("window", "the failing launch is one of 4 launches", self.IT,
                                     (self.SAME_STREAM, self.IT, self.OTHER_STREAM))
        self.assertEqual(self.verdict(miscounted).result, "FAIL")

    def test_a_window_listed_in_part_fails_only_with_breadcrumbs_on(self):
        report = schedule_report("window", "the failing launch is one of 5 launches", self.SAME_STREAM,
                                 (self.SAME_STREAM, self.OTHER_STREAM))
        report["decision"]["candidates"] = 5
        self.assertEqual(self.verdict(report, "default").result, "FAIL")
        v = self.verdict(report, "breadcrumbs=0")
        self.assertEqual((v.result, v.unverified, v.window), ("PASS", True, None))

    def test_unknown_only_when_the_ring_dropped_launches(self):
        self.assertEqual(self.verdict(schedule_report("unknown", "not in the launch ring any more")).result, "PASS")
        self.assertEqual(self.verdict(schedule_report("unknown", "no idea")).result, "FAIL")

    def test_exact_where_the_mode_knows(self):
        likely = schedule_report("likely", "the last launch", self.IT)
        one_busy_stream, one_thread = ("0x10", 7, 1, 1), ("0x10", 7, 0, 1)
        self.assertEqual(self.verdict(likely, "default", one_busy_stream).result, "FAIL")
        self.assertEqual(self.verdict(likely, "sync=all", one_thread).result, "FAIL")
        self.assertEqual(self.verdict(likely, "breadcrumbs=0", one_busy_stream).result, "PASS")
        self.assertEqual(self.verdict(likely, "default", one_thread).result, "PASS")

    def test_a_run_that_did_not_end_as_planned_fails(self):
        right = schedule_report("exact", "stream breadcrumbs", self.IT)
        self.assertEqual(self.verdict(right, sync="cudaSuccess").result, "FAIL")
        self.assertEqual(self.verdict(right, reports=2).result, "FAIL")
        self.assertEqual(self.verdict(None, reports=0).result, "FAIL")
        self.assertEqual(self.verdict(dict(right, first_error={"code": 700})).result, "FAIL")
        silent = schedule.judge(self.SEED, self.MODE["default"], Outcome(returncode=4))
        self.assertEqual(silent.failed, ["it printed no oracle (exit 4)"])
        skipped = schedule.judge(self.SEED, self.MODE["default"], Outcome(not_run="no nvcc"))
        self.assertEqual(skipped.result, "SKIP")
        self.assertFalse(schedule.passed([skipped]), "a run that did not run is no pass")

    def test_the_section_counts_and_names_each_failed_seed_and_mode(self):
        right = self.verdict(schedule_report("likely", "x", self.IT))
        wrong = self.verdict(schedule_report("likely", "x", self.OTHER_STREAM), "sync=all")
        window = self.verdict(schedule_report("window", "the failing launch is one of 1 launch", self.IT, (self.IT,)))
        lines = schedule.section([right, wrong, window])
        self.assertIn("1 seeds x 2 modes (default, sync=all): claims right 1/2, windows holding it 1/1", lines[0])
        self.assertTrue(lines[0].endswith("FAIL"), lines[0])
        self.assertEqual(len(lines), 2)
        self.assertTrue(lines[1].startswith("  FAIL seed 5 / sync=all: likely claim of "), lines[1])
        self.assertIn("FIRSTASSERT_SYNC=all", lines[1])
        self.assertTrue(schedule.section([right, window])[0].endswith("PASS"))

    def test_its_failure_is_gpu_checks_exit_status(self):
        # A program that prints no oracle, in place of the schedule program, beside a passing row.
        healthy = Case("sim_healthy", "sim_case.py", shows="no report, same output", healthy=True,
                       args=(SIM_DIR, "healthy"))
        step = schedule.Step(seeds=(self.SEED,), modes=(self.MODE["default"],), program=shutil.which("true"))
        with tempfile.TemporaryDirectory() as out:
            status, printed, _ = run_main(["--shim", SHIM, "--out", out, "--modes", "bare,default", "--no-probes"],
                                          cases_table=(healthy,), python_error=lambda: "", schedule_step=step)
        self.assertEqual(status, 1, printed)
        self.assertIn("2 rows: 2 pass", printed)
        self.assertIn("  FAIL seed 5 / default: it printed no oracle (exit 0)", printed)


class ScheduleOnSimulator(unittest.TestCase):
    """The schedule step end to end: schedule_property.cu built by nvcc against the simulator's runtime (its kernels
    get simulated bodies there), run by gpu-check's main() for a few seeds in every mode of the step, each report
    judged against the program's oracle. Its own meson test (gpu_check_schedule): it needs nvcc."""
    SEEDS = (schedule.ONE_STREAM[-1], schedule.SEVERAL_STREAMS[0], schedule.SEVERAL_STREAMS[2])

    @classmethod
    def setUpClass(cls):
        if not os.access(NVCC, os.X_OK):
            raise unittest.SkipTest(f"no nvcc at {NVCC} (meson's cuda-root)")
        cls.out = tempfile.mkdtemp(prefix="gpu-check-schedule-")
        cls.program = os.path.join(cls.out, "schedule_property")
        why = callback_conformance.build(NVCC, schedule.PROGRAM.source, cls.program, SIM_DIR)
        if why:
            raise AssertionError(why)
        step = schedule.Step(seeds=cls.SEEDS, program=cls.program)
        healthy = Case("sim_healthy", "sim_case.py", shows="no report, same output", healthy=True,
                       args=(SIM_DIR, "healthy"))
        cls.status, cls.printed, summary = run_main(
            ["--shim", SHIM, "--out", cls.out, "--jobs", "2", "--modes", "bare,default", "--no-probes"],
            cases_table=(healthy,), python_error=lambda: "", schedule_step=step)
        cls.verdicts = summary["schedule"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def test_every_seed_holds_the_property_in_every_mode(self):
        self.assertEqual(self.status, 0, self.printed)
        self.assertEqual(sorted((v["seed"], v["mode"]) for v in self.verdicts),
                         sorted((seed.name, mode.name) for seed in self.SEEDS for mode in schedule.MODES))
        for v in self.verdicts:
            self.assertEqual(v["result"], "PASS", v)
        section = next(line for line in self.printed.splitlines() if line.startswith("schedule property"))
        self.assertIn(f"{len(self.SEEDS)} seeds x {len(schedule.MODES)} modes", section)
        self.assertTrue(section.endswith("PASS"), section)

    def test_one_busy_stream_is_exact_with_breadcrumbs(self):
        one = next(v for v in self.verdicts if v["seed"] == self.SEEDS[0].name and v["mode"] == "default")
        self.assertEqual(one["confidence"], "exact")

    def test_each_seed_plans_as_many_streams_as_its_list_says(self):
        # The stream count is a plan's first draw, whatever the launch count: the long seed is checked at its own.
        for seeds, one in ((schedule.ONE_STREAM, True), (schedule.SEVERAL_STREAMS + (schedule.LONG,), False)):
            for seed in seeds:
                with self.subTest(seed=seed.name):
                    done = subprocess.run([self.program, str(seed.seed)], capture_output=True, text=True,
                                          timeout=60)
                    streams = int(re.search(r"^plan: streams (\d+)", done.stdout, re.M).group(1))
                    self.assertEqual(streams == 1, one, done.stdout)
                    self.assertTrue(seed.what.startswith(f"{streams} stream"), (seed.what, streams))


class GraphReplay(unittest.TestCase):
    """The graph case run on the simulator in every mode: the shim's graph breadcrumbs (issue 19) name the node of
    the replay that asserted, exactly, at its capture line. Its own meson test (gpu_check_graph): it runs the case
    four times, apart from the others."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="gpu-check-graph-")
        cls.case = sim_graph_case()
        argv = [sys.executable, os.path.join(HERE, "sim_case.py"), SIM_DIR, "graph"]
        cls.outcomes = {mode.name: run(argv, os.path.join(cls.dir, mode.name.replace("=", "_")),
                                       environment(SHIM if mode.shim else None, mode.env), 60) for mode in MODES}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_mode_names_the_node_that_asserted(self):
        line = failing_line(self.case.source, gpucase.CAPTURED_OP)
        for mode in MODES:
            with self.subTest(mode=mode.name):
                row = judge(self.case, mode, self.outcomes[mode.name], self.outcomes["bare"])
                self.assertEqual(row.verdict, "PASS", row.notes)
                if mode.shim:
                    self.assertEqual(row.reported, "nll_loss_forward_reduce_cuda_kernel_2d (node 3 of 5)")
                    self.assertEqual(row.confidence, "exact")
                    self.assertEqual(row.python_frame, f"sim_case.py:{line}")


def sim_notebook_case(order):
    """notebook_case.py with the simulator's job in its cells (the culprit is its nll_loss kernel)."""
    return Case(f"sim_notebook_{order}", "notebook_case.py", ("nll_loss",),
                "nll_loss_forward_reduce_cuda_kernel_2d", args=(order, "sim", SIM_DIR, DEMO_DIR), notebook=True,
                modes=NOTEBOOK_MODES)


def with_cell(outcome, role, change):
    """A copy of outcome in which the cell of that role, as notebook_case.py printed it, is change(cell)'s."""
    lines = []
    for line in outcome.stdout.splitlines():
        if line.startswith(gpucase.NOTEBOOK_CELL):
            cell = json.loads(line[len(gpucase.NOTEBOOK_CELL):])
            if cell["role"] == role:
                line = gpucase.NOTEBOOK_CELL + json.dumps(change(dict(cell)))
        lines.append(line)
    return dataclasses.replace(outcome, stdout="\n".join(lines) + "\n")


class NotebookCases(unittest.TestCase):
    """The notebook cases on the simulator: the harness runs them, the cells in a real ipykernel that loads the shim
    with %load_ext. Its own meson test (gpu_check_notebook), run by the Python of the notebook suite's venv, which has
    the kernel; then each check of a notebook row is shown failing on a real run's output."""

    @classmethod
    def setUpClass(cls):
        cls.out = tempfile.mkdtemp(prefix="gpu-check-notebook-")
        cases = (sim_notebook_case("armed"), sim_notebook_case("late"))
        cls.status, cls.printed, summary = run_main(
            ["--shim", SHIM, "--out", cls.out, "--jobs", "2", "--timeout", "120", "--no-probes", "--no-schedule"],
            cases_table=cases, python_error=lambda: "")
        cls.rows = rows_by_case_and_mode(summary)
        cls.case = cases[0]
        settings, why = gpu_check_notebook.prepare(sys.executable, SHIM, cls.out, environment())
        assert not why, why
        argv = [sys.executable, cls.case.source, *cls.case.args]
        cls.outcomes = {name: run(argv, os.path.join(cls.out, "checks", name),
                                  environment(None, dict(settings, **extra)), 120)
                        for name, extra in (("bare", {}), ("default", {"FIRSTASSERT_LIB": SHIM}))}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.out, ignore_errors=True)

    def verdict(self, mode, outcome):
        return judge(self.case, MODE[mode], outcome, self.outcomes["bare"]).verdict

    def test_every_row_passes_in_the_modes_a_kernel_loading_the_shim_records_in(self):
        self.assertEqual(self.status, 0, self.printed)
        self.assertEqual(sorted(self.rows), sorted((f"sim_notebook_{order}", mode) for order in ("armed", "late")
                                                   for mode in NOTEBOOK_MODES))
        for key, row in self.rows.items():
            self.assertEqual(row["verdict"], "PASS", (key, row["notes"]))

    def test_rows_show_the_culprit_at_the_failing_cells_line_through_cupti(self):
        for order in ("armed", "late"):
            for mode in ("default", "sync=all"):
                with self.subTest(order=order, mode=mode):
                    row = self.rows[(f"sim_notebook_{order}", mode)]
                    self.assertEqual(row["reported"], "nll_loss_forward_reduce_cuda_kernel_2d")
                    self.assertEqual(row["confidence"], "exact")
                    self.assertEqual(row["python_frame"], "Cell In[3], line 1")  # load and setup were In[1], In[2]
                    self.assertEqual(row["backend"], "cupti")

    def test_the_runs_pass_as_they_are(self):
        self.assertEqual(self.verdict("default", self.outcomes["default"]), "PASS")
        self.assertEqual(self.verdict("bare", self.outcomes["bare"]), "PASS")

    def test_a_failing_cell_that_does_not_show_the_culprit_where_it_was_launched_fails(self):
        def moved(cell):
            cell["shown"] = cell["shown"].replace("Cell In[3], line 1  ->", "Cell In[3], line 2  ->")
            return cell

        def other_kernel(cell):  # the whole kernel row: its short name and the signature under it
            cell["shown"] = re.sub(r"\n  kernel       [^\n]*(\n {15}[^\n]*)*", "\n  kernel       softmax", cell["shown"])
            return cell

        def untold(cell):
            cell["shown"] = cell["shown"].split("firstassert: the first CUDA error")[0]
            return cell

        def unmatched(cell):
            cell["shown"] = cell["shown"].replace("  device       ", "  device       1 message(s), none matched to "
                                                  "this kernel: ")
            return cell

        for change in (moved, other_kernel, untold, unmatched):
            with self.subTest(change=change.__name__):
                self.assertEqual(self.verdict("default", with_cell(self.outcomes["default"], "failing", change)),
                                 "FAIL: cell")

    def test_a_later_cell_that_does_not_say_it_is_secondary_fails(self):
        def quiet(cell):
            cell["shown"] = ""
            return cell

        self.assertEqual(self.verdict("default", with_cell(self.outcomes["default"], "secondary", quiet)),
                         "FAIL: secondary_cell")

    def test_an_extension_that_did_not_load_fails(self):
        def refused(cell):
            cell["error"], cell["shown"] = {"ename": "ModuleNotFoundError", "evalue": "No module named 'x'"}, ""
            return cell

        self.assertEqual(self.verdict("default", with_cell(self.outcomes["default"], "load", refused)),
                         "FAIL: load")

    def test_a_kernel_that_dies_or_hangs_in_a_cell_ends_the_case_before_its_timeout(self):
        # The kernel is a session of its own, which the harness's kill at the timeout would not reach: the case
        # notices a death at once, and stops waiting for a hung cell (and kills the kernel) before the timeout.
        settings, why = gpu_check_notebook.prepare(sys.executable, SHIM, self.out, environment())
        for order, said in (("dies", "the kernel died"), ("hangs", "the cell had not finished")):
            with self.subTest(order=order):
                case = dataclasses.replace(self.case, args=(order, *self.case.args[1:]))
                outcome = run([sys.executable, case.source, *case.args], os.path.join(self.out, "checks", order),
                              environment(None, dict(settings, FIRSTASSERT_LIB=SHIM)), 40)
                self.assertFalse(outcome.timed_out, outcome.stderr[-2000:])
                self.assertEqual(outcome.returncode, gpucase.EXIT_OTHER_ERROR, outcome.stderr[-2000:])
                self.assertLess(outcome.elapsed, 40 - 10)
                last = outcome.stderr.strip().splitlines()[-1]
                self.assertTrue(last.startswith("gpu-check: the failing cell: " + said), last)
                verdict = self.verdict("default", outcome)
                self.assertTrue(verdict.startswith("FAIL: exit"), verdict)
                pid = int(outcome.lines(notebook_case.KERNEL_PID, "stderr")[0][len(notebook_case.KERNEL_PID):])
                with self.assertRaises(ProcessLookupError, msg=f"the kernel {pid} outlived its case"):
                    os.kill(pid, 0)

    def test_without_the_shim_no_cell_may_show_firstassert(self):
        def loud(cell):
            cell["shown"] += "firstassert: on\n"
            return cell

        self.assertEqual(self.verdict("bare", with_cell(self.outcomes["bare"], "setup", loud)), "FAIL: cells")


class Pieces(unittest.TestCase):
    def test_the_cupti_the_shim_took_is_read_from_its_own_words(self):
        with tempfile.TemporaryDirectory() as work:
            argv = [sys.executable, os.path.join(HERE, "sim_case.py"), SIM_DIR, "healthy"]
            said = run(argv, work, environment(SHIM, {"FIRSTASSERT_LOG": "info"}), 60)
            taken, why = gpu_check.cupti_taken(said)
            self.assertEqual((taken, why), (os.path.join(SIM_DIR, "libcupti.so.13"), ""))
            quiet = run(argv, work, environment(SHIM), 60)
            self.assertEqual(gpu_check.cupti_taken(quiet), ("", "the run ended with exit 0 and the shim said nothing"))

    def test_a_profiled_case_expects_the_hand_over_only_where_the_mode_records_through_cupti(self):
        profiled = next(case for case in CASES if case.profiled)
        self.assertEqual(profiled.name, "profiler_late")
        for mode, tool in (("default", ("interpose", True)), ("sync=all", ("interpose", True)),
                           ("interpose", ("interpose", False))):
            with self.subTest(mode=mode):
                self.assertEqual(profiled.tool_in(MODE[mode]), tool)
                self.assertEqual(CASES[0].tool_in(MODE[mode]), (MODE[mode].backend, None))

    def test_a_graph_case_wants_exact_in_every_mode_the_others_what_the_mode_allows(self):
        graph = next(case for case in CASES if case.graph)
        self.assertEqual(graph.name, "graph_replay")
        for mode in MODES:
            with self.subTest(mode=mode.name):
                self.assertEqual(graph.confidence_in(mode), ("exact",))
                self.assertEqual(CASES[0].confidence_in(mode), mode.confidence)

    def test_dynamic_symbols_are_what_nm_lists(self):  # nm: binutils, which scripts/lib/setup.sh installs
        for path in (SHIM, os.path.join(SIM_DIR, "libcuda.so.1")):
            with self.subTest(path=path):
                listed = {}
                for which in ("--defined-only", "--undefined-only"):
                    out = subprocess.run(["nm", "-D", which, path], capture_output=True, text=True, check=True).stdout
                    listed[which] = {line.split()[-1].split("@")[0] for line in out.splitlines()}
                self.assertEqual(elf_symbols.dynamic_symbols(path),
                                 (listed["--defined-only"], listed["--undefined-only"]))

    def test_the_libc_probe_compares_the_drivers_imports_with_the_shims_definitions(self):
        # The simulator's driver stands in for NVIDIA's: it prints its assertion lines with fprintf and write.
        lines = probes.libc_probe(os.path.join(SIM_DIR, "libcuda.so.1"), SHIM, [])
        self.assertTrue(lines[1].startswith("output functions it imports: fprintf, write"), lines[1])
        defined = set(lines[2][len("the shim defines: "):].split(", "))
        self.assertLessEqual({"fprintf", "write", "writev", "fwrite", "fputs", "vfprintf"}, defined)
        self.assertEqual(lines[3], "imported but not interposed: none")


if __name__ == "__main__":
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    SHIM, SIM_DIR, NVCC = (os.path.abspath(a) for a in sys.argv[1:4])
    skip_aware.main(sys.argv[4:])
