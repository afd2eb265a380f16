"""gpu-check case: firstassert turned on inside a real Jupyter kernel (ipykernel, driven through jupyter_client as a
front end drives it), with torch's nll_loss assert in a cell. The cell that fails must show the culprit, its launching
line in the cell's terms (`Cell In[3], line 1`) and the device's assertion text; a later failing cell must say it is
secondary.

usage: notebook_case.py armed|late|dies|hangs [sim SIM_DIR DEMO_DIR]
  armed  `%load_ext firstassert` is the first cell, before torch is imported: the shim is armed for CUDA's start
  late   torch has run kernels first; `%load_ext firstassert` comes after them: recording starts in a running CUDA
  dies   as armed, but the failing cell kills the kernel (SIGKILL), and hangs: it never ends; for the harness's tests
  sim    the simulator's training job (tests/sim/demo/train.py) in place of torch, for the suite where no GPU is
         (tests/gpu/gpu_check_test.py)

The kernel runs in a session of its own, which gpu-check's kill at its timeout does not reach: the case keeps a
deadline TIME_LEFT_FOR_SHUTDOWN seconds before that timeout (GPU_CHECK_TIMEOUT), after which it stops waiting for the
cell and kills the kernel; a kernel that dies is noticed within a second. Either is said in the cell's error
(KernelGone) and in the case's last line on stderr, and the case exits 4. The kernel's output goes to files, copied
to the case's own stdout and stderr at the end.

The kernel is this Python, never preloaded. With FIRSTASSERT_LIB set (gpu-check's shim modes) the extension loads that
shim; without it (the bare mode) no cell loads the extension. GPU_CHECK_PACKAGE is the directory that holds the
firstassert package, put on the kernel's PYTHONPATH; GPU_CHECK_NOTEBOOK_SITE, when set, holds ipykernel and
jupyter_client for a Python that lacks them (scripts/gpu-check unpacks the wheels --pack carried there).

Prints, for each cell, "gpu-check: cell: " and a JSON object: its role (load, setup, failing, secondary), execution
count, what it showed (stream text and display data as text/plain, in order), its error (ename, evalue) or null, and
for the failing cell the launching line the culprit should be shown at. Then it ends as every case ends
(gpucase.py): the failing cell's error printed as "gpu-check: caught ...", exit 3 for the device-side assert.
"""
import json
import os
import queue
import shutil
import sys
import tempfile
import time

import gpucase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim", "demo"))
from notebook_cells import SETUP  # noqa: E402  the simulator's job's set-up cell

START_TIMEOUT = 120          # a kernel's start: Python, IPython and, on a busy machine, a slow disk
DEFAULT_TIMEOUT = 90         # gpu-check's --timeout, when it does not say (GPU_CHECK_TIMEOUT)
TIME_LEFT_FOR_SHUTDOWN = 20  # seconds before that timeout at which the case stops waiting for a cell
KERNEL_PID = "gpu-check: kernel pid "  # on stderr, first: which process the kernel is
# How long a kernel asked to shut down may take before it is killed. jupyter_client sends SIGTERM at half of it, and
# ipykernel 6 can take its flush timeout (10 s) to exit: it stops its IOPub thread before the control thread, whose
# last flush after the shutdown request then waits that long. SIGTERM earlier ends the kernel before the shim's exit
# handler rewrites the report (seen on a busy machine, about 1 run in 30). Never more than the time left before
# gpu-check's own timeout, less a margin.
SHUTDOWN_WAIT = 30
SHUTDOWN_MARGIN = 5

# Each workload: the cells, by role. The failing cell's launching line ends with the FAILING_OP marker, as in every
# case program; the cell that follows it makes one more CUDA call, which fails because the context is lost.
TORCH_CELLS = {
    "setup": """\
import torch
F = torch.nn.functional
logits = torch.randn(8, 5, device="cuda")
labels = torch.arange(8, device="cuda") % 5
F.cross_entropy(logits, labels)  # the same kernels, healthy, first: the culprit must be told from them
torch.cuda.synchronize()
labels[3] = 5  # one past the last class: the classic bug""",
    "failing": """\
loss = F.cross_entropy(logits, labels)  # FAILING_OP
print("loss", loss.item())""",
    "secondary": """\
torch.ones(4, device="cuda").sum().item()""",
}

