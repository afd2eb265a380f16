#!/usr/bin/env python3
"""Test: the Python package firstassert in a notebook's ways, with the simulator (stdlib unittest, no pytest).

usage: notebook_test.py PACKAGE_ROOT SHIM SIM_DIR
       notebook_test.py --child[-enable-early|-slot-taken|-disable|-disarm[-preloaded]|-injected-disable|-report-before-enable] PACKAGE_ROOT SHIM SIM_DIR
                        [REPORT_DIR]
       PACKAGE_ROOT  build/python, which holds the build tree's copy of the package
       SHIM     build/src/libfirstassert.so
       SIM_DIR  build/tests/sim (libcudart.so.13, libsimkernels.so)

The CUDA part runs in a child process (this file with --child), as a notebook kernel that dies of a device-side
assert; the parent reads the report afterwards, as the restarted kernel does, and never loads CUDA itself.
"""
import contextlib
import ctypes
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

THIS_FILE = os.path.abspath(__file__)
NLL_LOSS_MANGLED = "_ZN2at6native38nll_loss_forward_reduce_cuda_kernel_2dIflEEvPT_S3_PKS2_PKT0_S5_bllll"
PACKAGE_ROOT = SHIM = SIM_DIR = None


def marker_line(marker):
    with open(THIS_FILE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# " + marker):
                return number
    raise AssertionError("marker %s not found" % marker)


# ---- the child: a job that launches nll_loss with a label out of range -----------------------------------------

class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def launch_nll_loss(cudart, kernels, loss, weight_sum, logits, labels):
    holders = [loss, weight_sum, logits, labels, ctypes.c_void_p(None), ctypes.c_bool(True), ctypes.c_long(4),
               ctypes.c_long(4), ctypes.c_long(4), ctypes.c_long(-100)]
    argv = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    stub = kernels.simkernels_host_stub(b"nll_loss")
    return cudart.cudaLaunchKernel(stub, dim3(1, 1, 1), dim3(32, 1, 1), argv, 0, None)  # LAUNCH_LINE


def assert_in_nll_loss(kernels, cudart):
    """The job's one step: a batch with a label out of range, nll_loss launched, then a sync. (launch, sync) codes."""
    kernels.simkernels_host_stub.restype = ctypes.c_void_p
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.c_size_t, ctypes.c_void_p]
    tensors = []
    for nbytes in (4, 4, 64, 32):
        p = ctypes.c_void_p()
        cudart.cudaMalloc(ctypes.byref(p), nbytes)
        tensors.append(p)
    labels = (ctypes.c_long * 4)(0, 1, 9, 2)  # 9: out of [0, 4)
    cudart.cudaMemcpy(tensors[3], ctypes.cast(labels, ctypes.c_void_p), ctypes.sizeof(labels), 1)
    return launch_nll_loss(cudart, kernels, *tensors), cudart.cudaDeviceSynchronize()


