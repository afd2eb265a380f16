"""Real PyTorch on two simulated GPUs (SIMCUDA_DEVICES=2): a tensor on cuda:1, then a model split over cuda:0 and
cuda:1 whose cross entropy on cuda:1 gets a label out of range. The job must fail with the device-side assert, the
driver's assertion line must name the nll_loss kernel, and device 0 must keep working (an assert loses only its own
device's context, docs/architecture.md).

usage: python torch_multi_device_check.py   (run by the torch venv's python, with the simulator's libraries on
LD_LIBRARY_PATH and SIMCUDA_DEVICE_CODE naming libsimaten, as tests/sim/meson.build sets them)
"""
import subprocess
import sys

JOB = r'''
import torch, torch.nn as nn, torch.nn.functional as F
a = torch.randn(4, device="cuda:1")
print("count", torch.cuda.device_count(), "device", (a * 2).device)
print("bus ids", torch.cuda.get_device_properties(0).pci_bus_id, torch.cuda.get_device_properties(1).pci_bus_id)
first = nn.Linear(8, 16).to("cuda:0")
second = nn.Linear(16, 4).to("cuda:1")
x = torch.randn(6, 8, device="cuda:0")
labels = torch.tensor([0, 1, 2, 3, 9, 1], device="cuda:1")  # 9: out of range for 4 classes
try:
    loss = F.cross_entropy(second(torch.relu(first(x)).to("cuda:1")), labels)
    print("loss", loss.item())
except RuntimeError as e:
    print("raised", str(e).splitlines()[0])
torch.cuda.set_device(0)
y = (x * 2).sum()
torch.cuda.synchronize(0)
print("device 0 works", y.device)
'''


def main() -> int:
    job = subprocess.run([sys.executable, "-c", JOB], capture_output=True, text=True, timeout=600)
    out = job.stdout
    failures = []
    for expected in ("count 2 device cuda:1", "bus ids 24 42", "raised CUDA error: device-side assert triggered",
                     "device 0 works cuda:0"):
        if expected not in out:
            failures.append(f"stdout lacks {expected!r}")
    line = "nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [4,0,0] Assertion `t >= 0 && t < n_classes`"
    if line not in job.stderr:
        failures.append("stderr lacks the driver's assertion line")
    if failures:
        print("\n".join(failures), "\n--- stdout\n" + out + "\n--- stderr\n" + job.stderr[-4000:], file=sys.stderr)
        return 1
    print(out, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