SIM_CELLS = {
    "setup": SETUP + """\
batch = (ctypes.c_long * BATCH)(*[i % N for i in range(BATCH)])
cuda.to_device(labels, batch)
cuda.check(cuda.rt.cudaLaunchKernel(nll_loss, one, warp, args, 0, None))
cuda.check(cuda.rt.cudaDeviceSynchronize())
batch[5] = N  # one past the last class
cuda.to_device(labels, batch)""",
    "failing": """\
cuda.check(cuda.rt.cudaLaunchKernel(nll_loss, one, warp, args, 0, None))  # FAILING_OP
cuda.check(cuda.rt.cudaDeviceSynchronize())""",
    "secondary": """\
cuda.malloc(4)""",
}


def import_jupyter_client():
    site = os.environ.get("GPU_CHECK_NOTEBOOK_SITE")
    if site:
        sys.path.insert(0, site)
    try:
        import ipykernel  # noqa: F401  the kernel's, imported here only to say early that it is missing
        from jupyter_client import KernelManager
        from jupyter_client.kernelspec import KernelSpecManager
    except ImportError as error:
        gpucase.skip(f"no Jupyter kernel for {sys.executable} ({error}); scripts/gpu-check --pack carries one")
    return KernelManager, KernelSpecManager


ENDS = {"dies": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)  # FAILING_OP",
        "hangs": "import time\nwhile True:  # FAILING_OP\n    time.sleep(1)"}


def cells_for(order, workload, enabled):
    """[(role, source)] in the order the user runs them."""
    load = [("load", "%load_ext firstassert")] if enabled else []
    setup = [("setup", workload["setup"])]
    first = setup + load if order == "late" else load + setup
    return first + [("failing", ENDS.get(order, workload["failing"])), ("secondary", workload["secondary"])]


