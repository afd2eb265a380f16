"""gpu-check case: firstassert turned on inside a real Jupyter kernel (ipykernel, driven through jupyter_client as a
front end drives it), with torch's nll_loss assert in a cell. The cell that fails must show the culprit, its launching
line in the cell's terms (`Cell In[3], line 1`) and the device's assertion text; a later failing cell must say it is
secondary.

usage: notebook.py armed|late [sim SIM_DIR DEMO_DIR]
  armed  `%load_ext firstassert` is the first cell, before torch is imported: the shim is armed for CUDA's start
  late   torch has run kernels first; `%load_ext firstassert` comes after them: recording starts in a running CUDA
  sim    the simulator's training job (tests/sim/demo/train.py) in place of torch, for the suite where no GPU is
         (tests/gpu/gpu_check_notebook_test.py)

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
import shutil
import sys
import tempfile

import gpucase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim", "demo"))
from notebook_cells import SETUP  # noqa: E402  the simulator's job's set-up cell

START_TIMEOUT = 120  # a kernel's start: Python, IPython and, on a busy machine, a slow disk
CELL_TIMEOUT = 180   # a cell: torch's import and CUDA's start are in one

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


def cells_for(order, workload, enabled):
    """[(role, source)] in the order the user runs them."""
    load = [("load", "%load_ext firstassert")] if enabled else []
    setup = [("setup", workload["setup"])]
    first = load + setup if order == "armed" else setup + load
    return first + [("failing", workload["failing"]), ("secondary", workload["secondary"])]


def marked_line(source):
    """The 1-based line of the cell that ends with the FAILING_OP marker."""
    lines = source.splitlines()
    return next(i for i, text in enumerate(lines, 1) if text.rstrip().endswith(gpucase.FAILING_OP))


class Cell:
    def __init__(self, role):
        self.role = role
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
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package, site) if p)
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    env["JUPYTER_RUNTIME_DIR"] = os.path.join(workdir, "runtime")
    env["IPYTHONDIR"] = os.path.join(workdir, "ipython")
    return env


def main():
    if len(sys.argv) not in (2, 5) or sys.argv[1] not in ("armed", "late") or (len(sys.argv) == 5 and
                                                                                sys.argv[2] != "sim"):
        sys.exit(__doc__)
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
    manager = KernelManager(kernel_name="gpu-check", kernel_spec_manager=KernelSpecManager(kernel_dirs=[specs]))
    manager.start_kernel(env=env, cwd=os.getcwd())
    client = manager.client()
    failing = None
    try:
        client.start_channels()
        client.wait_for_ready(timeout=START_TIMEOUT)
        for role, source in cells_for(order, workload, bool(os.environ.get("FIRSTASSERT_LIB"))):
            cell = Cell(role)
            reply = client.execute_interactive(source, timeout=CELL_TIMEOUT, output_hook=cell.output,
                                               allow_stdin=False)
            said = {"role": role, "count": reply["content"].get("execution_count"), "shown": "".join(cell.shown),
                    "error": cell.error}
            if role == "failing":
                said["launched_at"] = f"Cell In[{said['count']}], line {marked_line(source)}"
                failing = said
            print(gpucase.NOTEBOOK_CELL + json.dumps(said), flush=True)
            if role in ("load", "setup") and cell.error:
                break  # the cells after it would fail for this reason alone
    finally:
        # Asked to shut down, the kernel exits as a user's does at Kernel > Shutdown: its report is rewritten then.
        client.stop_channels()
        manager.shutdown_kernel(now=False)
        shutil.rmtree(workdir, ignore_errors=True)
    print(gpucase.MARKER, flush=True)
    if failing is None or failing["error"] is None:
        print("gpu-check: no error", flush=True)
        sys.exit(gpucase.EXIT_NO_ERROR)
    error = failing["error"]
    first_line = (error["evalue"].strip().splitlines() or [""])[0]
    print(f"gpu-check: caught {error['ename']}: {first_line}", flush=True)
    sys.exit(gpucase.EXIT_ASSERT if gpucase.ASSERT_TEXT in error["evalue"] else gpucase.EXIT_OTHER_ERROR)


if __name__ == "__main__":
    main()
