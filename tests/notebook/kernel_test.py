"""Test: firstassert in a real Jupyter kernel (ipykernel, driven by nbclient as a front end would), with the
simulator's training job as the CUDA workload: the failing cell shows the culprit, a later failing cell says it is
secondary, and after a graceful restart or a kill the new kernel shows the report, with its cells named as cells.

usage: kernel_test.py CAPTURE PACKAGE_ROOT SHIM SIM_DIR DEMO_DIR [TEST_NAME ...]
       run with the python of a venv that holds ipykernel and nbclient (scripts/test installs them, pinned)
       CAPTURE       on or off: ipykernel's capture_fd_output (C-level output shown in the cell, or not)
       PACKAGE_ROOT  build/python, which holds the build tree's copy of the package
       SHIM          the libfirstassert.so under test
       SIM_DIR       build/tests/sim (the simulated libcuda, libcudart, libcupti and stock kernels)
       DEMO_DIR      tests/sim/demo (train.py: the training job's CUDA calls, made as PyTorch makes them)
"""
import contextlib
import glob
import json
import os
import re
import signal
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import skip_aware  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim", "demo"))
from notebook_cells import SETUP  # noqa: E402  the job's set-up cell

from jupyter_client import AsyncKernelManager  # noqa: E402
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import DeadKernelError  # noqa: E402
from nbclient.util import run_sync  # noqa: E402
from nbformat.v4 import new_code_cell, new_notebook  # noqa: E402

CAPTURE = PACKAGE_ROOT = SHIM = SIM_DIR = DEMO_DIR = None
DEVICE_LINE = ("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], "
               "thread: [5,0,0] Assertion `t >= 0 && t < n_classes` failed.")
RESTART_ADVICE = "Jupyter: Kernel > Restart; Colab: Runtime > Restart session"
# How `firstassert show` says when a final report was written: by the exit handler, or when the kernel was asked to
# shut down or restart (and its exit, if it came, did not rewrite it).
FINAL_AT_EXIT = "(final, at exit)"
FINAL_AT_SHUTDOWN = "(final, when the process was asked to end; its exit did not rewrite it)"

# The cells of the notebook. The job's setup, then the training loop, whose launch of nll_loss is on line 6 of its
# cell; step 23's batch holds a label equal to the class count, and the loss read back at step 30 raises.
TRAIN = """\
for step in range(1, 41):
    batch = (ctypes.c_long * BATCH)(*[(step + i) % N for i in range(BATCH)])
    if step == 23:
        batch[5] = N
    cuda.to_device(labels, batch)
    cuda.check(cuda.rt.cudaLaunchKernel(nll_loss, one, warp, args, 0, None))
    if step % 10 == 0:
        value = (ctypes.c_float * 1)()
        cuda.to_host(value, loss)
        print("step", step, "loss", value[0])
"""
TRAIN_LAUNCH_LINE = 6
SECONDARY = "cuda.malloc(4)"


