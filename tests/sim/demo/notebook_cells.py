"""The training job's set-up as a notebook cell: what the notebook suite (tests/notebook/kernel_test.py) and
scripts/gpu-check's notebook case on the simulator (tests/gpu/notebook_case.py) run in a real kernel before
their failing cell. SETUP.format(demo=this directory, sim=the simulator's libraries) is the cell's source; it leaves the
simulator's runtime in `cuda`, nll_loss's buffers and arguments, and the launch's stub and dimensions."""

SETUP = """\
import ctypes, math, sys
sys.path.insert(0, {demo!r})
import train
cuda = train.Cuda({sim!r})
N, BATCH = train.N_CLASSES, train.BATCH
floats = ctypes.c_float * (BATCH * N)
out, labels, loss, total = cuda.malloc(ctypes.sizeof(floats)), cuda.malloc(BATCH * 8), cuda.malloc(4), cuda.malloc(4)
cuda.to_device(out, floats(*[math.log(1.0 / N)] * (BATCH * N)))
holders = [loss, total, out, labels, ctypes.c_void_p(None), ctypes.c_bool(True), ctypes.c_long(BATCH),
           ctypes.c_long(N), ctypes.c_long(N), ctypes.c_long(-100)]
args = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
nll_loss, one, warp = cuda.stub("nll_loss"), train.dim3(1, 1, 1), train.dim3(32, 1, 1)
"""
