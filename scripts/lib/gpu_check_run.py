"""One program in a fresh process, with or without the shim, its reports in a directory of its own, killed (with
everything it started) at its timeout (scripts/gpu-check)."""
import glob
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field

# Settings of the caller's environment that would change what a run shows: each run sets its own.
CLEARED = ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "CUDA_LAUNCH_BLOCKING")
PIPES_GRACE = 10  # seconds a killed run's pipes may stay open before its output is given up

# The runs in flight (their process groups), so that gpu-check, told to stop, can end them and still print what it
# has: each run is a session of its own, which a signal to gpu-check's own process group does not reach.
STOPPING = threading.Event()
_live = set()
_live_lock = threading.Lock()


def stop_all():
    """Ends every run in flight (SIGKILL to its group); runs not started yet are not started."""
    STOPPING.set()
    with _live_lock:
        groups = list(_live)
    for group in groups:
        kill_group(group)


def kill_group(group):
    try:
        os.killpg(group, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@dataclass
class Outcome:
    argv: list = field(default_factory=list)
    returncode: int = None       # negative: the signal that ended it; None: not run, or killed at the timeout
    timed_out: bool = False
    timeout: float = 0.0
    stdout: str = ""
    stderr: str = ""
    elapsed: float = 0.0
    reports: list = field(default_factory=list)  # firstassert-* files the run left (crash dumps included)
    report: dict = None          # the first report, parsed
    report_error: str = ""       # why the report could not be read
    not_run: str = ""            # why it did not run (no nvcc, the time budget spent)

    @property
    def ended(self):
        if self.not_run:
            return "not run: " + self.not_run
        if self.timed_out:
            return f"killed at the {self.timeout:.0f} s timeout"
        if self.returncode is not None and self.returncode < 0:
            try:
                return "died of " + signal.Signals(-self.returncode).name
            except ValueError:
                return f"died of signal {-self.returncode}"
        return f"exit {self.returncode}"

    def lines(self, prefix, stream="stdout"):
        """The lines of stdout (or stderr) that start with prefix."""
        text = self.stdout if stream == "stdout" else self.stderr
        return [line for line in text.splitlines() if line.startswith(prefix)]


def with_library_path(env, lib_path):
    """env (changed in place, and returned) with lib_path in front of its LD_LIBRARY_PATH; unchanged for ""."""
    if lib_path:
        env["LD_LIBRARY_PATH"] = lib_path + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def environment(shim=None, extra=None, lib_path=""):
    """The caller's environment without firstassert's settings, plus the shim preloaded and the run's own settings.
    lib_path goes in front of LD_LIBRARY_PATH (the shim's own libraries, when this machine lacks them)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k not in CLEARED}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the case programs' directory stays as checked out
    with_library_path(env, lib_path)
    if shim:
        env["LD_PRELOAD"] = shim
    env.update(extra or {})
    return env


def read_report(paths):
    """(the first report, parsed; or None and why). A report proper is preferred to a crash dump."""
    ordered = sorted(paths, key=lambda p: (p.endswith(".crash.json"), p))
    for path in ordered:
        if not path.endswith(".json"):
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return json.load(f), ""
        except (OSError, ValueError) as error:
            return None, f"{os.path.basename(path)} cannot be read: {error}"
    return None, ""


def run(argv, workdir, env, timeout):
    """Runs argv in workdir, which is also FIRSTASSERT_DIR; keeps its output there as stdout.txt and stderr.txt."""
    os.makedirs(workdir, exist_ok=True)
    for stale in glob.glob(os.path.join(workdir, "firstassert-*")):
        os.remove(stale)  # an earlier run's report (gpu-check run again with the same --out) is not this run's
    outcome = Outcome(argv=list(argv), timeout=timeout)
    start = time.monotonic()
    try:
        # A session of its own: at the timeout the whole group goes (Triton's compilers, say), not just the child.
        # GPU_CHECK_TIMEOUT: a case that starts processes of their own session (notebook_case.py's kernel) ends
        # them before this timeout, which kills only the case's own group.
        process = subprocess.Popen(argv, cwd=workdir, env=dict(env, FIRSTASSERT_DIR=workdir,
                                                               GPU_CHECK_TIMEOUT=f"{timeout:.0f}"),
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as error:
        outcome.not_run = f"{argv[0]} cannot be started ({error.strerror})"
        return outcome
    with _live_lock:
        _live.add(process.pid)
    if STOPPING.is_set():
        kill_group(process.pid)  # stop_all() ran between the start and the line above
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        outcome.timed_out = True
        kill_group(process.pid)
        try:
            out, err = process.communicate(timeout=PIPES_GRACE)
        except subprocess.TimeoutExpired:
            # A process of another session it started (a Jupyter kernel) holds its pipes open: not waited for.
            for pipe in (process.stdout, process.stderr):
                pipe.close()
            process.wait()
            said = f"gpu-check: its output pipes were still open {PIPES_GRACE} s after it was killed\n"
            out, err = b"", said.encode()
    finally:
        with _live_lock:
            _live.discard(process.pid)
    outcome.elapsed = time.monotonic() - start
    outcome.returncode = None if outcome.timed_out else process.returncode
    if STOPPING.is_set() and process.returncode == -signal.SIGKILL and not outcome.timed_out:
        outcome.not_run = f"gpu-check was stopped (SIGTERM) {outcome.elapsed:.0f} s into this run, which it killed"
    outcome.stdout = out.decode("utf-8", errors="replace")
    outcome.stderr = err.decode("utf-8", errors="replace")
    for name, data in (("stdout.txt", out), ("stderr.txt", err)):  # the bytes as printed, not as decoded
        with open(os.path.join(workdir, name), "wb") as f:
            f.write(data)
    outcome.reports = sorted(glob.glob(os.path.join(workdir, "firstassert-*")))
    outcome.report, outcome.report_error = read_report(outcome.reports)
    return outcome