class Kernel:
    """One notebook's kernel: cells run one at a time, restarts and kills as a user causes them."""

    def __init__(self, workdir, env):
        self.workdir = workdir
        self.stderr_path = os.path.join(workdir, "kernel-stderr.txt")
        specs = os.path.join(workdir, "kernels")
        os.makedirs(os.path.join(specs, "fa"))
        with open(os.path.join(specs, "fa", "kernel.json"), "w") as f:
            json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                                "--IPKernelApp.capture_fd_output=%s" % (CAPTURE == "on")],
                       "display_name": "firstassert test", "language": "python"}, f)
        self.specs = KernelSpecManager(kernel_dirs=[specs])
        self.nb = new_notebook()
        self.client = NotebookClient(self.nb, km=AsyncKernelManager(kernel_name="fa", kernel_spec_manager=self.specs),
                                     timeout=120, startup_timeout=90, allow_errors=True,
                                     resources={"metadata": {"path": workdir}},
                                     extra_arguments=["--HistoryManager.hist_file=:memory:"])
        self.env = env
        self.stack = contextlib.ExitStack()

    def __enter__(self):
        stderr = self.stack.enter_context(open(self.stderr_path, "ab"))
        self.stack.enter_context(self.client.setup_kernel(env=self.env, stderr=stderr, cleanup_kc=True))
        return self

    def __exit__(self, *exc):
        self.stack.close()

    def run(self, source):
        cell = new_code_cell(source)
        self.nb.cells.append(cell)
        return self.client.execute_cell(cell, len(self.nb.cells) - 1)

    def pid(self):
        return self.client.km.provisioner.pid

    def restart(self):
        """Kernel > Restart: the kernel is asked to shut down and exits; a new one starts. Returns how the old one
        ended (its exit status, or minus the signal that ended it): jupyter_client sends SIGTERM to a kernel that has
        not exited within half its shutdown_wait_time, which ipykernel's own shutdown sometimes runs past on a loaded
        machine, with or without firstassert loaded."""
        old = self.client.km.provisioner.process
        run_sync(self.client.km.restart_kernel)(now=False)
        run_sync(self.client.kc.wait_for_ready)(timeout=90)
        return old.returncode

    def shut_down_then_kill(self):
        """Kernel > Shutdown, and the kernel killed as soon as it answered, before it could exit."""
        kc = self.client.kc
        msg_id = kc.shutdown()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            reply = run_sync(kc.control_channel.get_msg)(timeout=max(1.0, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        os.kill(self.pid(), signal.SIGKILL)

    def kill_and_restart(self):
        """The kernel dies of SIGKILL (out of memory, Colab's watchdog); the front end starts a new one."""
        os.kill(self.pid(), signal.SIGKILL)
        try:
            self.run("1")
        except DeadKernelError:
            pass
        self.client.kc.stop_channels()
        run_sync(self.client.km.restart_kernel)(now=True, newports=True)
        self.client.start_new_kernel_client()

    def kernel_stderr(self):
        with open(self.stderr_path, encoding="utf-8", errors="replace") as f:
            return f.read()


def text_of(cell, kind="stream", name=None):
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream" and kind == "stream" and (name is None or output.name == name):
            parts.append(output.text)
        elif output.output_type in ("display_data", "execute_result") and kind in output.get("data", {}):
            parts.append(output.data[kind])
    return "".join(parts)


def unwrapped(text):
    """firstassert's rows with their wrapped continuation lines joined again."""
    return re.sub(r"\n {15}(?=\S)", " ", text)


def error_of(cell):
    errors = [o for o in cell.outputs if o.output_type == "error"]
    return errors[0] if errors else None


def kernel_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FIRSTASSERT_") and k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "PYTHONPATH",
                                                            "PYTEST_CURRENT_TEST")}  # it turns fd capture off
    env.update({"PYTHONPATH": PACKAGE_ROOT, "FIRSTASSERT_LIB": SHIM, "JUPYTER_PLATFORM_DIRS": "1"})
    env.update(extra)
    return env


class KernelTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.workdir = self.tmp.name
        os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(self.workdir, "runtime")

    def tearDown(self):
        self.tmp.cleanup()

    def detail(self, kernel, *cells):
        shown = "\n".join("--- cell %s outputs:\n%s" % (c.get("execution_count"), json.dumps(c.outputs, indent=1))
                          for c in cells)
        return "%s\n--- kernel stderr:\n%s" % (shown, kernel.kernel_stderr())

    def report_paths(self, directory=None):
        return sorted(glob.glob(os.path.join(directory or self.workdir, "firstassert-*.json")))

    def fail_in_cells(self, kernel):
        """%load_ext, the job's setup, the training cell (In[3]) that dies, a later CUDA call (In[4])."""
        loaded = kernel.run("%load_ext firstassert")
        self.assertIn("firstassert: on", text_of(loaded), self.detail(kernel, loaded))
        setup = kernel.run(SETUP.format(demo=DEMO_DIR, sim=SIM_DIR))
        self.assertIsNone(error_of(setup), self.detail(kernel, setup))
        failing = kernel.run(TRAIN)
        later = kernel.run(SECONDARY)
        return failing, later

    def check_failing_cell(self, kernel, failing):
        detail = self.detail(kernel, failing)
        error = error_of(failing)
        self.assertIsNotNone(error, detail)
        self.assertEqual(error.ename, "RuntimeError", detail)
        self.assertIn("device-side assert triggered", error.evalue, detail)
        shown = unwrapped(text_of(failing, "text/plain"))
        paths = self.report_paths()
        self.assertEqual(len(paths), 1, detail)
        for expected in ["the first CUDA error of this kernel",
                         "first error  cudaErrorAssert (710) device-side assert triggered at cudaMemcpy",
                         "kernel       nll_loss_forward_reduce_cuda_kernel_2d",
                         "launch       grid (1,1,1)  block (32,1,1)  shared 0 B  stream 0x0  device 0  via "
                         "cudaLaunchKernel",
                         "confidence   exact:",
                         "launched at  Cell In[3], line %d  ->  "
                         "cuda.check(cuda.rt.cudaLaunchKernel(nll_loss, one, warp, args, 0, None))" % TRAIN_LAUNCH_LINE,
                         "device       ../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d:"
                         " block (0,0,0), thread (5,0,0): `t >= 0 && t < n_classes` failed",
                         "hint         a class label is outside [0, number of classes)",
                         "report       " + paths[0], RESTART_ADVICE]:
            self.assertIn(expected, shown, detail)
        html = text_of(failing, "text/html")
        self.assertIn("<table>", html, detail)
        self.assertIn("nll_loss_forward_reduce_cuda_kernel_2d", html, detail)
        self.assertIn("t &gt;= 0 &amp;&amp; t &lt; n_classes", html, detail)
        # The device's own line reaches the user unchanged, where the kernel sends C-level output.
        in_cell = text_of(failing, "stream", "stderr")
        if CAPTURE == "on":
            self.assertEqual(in_cell.count(DEVICE_LINE), 1, detail)
        else:
            self.assertNotIn(DEVICE_LINE, in_cell, detail)
            self.assertEqual(kernel.kernel_stderr().count(DEVICE_LINE + "\n"), 1, detail)
        return paths[0]

    def check_secondary_cell(self, kernel, later, report_path):
        detail = self.detail(kernel, later)
        self.assertIn("device-side assert triggered", error_of(later).evalue, detail)
        shown = unwrapped(text_of(later, "text/plain"))
        for expected in ["a secondary CUDA error", "the CUDA context was lost in cell In[3]",
                         "kernel nll_loss_forward_reduce_cuda_kernel_2d, launched at Cell In[3], line %d"
                         % TRAIN_LAUNCH_LINE, RESTART_ADVICE, "report       " + report_path]:
            self.assertIn(expected, shown, detail)
        self.assertNotIn("the first CUDA error", shown, detail)
        # The report already counts it: a kernel killed now leaves it complete.
        with open(report_path) as f:
            report = json.load(f)
        self.assertGreaterEqual(report["secondary"]["count"], 1, detail)
        self.assertIsNotNone(report["culprit"].get("device_message"), detail)

    def check_shown_after_restart(self, kernel, report_path, written):
        kernel.run("%load_ext firstassert")
        shown_cell = kernel.run("%firstassert show")
        # `firstassert show`'s text, its wrapped lines joined again.
        shown = re.sub(r"\n {13}(?=\S)", " ", text_of(shown_cell, "stream", "stdout"))
        detail = self.detail(kernel, shown_cell)
        new_pid = kernel.pid()
        for expected in ["firstassert report " + report_path,
                         written,
                         "an earlier process than this one (pid %d): the report predates it" % new_pid,
                         "launched at  Cell In[3], line %d  ->  " % TRAIN_LAUNCH_LINE,
                         "`t >= 0 && t < n_classes` failed"]:
            self.assertIn(expected, shown, detail)
        self.assertRegex(shown, r"\.\.\. \d+ frames? of [^\n]*IPython", detail)
        count = re.search(r"secondary +(\d+) later errors? at \d+ call sites?, caused by the first", shown)
        self.assertIsNotNone(count, detail)
        self.assertGreaterEqual(int(count.group(1)), 1, detail)


