"""A gpu-check case program for the CUDA simulator (tests/sim), so that scripts/gpu-check's harness can be tested
where there is no GPU: the same exit codes and `# FAILING_OP` marker as the real cases (gpucase.py), a real shim and
real reports. It drives the simulator's runtime through the demo's ctypes wrapper (tests/sim/demo/train.py), which
keeps the GIL held during each call, so the launches have Python frames.

usage: sim_case.py SIM_DIR assert|profiled|graph|healthy|differs|hang
  assert   a healthy launch, then nll_loss with a label equal to the class count, then a synchronize
  graph    as graph_replay.py: five kernels captured into a CUDA graph (nll_loss the third, captured at the
           `# CAPTURED_OP` line) replayed healthy three times, then with a label equal to the class count
  profiled as assert, but between the two a stand-in profiler (as torch.profiler's Kineto) subscribes to the
           simulator's CUPTI, counts the kernel launches it is shown ("gpu-check: profiler kernels: N", as
           profiler_late.py says it) and unsubscribes; under a shim recording through CUPTI, it is handed CUPTI
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
from train import Cuda, dim3  # noqa: E402

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
if what in ("assert", "profiled"):
    batch[5] = CLASSES  # one past the last class
cuda.to_device(labels, batch)


NLL_LOSS_ARGS = (loss, total_weight, out, labels, None, ctypes.c_bool(True), ctypes.c_long(8), ctypes.c_long(CLASSES),
                 ctypes.c_long(CLASSES), ctypes.c_long(-100))
ADD_ARGS = (out, logits, grads, ctypes.c_float(0.5), ctypes.c_long(8 * CLASSES))


def nll_loss():
    cuda.launch("nll_loss", 1, 32, *NLL_LOSS_ARGS)


def synchronize():
    cuda.check(cuda.rt.cudaDeviceSynchronize())


def profile_launches(launches):
    """Subscribes to CUPTI as a profiler does, runs launches() and unsubscribes; the kernel launches it was shown, or
    why it could not subscribe. Runtime API callbacks of cudaLaunchKernel at their ENTER are the launches."""
    runtime_api, launch_kernel, enter = 2, 211, 0  # CUPTI_CB_DOMAIN_RUNTIME_API, ..._cudaLaunchKernel_v7000, API_ENTER
    cupti = ctypes.CDLL(os.path.join(sim_dir, "libcupti.so.13"))  # ctypes finds cuptiSubscribe with dlsym (hooked)
    seen = [0]

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p)
    def callback(userdata, domain, cbid, data):
        if domain == runtime_api and cbid == launch_kernel and ctypes.c_int.from_address(data).value == enter:
            seen[0] += 1

    handle = ctypes.c_void_p()
    result = cupti.cuptiSubscribe(ctypes.byref(handle), callback, None)
    if result != 0:
        return f"cuptiSubscribe returned {result}"
    cupti.cuptiEnableDomain(1, handle, runtime_api)
    launches()
    cupti.cuptiUnsubscribe(handle)
    return seen[0]


def add():
    cuda.launch("elementwise_add", 1, 128, *ADD_ARGS)


def launch_args(kernel, grid, block, stream, *args):
    """cudaLaunchKernel's arguments for a launch into stream. The capture calls cudaLaunchKernel itself, on the line
    that captures: the innermost Python frame of the user's code at the capture is then that line, which the
    report's captured_at names (Cuda.launch's own line would be innermost otherwise)."""
    holders = [a if isinstance(a, ctypes._SimpleCData) else ctypes.c_void_p(a) for a in args]
    argv = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    argv.holders = holders  # they must outlive the call: argv holds only their addresses
    return cuda.stub(kernel), dim3(grid, 1, 1), dim3(block, 1, 1), argv, 0, stream


def capture_graph():
    """A graph of five kernels in a chain, captured from a stream of its own as torch.cuda.graph does (global mode);
    returns its replay: a graph launch into that stream."""
    rt, stream, graph, graph_exec = cuda.rt, ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    cuda.check(rt.cudaStreamCreate(ctypes.byref(stream)))
    cuda.check(rt.cudaStreamBeginCapture(stream, 0))  # cudaStreamCaptureModeGlobal
    cuda.check(rt.cudaLaunchKernel(*launch_args("elementwise_add", 1, 128, stream, *ADD_ARGS)))
    cuda.check(rt.cudaLaunchKernel(*launch_args("busy", 1, 1, stream, ctypes.c_ulonglong(100))))
    cuda.check(rt.cudaLaunchKernel(*launch_args("nll_loss", 1, 32, stream, *NLL_LOSS_ARGS)))  # CAPTURED_OP
    cuda.check(rt.cudaLaunchKernel(*launch_args("elementwise_add", 1, 128, stream, *ADD_ARGS)))
    cuda.check(rt.cudaLaunchKernel(*launch_args("busy", 1, 1, stream, ctypes.c_ulonglong(100))))
    cuda.check(rt.cudaStreamEndCapture(stream, ctypes.byref(graph)))
    cuda.check(rt.cudaGraphInstantiate(ctypes.byref(graph_exec), graph, ctypes.c_ulonglong(0)))
    return lambda: cuda.check(rt.cudaGraphLaunch(graph_exec, stream))


add()
if what == "profiled":
    synchronize()
    kernels = profile_launches(lambda: [add() for _ in range(3)])
    if isinstance(kernels, int):
        print(f"{gpucase.PROFILER_KERNELS}{kernels}", flush=True)
    else:
        print(f"{gpucase.PROFILER_FAILED}{kernels}", flush=True)
failing = nll_loss
if what == "graph":
    failing = capture_graph()
    for _ in range(3):  # each healthy replay sets every breadcrumb: the failing one must start from reset ones
        failing()
        synchronize()
    batch[5] = CLASSES  # the captured nll_loss reads this buffer at the next replay
    cuda.to_device(labels, batch)
if what in ("assert", "profiled", "graph"):
    gpucase.run_failing(failing, synchronize)  # FAILING_OP
nll_loss()
synchronize()
value = (ctypes.c_float * 1)()
cuda.to_host(value, loss)
print(f"loss {value[0]:.4f}")
if what == "differs":
    print(f"LD_PRELOAD set: {'LD_PRELOAD' in os.environ}")