class Cell:
    def __init__(self):
        self.shown = []   # stream text, display data (text/plain), results, in the order they came
        self.error = None

    def output(self, message):
        kind, content = message["header"]["msg_type"], message["content"]
        if kind == "stream":
            self.shown.append(content.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            self.shown.append(content.get("data", {}).get("text/plain", "") + "\n")
        elif kind == "error":
            self.error = {"ename": content.get("ename", ""), "evalue": content.get("evalue", "")}


def kernel_env(package, site, workdir):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    # In front of the machine's own PYTHONPATH, which may be how its Python finds torch.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package, site, os.environ.get("PYTHONPATH")) if p)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["JUPYTER_RUNTIME_DIR"] = os.path.join(workdir, "runtime")
    env["IPYTHONDIR"] = os.path.join(workdir, "ipython")
    return env


class KernelGone(Exception):
    """The kernel died, or the case's time ran out, before a cell's reply."""


def run_cell(client, manager, source, cell, deadline):
    """Runs source in the kernel; cell collects what it shows. Returns the execution count; raises KernelGone when
    the kernel dies or the deadline passes first (a front end would show 'Kernel died' or keep waiting)."""
    msg_id = client.execute(source, allow_stdin=False)
    idle = False
    while not idle:
        if time.monotonic() > deadline:
            raise KernelGone(f"the cell had not finished when the case's {TIME_LEFT_FOR_SHUTDOWN} s before its "
                             "timeout came")
        try:
            message = client.get_iopub_msg(timeout=1)
        except queue.Empty:
            if not manager.is_alive():
                process = getattr(manager.provisioner, "process", None)
                status = process.poll() if process is not None else "unknown"
                raise KernelGone(f"the kernel died (exit status {status})") from None
            continue
        if message.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if message["header"]["msg_type"] == "status":
            idle = message["content"].get("execution_state") == "idle"
        else:
            cell.output(message)
    while True:  # the reply comes on the shell channel; after idle, at once
        try:
            reply = client.get_shell_msg(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            raise KernelGone("no reply on the shell channel after the cell went idle") from None
        if reply.get("parent_header", {}).get("msg_id") == msg_id:
            return reply["content"].get("execution_count")


def main():
    if len(sys.argv) not in (2, 5) or sys.argv[1] not in ("armed", "late", *ENDS) or (len(sys.argv) == 5 and
                                                                                sys.argv[2] != "sim"):
        sys.exit(__doc__)
    started = time.monotonic()
    # gpu-check kills the case at its timeout; the kernel, a session of its own, would outlive that kill. So the case
    # keeps a deadline of its own before it, and then kills the kernel itself.
    deadline = started + float(os.environ.get("GPU_CHECK_TIMEOUT") or DEFAULT_TIMEOUT) - TIME_LEFT_FOR_SHUTDOWN
    order = sys.argv[1]
    if len(sys.argv) == 5:
        workload = {role: text.format(sim=sys.argv[3], demo=sys.argv[4]) if role == "setup" else text
                    for role, text in SIM_CELLS.items()}
    else:
        gpucase.require_cuda()  # here only to skip as the other cases do; the kernel imports torch itself
        workload = TORCH_CELLS
    KernelManager, KernelSpecManager = import_jupyter_client()
    workdir = tempfile.mkdtemp(prefix="gpu-check-notebook-")
    specs = os.path.join(workdir, "kernels")
    os.makedirs(os.path.join(specs, "gpu-check"))
    with open(os.path.join(specs, "gpu-check", "kernel.json"), "w") as f:
        json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                            "--HistoryManager.hist_file=:memory:"],
                   "display_name": "gpu-check", "language": "python"}, f)
    env = kernel_env(os.environ.get("GPU_CHECK_PACKAGE"), os.environ.get("GPU_CHECK_NOTEBOOK_SITE"), workdir)
    manager = KernelManager(kernel_name="gpu-check", kernel_spec_manager=KernelSpecManager(kernel_dirs=[specs]),
                            connection_file=os.path.join(workdir, "connection.json"))
    # The kernel's output goes to files, not this process's pipes, which gpu-check reads to the end.
    kernel_out = os.path.join(workdir, "kernel-stdout.txt")
    kernel_err = os.path.join(workdir, "kernel-stderr.txt")
    failing, trouble, client = None, "", None
    try:
        with open(kernel_out, "wb") as out, open(kernel_err, "wb") as err:
            manager.start_kernel(env=env, cwd=os.getcwd(), stdout=out, stderr=err)
        print(f"{KERNEL_PID}{getattr(manager.provisioner, 'pid', '?')}", file=sys.stderr, flush=True)
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=max(1.0, min(START_TIMEOUT, deadline - time.monotonic())))
        for role, source in cells_for(order, workload, bool(os.environ.get("FIRSTASSERT_LIB"))):
            cell = Cell()
            try:
                count = run_cell(client, manager, source, cell, deadline)
            except KernelGone as gone:
                trouble = f"the {role} cell: {gone}"
                cell.error = {"ename": "KernelGone", "evalue": str(gone)}
                count = None
            said = {"role": role, "count": count, "shown": "".join(cell.shown), "error": cell.error}
            if role == "failing":
                said["launched_at"] = f"Cell In[{count}], line {gpucase.marked_line(source)}"
                failing = said
            print(gpucase.NOTEBOOK_CELL + json.dumps(said), flush=True)
            if trouble:
                break
            if role in ("load", "setup") and cell.error:
                trouble = f"the {role} cell failed: {cell.error['ename']}: {first_line(cell.error['evalue'])}"
                break  # the cells after it would fail for this reason alone
    except (RuntimeError, OSError) as error:  # wait_for_ready: the kernel died or never answered
        trouble = f"the kernel did not start: {type(error).__name__}: {error}"
    finally:
        # Asked to shut down, the kernel exits as a user's does at Kernel > Shutdown: its report is rewritten then.
        # Past the deadline, or dead, it is killed.
        if client is not None:
            client.stop_channels()
        try:
            if manager.has_kernel:
                left = deadline + TIME_LEFT_FOR_SHUTDOWN - SHUTDOWN_MARGIN - time.monotonic()
                manager.shutdown_wait_time = max(1.0, min(SHUTDOWN_WAIT, left))
                manager.shutdown_kernel(now=time.monotonic() > deadline or not manager.is_alive())
        except Exception as error:  # noqa: BLE001  the cells' findings are printed already; say this too
            trouble = trouble or f"the kernel's shutdown failed: {type(error).__name__}: {error}"
        for path, stream in ((kernel_out, sys.stdout), (kernel_err, sys.stderr)):
            with open(path, encoding="utf-8", errors="replace") as f:
                stream.write(f.read())
            stream.flush()
        shutil.rmtree(workdir, ignore_errors=True)
    if trouble:
        print(f"gpu-check: {trouble}", file=sys.stderr, flush=True)  # last, where the judge's stderr tail looks
    print(gpucase.MARKER, flush=True)
    if failing is None or failing["error"] is None:
        print("gpu-check: no error" + (f" ({trouble})" if trouble else ""), flush=True)
        sys.exit(gpucase.EXIT_NO_ERROR if not trouble else gpucase.EXIT_OTHER_ERROR)
    error = failing["error"]
    print(f"gpu-check: caught {error['ename']}: {first_line(error['evalue'])}", flush=True)
    sys.exit(gpucase.EXIT_ASSERT if gpucase.ASSERT_TEXT in error["evalue"] else gpucase.EXIT_OTHER_ERROR)


def first_line(text):
    return (text.strip().splitlines() or [""])[0]


if __name__ == "__main__":
    main()