def child(package_root, shim, sim_dir, report_dir, enable_first=False):
    """The job, enabled once CUDA's libraries are loaded (as after `import torch`), or before (enable_first)."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    if enable_first and not fa.enable(lib=shim, report_dir=report_dir):
        print("enable() returned False")
        return 3
    # PyDLL keeps the GIL held during the calls, as a framework's C++ extension does: Python frames are recorded.
    kernels = ctypes.PyDLL(os.path.join(sim_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
    cudart = ctypes.PyDLL(os.path.join(sim_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    if not enable_first and not fa.enable(lib=shim, report_dir=report_dir):
        print("enable() returned False")
        return 3
    launched, synced = assert_in_nll_loss(kernels, cudart)
    print("launch %d sync %d report %s" % (launched, synced, fa.report_path()))
    return 0 if (launched, synced) == (0, 710) and fa.report_path() else 4


def child_enable_early(package_root, shim, sim_dir):
    """enable() before CUDA's libraries are loaded arms the shim for cuInit, without spending the process's one
    activation: a later enable() still starts recording at once. A tool already named for injection is kept."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    os.environ["CUDA_INJECTION64_PATH"] = "/opt/other/libtool.so"
    early, _, early_err = captured(fa.enable, lib=shim)
    armed = {k: os.environ.get(k) for k in ("CUDA_INJECTION64_PATH", "FIRSTASSERT_CHAINED_INJECTION")}
    os.environ["FIRSTASSERT_CHAINED_INJECTION"] = ""  # no such tool here: the test only looks at what was kept
    ctypes.PyDLL(os.path.join(sim_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    late, _, late_err = captured(fa.enable, lib=shim)
    print(json.dumps({"early": early, "early_err": early_err, "armed": armed, "late": late, "late_err": late_err}))
    return 0


def child_disarm(package_root, shim, sim_dir):
    """enable() before CUDA started armed the shim through the environment; disable() then disarms it, and CUDA
    starting afterwards brings no recorder up."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    os.environ["CUDA_INJECTION64_PATH"] = "/opt/other/libtool.so"
    armed = fa.enable(lib=shim)
    disarmed = fa.disable()
    environment = {k: os.environ.get(k) for k in ("CUDA_INJECTION64_PATH", "FIRSTASSERT_CHAINED_INJECTION")}
    if os.environ.get("CUDA_INJECTION64_PATH") == "/opt/other/libtool.so":
        os.environ.pop("CUDA_INJECTION64_PATH")  # that tool does not exist here; the shim, left armed, would load
    load_cuda(sim_dir)
    with open("/proc/self/maps") as maps:
        recorder_loaded = "libfirstassert_recorder.so" in maps.read()
    print(json.dumps({"armed": armed, "disarmed": disarmed, "environment": environment,
                      "recorder_loaded": recorder_loaded}))
    return 0


def child_disarm_preloaded(package_root, shim, sim_dir):
    """Preloaded, the shim armed itself at load (CUDA_INJECTION64_PATH names it); enable() then disable() before
    CUDA started disarms it all the same."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    armed_at_load = os.environ.get("CUDA_INJECTION64_PATH")
    armed, disarmed = fa.enable(lib=shim), fa.disable()
    left = os.environ.get("CUDA_INJECTION64_PATH")
    load_cuda(sim_dir)
    with open("/proc/self/maps") as maps:
        recorder_loaded = "libfirstassert_recorder.so" in maps.read()
    print(json.dumps({"armed_at_load": bool(armed_at_load), "armed": armed, "disarmed": disarmed, "left": left,
                      "recorder_loaded": recorder_loaded}))
    return 0


def child_injected_disable(package_root, shim, sim_dir):
    """The driver loaded the shim (CUDA_INJECTION64_PATH) and it records through CUPTI, with no enable() in Python:
    disable() still gives CUPTI back."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    os.environ["CUDA_INJECTION64_PATH"] = shim
    load_cuda(sim_dir)
    held = profiler_subscribes(sim_dir)
    disabled = fa.disable()
    freed = profiler_subscribes(sim_dir)
    print(json.dumps({"held": held, "disabled": disabled, "freed": freed}))
    return 0


def child_slot_taken(package_root, shim, sim_dir):
    """Another tool holds CUPTI's only subscriber slot: enable() returns False with one line."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    ctypes.PyDLL(os.path.join(sim_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    cupti = ctypes.PyDLL(os.path.join(sim_dir, "libcupti.so.13"), mode=ctypes.RTLD_GLOBAL)
    callback_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
    callback = callback_type(lambda *args: None)
    handle = ctypes.c_void_p()
    cupti.cuptiSubscribe.argtypes = [ctypes.POINTER(ctypes.c_void_p), callback_type, ctypes.c_void_p]
    subscribed = cupti.cuptiSubscribe(ctypes.byref(handle), callback, None)
    result, _, err = captured(fa.enable, lib=shim)
    print(json.dumps({"subscribed": subscribed, "result": result, "err": err}))
    return 0


def load_cuda(sim_dir):
    kernels = ctypes.PyDLL(os.path.join(sim_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
    cudart = ctypes.PyDLL(os.path.join(sim_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    pointer = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(pointer), 4)  # CUDA starts
    return kernels, cudart


PROFILER_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
_ignore = PROFILER_CALLBACK(lambda *_: None)


def profiler_subscribes(sim_dir):
    """A profiler's cuptiSubscribe, as torch.profiler's Kineto makes it: the CUPTI result (0 when it got the slot,
    39 when another subscriber holds it); it unsubscribes again at once."""
    cupti = ctypes.CDLL(os.path.join(sim_dir, "libcupti.so.13"))
    handle = ctypes.c_void_p()
    result = cupti.cuptiSubscribe(ctypes.byref(handle), _ignore, None)
    if result == 0:
        cupti.cuptiUnsubscribe(handle)
    return result


def child_disable(package_root, shim, sim_dir):
    """Enabled in-process, the stderr pipe takes fd 2 unless it is a terminal, and CUPTI is held; disable() gives
    both back, and enable() takes them again."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    identity = lambda: list(os.fstat(2)[1:3])  # (inode, device)
    before = identity()
    load_cuda(sim_dir)
    enabled = fa.enable(lib=shim)
    during = identity()
    held = profiler_subscribes(sim_dir)
    os.write(2, b"through the pipe\n")
    disabled = fa.disable()
    after = identity()
    freed = profiler_subscribes(sim_dir)
    os.write(2, b"after disable\n")
    again = fa.enable(lib=shim)
    reenabled = identity()
    held_again = profiler_subscribes(sim_dir)
    os.write(2, b"enabled again\n")
    fa.disable()
    print(json.dumps({"enabled": enabled, "before": before, "during": during, "after": after, "again": again,
                      "reenabled": reenabled, "final": identity(), "tty": os.isatty(2), "held": held,
                      "disabled": disabled, "freed": freed, "held_again": held_again,
                      "disabled_twice": fa.disable()}))
    return 0


def child_crash(package_root, shim, sim_dir):
    """Enabled in-process (fd 2 piped), the process dies of a signal: its last line still reaches stderr."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    load_cuda(sim_dir)
    if not fa.enable(lib=shim):
        return 3
    import signal
    os.kill(os.getpid(), signal.SIGABRT)
    return 4


def child_report_before_enable(package_root, shim, sim_dir, report_dir):
    """Preloaded, the report was written before enable(report_dir=...): enable says where it is, and
    last_report(report_dir) finds nothing rather than another directory's report."""
    sys.path.insert(0, package_root)
    import firstassert as fa
    assert_in_nll_loss(*load_cuda(sim_dir))
    enabled, _, err = captured(fa.enable, report_dir=report_dir)
    found, _, _ = captured(fa.last_report, report_dir)
    _, shown, _ = captured(fa.show, found)
    print(json.dumps({"enabled": enabled, "err": err, "found": found, "shown": shown, "path": fa.report_path()}))
    return 0


# ---- the tests --------------------------------------------------------------------------------------------------

def run_child(mode, *args, preload=False, **options):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "FIRSTASSERT_DIR", "FIRSTASSERT_LIB")}
    if preload:
        env["LD_PRELOAD"] = SHIM
    streams = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    streams.update(options)
    return subprocess.run([sys.executable, THIS_FILE, mode, PACKAGE_ROOT, SHIM, SIM_DIR] + list(args),
                          text=True, env=env, timeout=90, **streams)


def import_module():
    sys.path.insert(0, PACKAGE_ROOT)
    import firstassert
    return firstassert


def captured(function, *args, **kwargs):
    """(result, stdout, stderr) of a call."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        result = function(*args, **kwargs)
    return result, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def environment(**values):
    """Sets (or, for None, removes) environment variables for the duration of a block."""
    saved = {name: os.environ.get(name) for name in values}
    def apply(settings):
        for name, value in settings.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    apply(values)
    try:
        yield
    finally:
        apply(saved)


def write(path, text, mtime):
    with open(path, "w") as f:
        f.write(text)
    os.utime(path, (mtime, mtime))


class DeviceAssertInAChild(unittest.TestCase):
    def test_report_survives_and_shows(self):
        fa = import_module()
        with tempfile.TemporaryDirectory() as tmp:
            run = run_child("--child", tmp)
            detail = "child exit %d\nstdout:\n%s\nstderr:\n%s" % (run.returncode, run.stdout, run.stderr)
            self.assertEqual(run.returncode, 0, detail)
            self.assertIn("launch 0 sync 710", run.stdout, detail)

            report, _, err = captured(fa.last_report, tmp)
            self.assertIsNotNone(report, detail)
            self.assertEqual(err, "")
            self.assertEqual(report["schema"], "firstassert/1")
            self.assertEqual(report["first_error"]["code"], 710)
            self.assertEqual(report["culprit"]["mangled"], NLL_LOSS_MANGLED)
            self.assertEqual(report["culprit"]["hint"]["id"], "class-index-out-of-range")
            self.assertTrue(report["final"], "the child exited: the report was rewritten at exit")
            # Enabled in-process, the device's line was read through the stderr pipe, and the child's stderr still
            # holds it, once, before the lines firstassert wrote after seeing the error.
            self.assertEqual(report["culprit"]["device_message"]["condition"], "t >= 0 && t < n_classes", detail)
            device_line = next(l for l in run.stderr.splitlines() if "Assertion `t >= 0 && t < n_classes`" in l)
            self.assertEqual(run.stderr.count(device_line), 1, detail)
            self.assertLess(run.stderr.index(device_line), run.stderr.index("firstassert: first device-side"), detail)

            _, shown, err = captured(fa.show, report)
            self.assertEqual(err, "")
            innermost = "%s:%d in launch_nll_loss" % (THIS_FILE, marker_line("LAUNCH_LINE"))
            for expected in ["nll_loss_forward_reduce_cuda_kernel_2d", report["culprit"]["hint"]["title"],
                             "cudaErrorAssert (710)", "grid (1,1,1)  block (32,1,1)  shared 0 B  stream 0x0",
                             "exact:", "secondary    no later errors\n"]:
                self.assertIn(expected, shown, shown)
            # The shim reads Python frames of CPython 3.9+ (src/stack/python_layout.h); older interpreters get none.
            # The launching line is this file's, with its text.
            with open(THIS_FILE, encoding="utf-8") as f:
                launch_text = f.read().splitlines()[marker_line("LAUNCH_LINE") - 1].strip()
            python_lines = [l for l in shown.splitlines() if l.startswith(("python ", "launched at "))]
            self.assertEqual(python_lines, ["launched at  %s  ->  %s" % (innermost, launch_text),
                                            "python       " + innermost]
                             if sys.version_info >= (3, 9) else [], shown)

            # show() with no argument reads the newest report of FIRSTASSERT_DIR, as after a restart.
            with environment(FIRSTASSERT_DIR=tmp):
                _, again, _ = captured(fa.show)
            self.assertEqual(again, shown)

        # Nothing in this process loaded CUDA or the shim: the device-side assert happened in the child only.
        with open("/proc/self/maps") as maps:
            mapped = maps.read()
        for library in ("libcudart.so", "libcuda.so", "libfirstassert.so"):
            self.assertNotIn(library, mapped)


class StderrPipe(unittest.TestCase):
    def test_disable_gives_fd_2_back_and_nothing_written_is_lost(self):
        run = run_child("--child-disable")
        self.assertEqual(run.returncode, 0, run.stderr)
        result = json.loads(run.stdout)
        self.assertIs(result["enabled"], True, run.stderr)
        self.assertNotEqual(result["during"], result["before"], "fd 2 is on the pipe while enabled")
        self.assertEqual(result["after"], result["before"], "disable() restores fd 2")
        self.assertIs(result["again"], True, run.stderr)
        self.assertNotEqual(result["reenabled"], result["before"], "enable() after disable() pipes fd 2 again")
        self.assertEqual(result["final"], result["before"])
        # CUPTI: a profiler is refused while enabled (not preloaded, firstassert cannot hand it over), gets it after
        # disable(), and is refused again once enable() records again.
        self.assertEqual((result["held"], result["freed"], result["held_again"]), (39, 0, 39), run.stderr)
        self.assertIs(result["disabled"], True)
        self.assertIs(result["disabled_twice"], False, "nothing was recording any more")
        # Each enable() says once that CUPTI is held (not preloaded, a later profiler cannot be handed it).
        held = ("firstassert: recording holds CUPTI: a profiler started from now on (torch.profiler, Nsight Systems) "
                "is refused it; firstassert.disable() (C: firstassert_disable()) gives it back\n")
        self.assertEqual(run.stderr, held + "through the pipe\nafter disable\n" + held + "enabled again\n")

    def test_disable_without_enable_releases_cupti_the_driver_gave_the_shim(self):
        run = run_child("--child-injected-disable")
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout), {"held": 39, "disabled": True, "freed": 0}, run.stderr)

    def test_disable_before_cuda_started_disarms_a_preloaded_shim(self):
        run = run_child("--child-disarm-preloaded", preload=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout), {"armed_at_load": True, "armed": True, "disarmed": True,
                                                  "left": None, "recorder_loaded": False}, run.stderr)

    def test_disable_before_cuda_started_disarms_the_shim(self):
        run = run_child("--child-disarm")
        self.assertEqual(run.returncode, 0, run.stderr)
        result = json.loads(run.stdout)
        self.assertEqual((result["armed"], result["disarmed"]), (True, True), run.stderr)
        self.assertEqual(result["environment"], {"CUDA_INJECTION64_PATH": "/opt/other/libtool.so",
                                                 "FIRSTASSERT_CHAINED_INJECTION": None})
        self.assertIs(result["recorder_loaded"], False, "CUDA started after disable(): nothing records")

    def test_a_process_dying_of_a_signal_still_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = run_child("--child-crash", cwd=tmp)
        self.assertEqual(run.returncode, -6, run.stderr)
        self.assertIn("firstassert: the process is dying of a signal with no CUDA error recorded", run.stderr)

    def test_a_terminal_is_left_alone(self):
        # On a terminal the device's lines are on the screen already; a pipe would change isatty(2).
        leader, follower = os.openpty()
        try:
            run = run_child("--child-disable", stderr=follower)
        finally:
            os.close(follower)
        os.close(leader)
        self.assertEqual(run.returncode, 0)
        result = json.loads(run.stdout)
        self.assertIs(result["enabled"], True)
        self.assertEqual(result["during"], result["before"])
        self.assertEqual(result["reenabled"], result["before"], "enable() again leaves the terminal alone too")
        self.assertIs(result["tty"], True)


class ReportDir(unittest.TestCase):
    def test_a_report_written_before_enable_is_named_and_never_mistaken_for_the_directorys(self):
        fa = import_module()
        with tempfile.TemporaryDirectory() as elsewhere, tempfile.TemporaryDirectory() as wanted:
            run = run_child("--child-report-before-enable", wanted, preload=True, cwd=elsewhere)
            self.assertEqual(run.returncode, 0, run.stderr)
            result = json.loads(run.stdout)
            self.assertIs(result["enabled"], True)
            self.assertTrue(result["path"].startswith(elsewhere + "/"), result)
            self.assertEqual(result["err"], "firstassert: this process's report was written in %s before "
                             "enable(report_dir=%s); it stays there, and last_report(%r) will not find it\n"
                             % (elsewhere, wanted, wanted))
            self.assertIsNone(result["found"])
            self.assertEqual(result["shown"], "firstassert: no report to show (None: last_report() found none in "
                             "the directory it was given)\n")
            self.assertEqual(os.listdir(wanted), [])
            self.assertIsNotNone(fa.last_report(elsewhere))


class ShowWithoutTheCommand(unittest.TestCase):
    def test_an_installation_without_the_command_says_so_in_one_line(self):
        fa = import_module()
        from firstassert import library
        report = {"schema": "firstassert/1", "final": True, "first_error": {"code": 710}, "culprit": None}
        real = library.cli_path
        library.cli_path = lambda: None
        try:
            _, shown, err = captured(fa.show, report)
        finally:
            library.cli_path = real
        self.assertEqual(shown, "firstassert: cannot show the report: this installation has no firstassert program "
                                "(the package's _native/ is empty); reinstall it (pip install --force-reinstall "
                                "firstassert)\n")
        self.assertEqual(err, "")


class ShowSaysWhoseReportItIs(unittest.TestCase):
    def test_a_report_from_an_earlier_process_says_it_predates_this_one(self):
        fa = import_module()
        with tempfile.TemporaryDirectory() as tmp:
            run = run_child("--child", tmp)
            self.assertEqual(run.returncode, 0, run.stderr)
            pid = fa.last_report(tmp)["process"]["pid"]
            # Read by a process started after the writer ended, as the kernel after a restart.
            reader = subprocess.run([sys.executable, "-c", "import os, sys; sys.path.insert(0, sys.argv[1]); "
                                     "print(os.getpid(), flush=True); "
                                     "import firstassert; firstassert.show(sys.argv[2])", PACKAGE_ROOT, tmp],
                                    capture_output=True, text=True, timeout=60)
            self.assertEqual(reader.returncode, 0, reader.stderr)
            reader_pid = int(reader.stdout.splitlines()[0])
            self.assertIn("pid %d on %s, started " % (pid, socket.gethostname()), reader.stdout)
            self.assertIn("an earlier process than this one (pid %d): the report predates it" % reader_pid,
                          reader.stdout)
            # This test's process started before the writer: not "earlier", and not this one.
            _, shown, _ = captured(fa.show, tmp)
            self.assertIn("another process than this one (pid %d)" % os.getpid(), shown)

    def test_this_processs_own_report_says_so(self):
        fa = import_module()
        report = {"schema": "firstassert/1", "final": False, "first_error": {"code": 710}, "culprit": None,
                  "process": {"pid": os.getpid(), "host": socket.gethostname(), "start_time_ns": 1}}
        _, shown, _ = captured(fa.show, report)
        self.assertIn("\n             this process\n", shown)


class ShowFoldsFrameworkFrames(unittest.TestCase):
    def test_a_run_of_notebook_machinery_is_one_line(self):
        fa = import_module()
        site = "/usr/lib/python3/site-packages"
        frames = [{"file": "/home/u/nb.py", "line": 2, "function": "step"},
                  {"file": site + "/ipykernel/zmqshell.py", "line": 10, "function": "run_cell"},
                  {"file": site + "/IPython/core/interactiveshell.py", "line": 11, "function": "run_code"},
                  {"file": "/usr/lib/python3.11/asyncio/events.py", "line": 80, "function": "_run"},
                  {"file": site + "/tornado/ioloop.py", "line": 12, "function": "start"},
                  {"file": "/home/u/main.py", "line": 5, "function": "<module>"},
                  {"file": "<frozen runpy>", "line": 88, "function": "_run_code"}]
        report = {"schema": "firstassert/1", "final": True, "first_error": {"code": 710},
                  "culprit": {"kernel": "k", "python_stack": frames}}
        _, shown, _ = captured(fa.show, report)
        lines = shown.splitlines()
        start = next(i for i, text in enumerate(lines) if text.startswith("python "))
        self.assertEqual([text.strip() for text in lines[start:start + 4]], [
            "python       /home/u/nb.py:2 in step",
            "... 4 frames of ipykernel, IPython, asyncio, tornado",
            "/home/u/main.py:5 in <module>",
            "... 1 frame of runpy"], shown)


class CellOfASmallWindow(unittest.TestCase):
    """The failing cell (notebook.CellWatch) of a report whose failing launch is one of a few: the rows the command
    gives, as the cell lays them out; the report is made here, with the shim's refresh and the display stood in for."""

    CELL_FILE = "/tmp/ipykernel_5151/2718281828.py"

    @staticmethod
    def launch(seq, kernel, stream, frames):
        return {"seq": seq, "api": "cuLaunchKernel", "graph": False, "graph_node": None, "kernel": kernel,
                "short_name": kernel, "mangled": kernel, "grid": [8, 1, 1], "block": [128, 1, 1], "shared_mem": 0,
                "stream": stream, "per_thread_default_stream": False, "device": 0, "thread": 5151,
                "native_stack": [], "python_stack": frames}

    def window_report(self, count):
        """count launches on streams of their own, each from its own line; the oldest is the one shown."""
        site = "/usr/lib/python3.11/site-packages/torch/_inductor/output_code.py"
        launches = []
        for i in range(count):
            # The newest from a cell, the others from the user's module below a library frame.
            where = ({"file": self.CELL_FILE, "line": 3, "function": "<module>"} if i == count - 1 else
                     {"file": "/home/u/train.py", "line": 20 + i, "function": "step"})
            launches.append(self.launch(10 + i, "triton_poi_fused_%d" % i, "0x7f0%d" % i,
                                        [{"file": site, "line": 460, "function": "__call__"}, where]))
        reason = ("the failing launch is one of %d launches not seen to complete when cudaStreamSynchronize reported "
                  "cudaErrorIllegalAddress; the device printed no assertion line that tells them apart; the oldest "
                  "is shown, not claimed" % count)
        culprit = dict(launches[0], confidence="window", reason=reason, device_message=None, hint=None)
        return {"schema": "firstassert/1", "final": False,
                "first_error": {"api": "cudaStreamSynchronize", "code": 700, "name": "cudaErrorIllegalAddress",
                                "description": "an illegal memory access was encountered", "sticky": True,
                                "thread": 5151},
                "decision": {"confidence": "window", "reason": reason, "candidates": count},
                "culprit": culprit, "candidates": launches[::-1], "device_messages": [],
                "secondary": {"count": 0, "sites": []}}

    def shown_in_cell(self, report):
        """[(title, rows, text)] of what the cell displayed."""
        sys.path.insert(0, PACKAGE_ROOT)
        from firstassert import library, notebook
        displayed = []

        class Result:
            error_in_exec = RuntimeError("CUDA error: an illegal memory access was encountered")
            execution_count = 5

        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "firstassert-node3-5151.json")
            with open(path, "w") as f:
                json.dump(report, f)
            # The names the kernel kept of its cells (as after a restart: no IPython in this process).
            with open(path + ".cells", "w") as f:
                json.dump({self.CELL_FILE: {"cell": "In[5]", "source": "x = 1\ny = 2\nz = model(x)\n"}}, f)
            saved = library.refresh_report, notebook._display
            library.refresh_report = lambda: path
            notebook._display = lambda rows, title, footer: displayed.append(
                (title, rows, notebook.render_text(rows, title, footer)))
            try:
                _, out, err = captured(notebook.CellWatch().after_cell, Result())
            finally:
                library.refresh_report, notebook._display = saved
        self.assertEqual((out, err), ("", ""))
        return displayed

    def test_a_window_of_two_names_each_launch_with_its_line(self):
        [(title, rows, text)] = self.shown_in_cell(self.window_report(2))
        self.assertEqual(title, "the first CUDA error of this kernel")
        labels = [label for label, _ in rows]
        self.assertEqual(labels[labels.index("confidence") + 1], "window", rows)
        window = dict(rows)["window"]
        # Newest first, as the report lists them; the oldest is the one the kernel row shows.
        self.assertEqual(window, ["the failing launch is one of these 2 (<- the one shown)",
                                  "triton_poi_fused_1  stream 0x7f01  Cell In[5], line 3",
                                  "triton_poi_fused_0  stream 0x7f00  /home/u/train.py:20 in step  <- shown"])
        self.assertEqual(dict(rows)["kernel"][0], "triton_poi_fused_0")
        self.assertIn("\n  window       the failing launch is one of these 2 (<- the one shown)\n"
                      "               triton_poi_fused_1  stream 0x7f01  Cell In[5], line 3\n"
                      "               triton_poi_fused_0  stream 0x7f00  /home/u/train.py:20 in step  <- shown\n",
                      text)

    def test_a_window_of_four_names_each_and_of_five_none(self):
        [(_, rows, _)] = self.shown_in_cell(self.window_report(4))
        window = dict(rows)["window"]
        self.assertEqual(len(window), 5, window)
        for i in range(3):
            named = "triton_poi_fused_%d  stream 0x7f0%d  /home/u/train.py:%d in step" % (i, i, 20 + i)
            self.assertEqual([line for line in window if line.startswith(named)], [window[4 - i]], window)
        self.assertEqual(window[1], "triton_poi_fused_3  stream 0x7f03  Cell In[5], line 3")
        self.assertEqual([line for line in window if line.endswith("  <- shown")],
                         ["triton_poi_fused_0  stream 0x7f00  /home/u/train.py:20 in step  <- shown"])

        [(_, rows, text)] = self.shown_in_cell(self.window_report(5))
        self.assertNotIn("window", [label for label, _ in rows])
        self.assertNotIn("triton_poi_fused_1", text)

    def test_a_claim_shows_no_window(self):
        report = self.window_report(2)
        report["culprit"].update(confidence="exact", reason="the only launch not seen to complete")
        report["decision"].update(confidence="exact", candidates=1)
        report["candidates"] = [report["candidates"][1]]
        [(_, rows, text)] = self.shown_in_cell(report)
        self.assertEqual([label for label, _ in rows],
                         ["first error", "kernel", "confidence", "launch", "launched at", "device", "hint", "report"])
        self.assertNotIn("<- shown", text)


class CellsOnSeveralGpus(unittest.TestCase):
    """What a failing cell says of a job that used several GPUs: a device-side assert loses its own GPU's context, so
    the footer names it; a later cell's error, once another GPU failed too, may be that GPU's own."""

    @staticmethod
    def report(code=710, other_state="working", devices=2):
        gpus = [{"ordinal": 1, "failed_first": True, "after_first_error": None},
                {"ordinal": 0, "failed_first": False,
                 "after_first_error": {"state": other_state, "syncs_succeeded": 0, "launches_completed": 3,
                                       "sticky_errors": 1 if other_state == "failed" else 0,
                                       "first_error": {"api": "cudaStreamSynchronize", "code": 710,
                                                       "name": "cudaErrorAssert"}
                                       if other_state == "failed" else None}}][:devices]
        return {"first_error": {"code": code, "sticky": True}, "devices": gpus, "secondary": {"count": 2}}

    def setUp(self):
        import_module()
        from firstassert import notebook
        self.notebook = notebook
        self.first = {"cell": "In[3]", "kernel": "nll_loss_forward_reduce_cuda_kernel_2d", "where": "Cell In[3], line 6"}

    def test_the_footer_names_the_gpu_a_device_assert_lost(self):
        self.assertIn("every CUDA call on cuda:1 fails until this kernel restarts",
                      self.notebook.restart_advice(self.report()))
        # Other sticky errors lose every context of the process; one GPU has nothing to tell apart.
        self.assertEqual(self.notebook.restart_advice(self.report(code=700)), self.notebook.RESTART)
        self.assertEqual(self.notebook.restart_advice(self.report(devices=1)), self.notebook.RESTART)

    def test_a_later_error_once_another_gpu_failed_is_not_called_the_first_ones(self):
        rows = dict(self.notebook.secondary_rows(self.report(other_state="failed"), self.first, "/r.json"))
        self.assertIn("another GPU has failed since, so it may be that GPU's own", rows["secondary"][0])
        self.assertEqual(rows["other gpu"], ["cuda:0 failed too: cudaErrorAssert (710) at cudaStreamSynchronize"])
        rows = dict(self.notebook.secondary_rows(self.report(), self.first, "/r.json"))
        self.assertIn("this cell's error follows the first one: the CUDA context was lost in cell In[3]",
                      rows["secondary"][0])
        self.assertNotIn("other gpu", rows)


class LastReport(unittest.TestCase):
    def test_empty_dir(self):
        fa = import_module()
        with tempfile.TemporaryDirectory() as tmp:
            result, out, err = captured(fa.last_report, tmp)
            self.assertIsNone(result)
            self.assertEqual((out, err), ("", ""))
            _, shown, _ = captured(fa.show, tmp)
            self.assertEqual(shown, "firstassert: no report at %s\n" % tmp)

    def test_skips_truncated_and_foreign(self):
        fa = import_module()
        valid = {"schema": "firstassert/1", "final": True, "first_error": {"code": 710}, "culprit": None}
        text = json.dumps(valid, indent=2)
        with tempfile.TemporaryDirectory() as tmp:
            write(os.path.join(tmp, "firstassert-host-1.json"), text, 1000)
            truncated = os.path.join(tmp, "firstassert-host-2.json")
            write(truncated, text[: len(text) // 2], 2000)  # newer, partly written
            result, out, err = captured(fa.last_report, tmp)
            self.assertEqual(result["first_error"], {"code": 710})
            self.assertEqual(result["_path"], os.path.join(tmp, "firstassert-host-1.json"))
            self.assertEqual(out, "")
            self.assertEqual(len(err.splitlines()), 1, err)
            self.assertIn(truncated, err)

            foreign = os.path.join(tmp, "firstassert-host-3.json")
            write(foreign, json.dumps({"schema": "something/else"}), 3000)
            result, _, err = captured(fa.last_report, tmp)
            self.assertEqual(result["_path"], os.path.join(tmp, "firstassert-host-1.json"))
            self.assertEqual(len(err.splitlines()), 2, err)
            self.assertIn(foreign, err.splitlines()[0])

            # A report without a culprit is still shown, without raising, saying that none is named and, since this
            # one records no decision, that it gives no reason.
            _, shown, _ = captured(fa.show, result)
            self.assertIn("kernel       not named", shown)
            self.assertIn("confidence   unknown: the report names no culprit and records no decision", shown)


class Enable(unittest.TestCase):
    def test_missing_library(self):
        fa = import_module()
        missing = "/nonexistent/dir/libfirstassert.so"
        result, out, err = captured(fa.enable, lib=missing)
        self.assertIs(result, False)
        self.assertEqual(out, "")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(missing, err)

    def test_missing_library_from_environment(self):
        fa = import_module()
        missing = "/nonexistent/env/libfirstassert.so"
        with environment(FIRSTASSERT_LIB=missing):
            result, _, err = captured(fa.enable)
        self.assertIs(result, False)
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("FIRSTASSERT_LIB", err)

    def test_before_cuda_is_loaded_it_arms_and_a_later_call_still_records(self):
        run = run_child("--child-enable-early")
        self.assertEqual(run.returncode, 0, run.stderr)
        result = json.loads(run.stdout)
        self.assertIs(result["early"], True)
        self.assertEqual(result["early_err"], "")
        self.assertEqual(result["armed"], {"CUDA_INJECTION64_PATH": os.path.realpath(SHIM),
                                           "FIRSTASSERT_CHAINED_INJECTION": "/opt/other/libtool.so"})
        self.assertIs(result["late"], True, "arming must not spend the one activation: " + run.stderr)
        self.assertEqual(result["late_err"], "")

    def test_enabled_before_cuda_starts_the_report_names_the_culprit(self):
        # As `fa.enable()` before `import torch`: recording starts when CUDA does, through the driver's injection.
        with tempfile.TemporaryDirectory() as tmp:
            run = run_child("--child-armed", tmp)
            detail = "child exit %d\nstdout:\n%s\nstderr:\n%s" % (run.returncode, run.stdout, run.stderr)
            self.assertEqual(run.returncode, 0, detail)
            report, _, _ = captured(import_module().last_report, tmp)
            self.assertIsNotNone(report, detail)
            self.assertEqual(report["culprit"]["mangled"], NLL_LOSS_MANGLED)
            self.assertEqual(report["tool"]["backend"], "cupti")

    def test_cupti_slot_taken(self):
        run = run_child("--child-slot-taken")
        self.assertEqual(run.returncode, 0, run.stderr)
        result = json.loads(run.stdout)
        self.assertEqual(result["subscribed"], 0, "the stand-in profiler should hold CUPTI's slot")
        self.assertIs(result["result"], False)
        self.assertEqual(len(result["err"].splitlines()), 1, result["err"])
        self.assertIn("not recording", result["err"])
        self.assertIn("slot", run.stderr, "the shim's own line, on fd 2")

    def test_finds_build_tree_library(self):
        fa = import_module()
        with environment(FIRSTASSERT_LIB=None):
            path, origin = fa.find_library()
        # The build tree's own shim (SHIM may be another build's: meson's tested-binaries).
        built = os.path.join(os.path.dirname(PACKAGE_ROOT), "src", "libfirstassert.so")
        self.assertEqual(os.path.realpath(path), os.path.realpath(built))
        self.assertEqual(origin, "this build tree")


if __name__ == "__main__":
    children = {"--child": child, "--child-armed": lambda *args: child(*args, enable_first=True),
                "--child-enable-early": child_enable_early, "--child-slot-taken": child_slot_taken,
                "--child-disable": child_disable, "--child-disarm": child_disarm,
                "--child-injected-disable": child_injected_disable,
                "--child-disarm-preloaded": child_disarm_preloaded, "--child-crash": child_crash, "--child-report-before-enable": child_report_before_enable}
    if len(sys.argv) >= 5 and sys.argv[1] in children:
        sys.exit(children[sys.argv[1]](*sys.argv[2:]))
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    PACKAGE_ROOT, SHIM, SIM_DIR = (os.path.abspath(a) for a in sys.argv[1:])
    sys.path.insert(0, os.path.join(os.path.dirname(THIS_FILE), "..", "support"))
    import skip_aware
    skip_aware.main([])
