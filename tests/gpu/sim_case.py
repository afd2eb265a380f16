"""A gpu-check case program for the CUDA simulator (tests/sim), so that scripts/gpu-check's harness can be tested
where there is no GPU: the same exit codes and `# FAILING_OP` marker as the real cases (gpucase.py), a real shim and
real reports. It drives the simulator's runtime through the demo's ctypes wrapper (tests/sim/demo/train.py), which
keeps the GIL held during each call, so the launches have Python frames.

usage: sim_case.py SIM_DIR assert|healthy|differs|hang
  assert   a healthy launch, then nll_loss with a label equal to the class count, then a synchronize
  healthy  the same with valid labels; prints the loss
  differs  healthy, but prints whether LD_PRELOAD is set: its output changes under the shim
  hang     never ends (for the harness's timeout)
"""
import ctypes
import os
import sys
import time

import gpucase

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sim", "demo"))
from train import Cuda  # noqa: E402

CLASSES = 4
sim_dir, what = sys.argv[1], sys.argv[2]
if what == "hang":
    time.sleep(3600)
cuda = Cuda(sim_dir)
floats = ctypes.c_float * (8 * CLASSES)
logits, grads, out = (cuda.malloc(ctypes.sizeof(floats)) for _ in range(3))
cuda.to_device(logits, floats(*[0.25] * (8 * CLASSES)))
cuda.to_device(grads, floats())
labels = cuda.malloc(8 * 8)
loss, total_weight = cuda.malloc(4), cuda.malloc(4)
batch = (ctypes.c_long * 8)(*[i % CLASSES for i in range(8)])
if what == "assert":
    batch[5] = CLASSES  # one past the last class
cuda.to_device(labels, batch)


def nll_loss():
    cuda.launch("nll_loss", 1, 32, loss, total_weight, out, labels, None, ctypes.c_bool(True), ctypes.c_long(8),
                ctypes.c_long(CLASSES), ctypes.c_long(CLASSES), ctypes.c_long(-100))


def synchronize():
    cuda.check(cuda.rt.cudaDeviceSynchronize())


cuda.launch("elementwise_add", 1, 128, out, logits, grads, ctypes.c_float(0.5), ctypes.c_long(8 * CLASSES))
if what == "assert":
    gpucase.run_failing(lambda: nll_loss(), synchronize)  # FAILING_OP
nll_loss()
synchronize()
value = (ctypes.c_float * 1)()
cuda.to_host(value, loss)
print(f"loss {value[0]:.4f}")
if what == "differs":
    print(f"LD_PRELOAD set: {'LD_PRELOAD' in os.environ}")
