"""The torch suite's notebook: a real Jupyter kernel (ipykernel, driven by nbclient as a front end would) in the
torch venv, with `%load_ext firstassert`, training a real PyTorch classifier on the simulated GPU until a batch's
bad label asserts. The failing cell must show the culprit kernel, its confidence, the cell's own line and the
device's assertion text; a later cell must say its error is secondary. A compiled model's failing cell must show
the Triton kernel, what it fused and the model's line, named as the cell that defines the model.

usage: notebook_test.py SIM_DIR PACKAGE_ROOT SHIM [unittest arguments]
       run with the python of the torch venv (scripts/test installs it, with ipykernel and nbclient, pinned)
"""
import glob
import json
import os
import re
import sys
import tempfile
import unittest

from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

SIM_DIR, PACKAGE_ROOT, SHIM = sys.argv[1:4]
del sys.argv[1:4]

SETUP = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
classes = 10
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, classes)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
"""
# Step 4's batch holds the label 10; the loss is computed on line 6 of the cell and logged on line 7, whose read
# back raises (so the failing step's backward never starts: autograd's thread would otherwise meet the lost context
# in its own device guard, where PyTorch terminates the process).
TRAIN = """\
for step in range(8):
    x = torch.randn(64, 32).cuda()
    y = torch.randint(0, classes, (64,))
    if step == 4:
        y[21] = classes
    loss = nn.functional.cross_entropy(model(x), y.cuda())
    print(step, loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
TRAIN_LOSS_LINE = 6
# The same classifier split over two GPUs (the body on cuda:0, the head and the loss on cuda:1), the loss on line 6.
SPLIT_SETUP = """\
import torch
import torch.nn as nn
torch.manual_seed(0)
classes = 10
body = nn.Sequential(nn.Linear(32, 64), nn.ReLU()).to("cuda:0")
head = nn.Linear(64, classes).to("cuda:1")
opt = torch.optim.SGD(list(body.parameters()) + list(head.parameters()), lr=0.1)
"""
SPLIT_TRAIN = """\
for step in range(8):
    x = torch.randn(64, 32).to("cuda:0")
    y = torch.randint(0, classes, (64,))
    if step == 4:
        y[21] = classes
    loss = nn.functional.cross_entropy(head(body(x).to("cuda:1")), y.to("cuda:1"))
    print(step, loss.item())
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
OTHER_GPU_LOSS = """\
scores = torch.randn(4, classes, device="cuda:0")
nn.functional.cross_entropy(scores, torch.tensor([0, 1, classes, 2], device="cuda:0")).item()
"""


def text_of(cell, kind):
    parts = []
    for output in cell.outputs:
        if output.output_type in ("display_data", "execute_result") and kind in output.get("data", {}):
            parts.append(output.data[kind])
        elif output.output_type == "stream" and kind == "stream":
            parts.append(output.text)
    return "".join(parts)


# A compiled model: Inductor fuses the embedding and the mean into one Triton kernel; the model's line is line 8 of
# the cell that defines it, and step 2's batch holds the token 64 of 64.
COMPILED_MODEL = """\
import torch
torch.manual_seed(0)
class Bag(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(64, 16)
    def forward(self, tokens):
        return self.embed(tokens).mean(dim=1)
bag = torch.compile(Bag().cuda())
"""
COMPILED_MODEL_LINE = 8
COMPILED_RUN = """\
for step in range(3):
    tokens = torch.randint(0, 64, (8, 4))
    if step == 2:
        tokens[5, 1] = 64
    pooled = bag(tokens.cuda())
    torch.cuda.synchronize()
    print(step, pooled.shape)
"""


class Notebook:
    """The sources run as cells of a real kernel with firstassert loaded; its cells, the last report, the details."""

    def __init__(self, sources, env=None):
        with tempfile.TemporaryDirectory() as workdir:
            specs = os.path.join(workdir, "kernels", "fa")
            os.makedirs(specs)
            with open(os.path.join(specs, "kernel.json"), "w") as f:
                json.dump({"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                           "display_name": "firstassert torch", "language": "python"}, f)
            env_extra = env or {}
            env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k != "LD_PRELOAD"}
            env.update({"LD_LIBRARY_PATH": f"{SIM_DIR}:{SIM_DIR}/standins",
                        "SIMCUDA_DEVICE_CODE": f"{SIM_DIR}/aten/libsimaten.so", "PYTHONPATH": PACKAGE_ROOT,
                        "FIRSTASSERT_LIB": SHIM, "JUPYTER_PLATFORM_DIRS": "1",
                        "JUPYTER_RUNTIME_DIR": os.path.join(workdir, "runtime"),
                        "TORCHINDUCTOR_CACHE_DIR": os.path.join(workdir, "inductor")})
            env.update(env_extra)
            nb = new_notebook()
            client = NotebookClient(nb, km=AsyncKernelManager(kernel_name="fa", kernel_spec_manager=KernelSpecManager(
                kernel_dirs=[os.path.dirname(specs)])), timeout=180, startup_timeout=120, allow_errors=True,
                resources={"metadata": {"path": workdir}},
                extra_arguments=["--HistoryManager.hist_file=:memory:"])
            with open(os.path.join(workdir, "kernel-stderr.txt"), "ab") as stderr, \
                    client.setup_kernel(env=env, stderr=stderr, cleanup_kc=True):
                self.cells = []
                for source in ["%load_ext firstassert"] + list(sources):
                    nb.cells.append(new_code_cell(source))
                    self.cells.append(client.execute_cell(nb.cells[-1], len(nb.cells) - 1))
            with open(os.path.join(workdir, "kernel-stderr.txt"), errors="replace") as f:
                kernel_stderr = f.read()
            reports = sorted(glob.glob(os.path.join(workdir, "firstassert-*.json")))
            self.report = None
            if reports:
                with open(reports[-1]) as f:
                    self.report = json.load(f)
            self.detail = json.dumps([c.outputs for c in self.cells], indent=1)[-8000:] + "\n--- kernel stderr:\n" + \
                kernel_stderr[-4000:]

    def errors(self, index):
        return [o for o in self.cells[index].outputs if o.output_type == "error"]

    def shown(self, index):
        """What cell `index` displayed, its wrapped rows joined back."""
        return re.sub(r"\n {15}(?=\S)", " ", text_of(self.cells[index], "text/plain"))


class TorchNotebook(unittest.TestCase):
    def test_the_failing_cell_shows_the_culprit_and_a_later_cell_is_secondary(self):
        run = Notebook([SETUP, TRAIN, "torch.zeros(1).cuda()"])
        detail = run.detail
        self.assertIn("firstassert: on", text_of(run.cells[0], "stream"), detail)
        self.assertFalse(run.errors(1), detail)
        errors = run.errors(2)
        self.assertTrue(errors, detail)
        self.assertIn("device-side assert triggered", errors[0].evalue, detail)
        shown = run.shown(2)
        for expected in ["kernel       nll_loss_forward_reduce_cuda_kernel_2d",
                         "confidence   exact:",
                         "launched at  Cell In[3], line %d" % TRAIN_LOSS_LINE]:
            self.assertIn(expected, shown, detail)
        self.assertIn("secondary", text_of(run.cells[3], "text/plain").lower(), detail)
        # The device prints its line at a synchronization after the cell's error was raised: the report, which
        # the kernel rewrites as errors follow and at exit, has it.
        self.assertIsNotNone(run.report, detail)
        message = run.report["culprit"]["device_message"] or {}
        self.assertEqual(message.get("condition"), "t >= 0 && t < n_classes", json.dumps(run.report)[:3000])

    def test_on_two_gpus_the_failing_cell_names_the_gpu_whose_context_is_lost(self):
        # The model split over two GPUs: the loss, on cuda:1, asserts in cell 3. Cell 4 computes a loss on cuda:0, but
        # the thread's current device is still cuda:1, whose lost context torch's device guard meets first
        # (cudaGetDevice "may also return error codes from previous, asynchronous launches"): its error is the
        # first one's aftermath, and the footer says which GPU a restart brings back.
        run = Notebook([SPLIT_SETUP, SPLIT_TRAIN, OTHER_GPU_LOSS], env={"SIMCUDA_DEVICES": "2"})
        detail = run.detail
        self.assertFalse(run.errors(1), detail)
        self.assertTrue(run.errors(2), detail)
        shown = run.shown(2)
        for expected in ["gpu          cuda:1 ", "kernel       nll_loss_forward_reduce_cuda_kernel_2d",
                         "confidence   exact:", "launched at  Cell In[3], line %d" % TRAIN_LOSS_LINE,
                         "Every CUDA call on cuda:1 fails until this kernel restarts"]:
            self.assertIn(expected, shown, detail)
        self.assertTrue(run.errors(3), detail)
        later = run.shown(3)
        for expected in ["this cell's error follows the first one: the CUDA context was lost in cell In[3]",
                         "Every CUDA call on cuda:1 fails until this kernel restarts"]:
            self.assertIn(expected, later, detail)

    def test_a_compiled_models_failing_cell_names_the_model_cells_line(self):
        run = Notebook([COMPILED_MODEL, COMPILED_RUN])
        detail = run.detail
        self.assertFalse(run.errors(1), detail)
        errors = run.errors(2)
        self.assertTrue(errors, detail)
        self.assertIn("device-side assert triggered", errors[0].evalue, detail)
        # Steps 0 and 1 ran whole (what the cell printed of them; Triton's warnings share the stream).
        printed = [line for line in text_of(run.cells[2], "stream").splitlines() if line[:1].isdigit()]
        self.assertEqual(printed, ["0 torch.Size([8, 16])", "1 torch.Size([8, 16])"], detail)
        shown = run.shown(2)
        for expected in ["kernel       triton_", "confidence   exact:", "compiled     triton_",
                         "model        Cell In[2], line %d, in forward (embedding)" % COMPILED_MODEL_LINE,
                         "return self.embed(tokens).mean(dim=1)",
                         "values       the values modes do not reach inside torch.compile graphs"]:
            self.assertIn(expected, shown, detail)


if __name__ == "__main__":
    unittest.main(verbosity=2)