class InAKernel(KernelTestCase):
    def test_the_cells_show_the_culprit_then_secondary_and_a_graceful_restart_shows_the_report(self):
        with Kernel(self.workdir, kernel_env()) as kernel:
            failing, later = self.fail_in_cells(kernel)
            report_path = self.check_failing_cell(kernel, failing)
            self.check_secondary_cell(kernel, later, report_path)
            # A secondary error caught in the cell (no hook runs) is still counted when the report is shown.
            kernel.run("try:\n    cuda.malloc(4)\nexcept RuntimeError:\n    pass")
            same = kernel.run("%firstassert show")
            shown = text_of(same, "stream", "stdout")
            self.assertIn("this process", shown, self.detail(kernel, same))
            self.assertIn("secondary    2 later errors at 1 call site, caused by the first (so far)\n", shown,
                          self.detail(kernel, same))
            ended = kernel.restart()
            self.assertIn(ended, (0, -signal.SIGTERM),
                          "the kernel exited, or jupyter_client terminated it; its stderr:\n" + kernel.kernel_stderr()[-4000:])
            # Asked to restart, the kernel made its report final at once; exited, its exit rewrote it again.
            self.check_shown_after_restart(kernel, report_path, FINAL_AT_EXIT if ended == 0 else FINAL_AT_SHUTDOWN)
            # The restarted kernel, healthy, writes no report of its own.
            kernel.run("import firstassert as fa; fa.enable()")
        self.assertEqual(self.report_paths(), [report_path])

    def test_a_killed_kernel_leaves_a_report_that_counts_the_secondary_errors(self):
        with Kernel(self.workdir, kernel_env()) as kernel:
            failing, later = self.fail_in_cells(kernel)
            report_path = self.check_failing_cell(kernel, failing)
            self.check_secondary_cell(kernel, later, report_path)
            kernel.kill_and_restart()
            self.check_shown_after_restart(kernel, report_path, "(at detection; the process did not exit normally)")

    def test_a_kernel_killed_once_it_answered_a_shutdown_request_leaves_a_final_report(self):
        # Jupyter kills a kernel that has not exited within half its shutdown_wait_time (5 s by default), which
        # ipykernel's own shutdown can take: the report must not wait for the exit handler.
        with Kernel(self.workdir, kernel_env()) as kernel:
            failing, later = self.fail_in_cells(kernel)
            report_path = self.check_failing_cell(kernel, failing)
            self.check_secondary_cell(kernel, later, report_path)
            kernel.shut_down_then_kill()
            with open(report_path, encoding="utf-8") as f:
                report = json.load(f)
            self.assertTrue(report["final"], report_path)
            self.assertEqual(report["final_at"], "shutdown", report_path)
            self.assertGreaterEqual(report["secondary"]["count"], 1, report_path)

    def test_a_refused_launch_is_not_told_to_restart_and_the_assert_after_it_is_the_first(self):
        with Kernel(self.workdir, kernel_env()) as kernel:
            kernel.run("%load_ext firstassert")
            kernel.run(SETUP.format(demo=DEMO_DIR, sim=SIM_DIR))
            refused = kernel.run("cuda.check(cuda.rt.cudaLaunchKernel(nll_loss, one, train.dim3(2048, 1, 1), args, 0, "
                                 "None))")
            detail = self.detail(kernel, refused)
            self.assertIn("invalid configuration argument", error_of(refused).evalue, detail)
            shown = unwrapped(text_of(refused, "text/plain"))
            self.assertIn("a kernel launch was refused", shown, detail)
            self.assertIn("cudaErrorInvalidConfiguration (9)", shown, detail)
            self.assertIn("CUDA still works in this kernel", shown, detail)
            self.assertNotIn(RESTART_ADVICE, shown, detail)
            failing = kernel.run(TRAIN)
            self.assertIn("the first CUDA error of this kernel", text_of(failing, "text/plain"),
                          self.detail(kernel, failing))

    def test_preloaded_kernel_that_ran_cuda_before_enable_writes_where_enable_says(self):
        # A kernel started under the preload (a cluster's Jupyter launched by `firstassert run`), with CUDA already
        # running when the user calls enable(report_dir=...): the report goes there.
        reports = os.path.join(self.workdir, "reports")
        env = kernel_env(LD_PRELOAD=SHIM)
        with Kernel(self.workdir, env) as kernel:
            setup = kernel.run(SETUP.format(demo=DEMO_DIR, sim=SIM_DIR))
            enabled = kernel.run("import firstassert as fa\nfa.enable(report_dir=%r)" % reports)
            detail = self.detail(kernel, setup, enabled)
            self.assertEqual(text_of(enabled, "text/plain"), "True", detail)
            self.assertEqual(text_of(enabled, "stream", "stderr"), "", detail)
            failing = kernel.run(TRAIN)
            detail = self.detail(kernel, failing)
            self.assertEqual(self.report_paths(), [], detail)
            paths = self.report_paths(reports)
            self.assertEqual(len(paths), 1, detail)
            self.assertIn("report       " + paths[0], text_of(failing, "text/plain"), detail)
            kernel.restart()
            shown = kernel.run("import firstassert as fa\nfa.show(fa.last_report(%r))" % reports)
            self.assertIn("firstassert report " + paths[0], text_of(shown, "stream", "stdout"),
                          self.detail(kernel, shown))


def main(argv):
    global CAPTURE, PACKAGE_ROOT, SHIM, SIM_DIR, DEMO_DIR
    if len(argv) < 6 or argv[1] not in ("on", "off"):
        print(__doc__, file=sys.stderr)
        return 2
    CAPTURE, PACKAGE_ROOT, SHIM, SIM_DIR, DEMO_DIR = argv[1], *[os.path.abspath(a) for a in argv[2:6]]
    return skip_aware.main(argv[6:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
