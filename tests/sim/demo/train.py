#!/usr/bin/env python3
"""A simulated training job that dies the way PyTorch jobs do.

It drives the simulator's real CUDA runtime ABI through ctypes, as PyTorch drives libcudart: each step copies a batch
to the device, runs a "forward" kernel, some compute, and the nll_loss kernel on the labels; every few steps it reads
the loss back (`loss.item()`). One batch holds a label equal to the class count. The nll_loss kernel asserts on the
device, asynchronously, so the failure surfaces later, at an innocent call, as
`RuntimeError: CUDA error: device-side assert triggered` raised by the next batch's copy, and the driver prints the
assertion line on stderr.

usage: train.py [--lib-dir DIR] [--steps N] [--bad-step K] [--log-every M]
"""
import argparse
import ctypes
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_LIB_DIR = os.path.normpath(os.path.join(HERE, "..", "..", "..", "build", "tests", "sim"))
N_CLASSES = 10
BATCH = 16


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


class Cuda:
    """The few runtime calls a training loop makes, raising like torch does."""

    def __init__(self, lib_dir):
        # The stock kernels bind the simulated driver; the runtime then finds it already loaded. PyDLL keeps the GIL
        # held during each call, as PyTorch's operators do when they launch kernels.
        self.kernels = ctypes.PyDLL(os.path.join(lib_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
        self.rt = ctypes.PyDLL(os.path.join(lib_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
        self.kernels.simkernels_host_stub.restype = ctypes.c_void_p
        self.kernels.simkernels_host_stub.argtypes = [ctypes.c_char_p]
        rt = self.rt
        rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
        rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.c_size_t, ctypes.c_void_p]
        rt.cudaGetErrorString.restype = ctypes.c_char_p
        rt.cudaGetErrorString.argtypes = [ctypes.c_int]

    def check(self, err):
        if err != 0:
            text = self.rt.cudaGetErrorString(err).decode()
            raise RuntimeError(f"CUDA error: {text}\nCUDA kernel errors might be asynchronously reported at some "
                               "other API call, so the stacktrace below might be incorrect.")

    def stub(self, name):
        return self.kernels.simkernels_host_stub(name.encode())

    def malloc(self, nbytes):
        ptr = ctypes.c_void_p()
        self.check(self.rt.cudaMalloc(ctypes.byref(ptr), nbytes))
        return ptr

    def to_device(self, dst, host_array):
        self.check(self.rt.cudaMemcpy(dst, ctypes.cast(host_array, ctypes.c_void_p), ctypes.sizeof(host_array), 1))

    def to_host(self, host_array, src):
        self.check(self.rt.cudaMemcpy(ctypes.cast(host_array, ctypes.c_void_p), src, ctypes.sizeof(host_array), 2))

    def launch(self, kernel, grid, block, *args):
        holders = [a if isinstance(a, ctypes._SimpleCData) else ctypes.c_void_p(a) for a in args]
        argv = (ctypes.c_void_p * max(1, len(holders)))(*[ctypes.addressof(h) for h in holders])
        self.check(self.rt.cudaLaunchKernel(self.stub(kernel), dim3(grid, 1, 1), dim3(block, 1, 1), argv, 0, None))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib-dir", default=os.environ.get("SIMCUDA_LIB_DIR", DEFAULT_LIB_DIR),
                        help="directory holding the simulator's libraries (default: %(default)s)")
    parser.add_argument("--steps", type=int, default=40, help="training steps (default: %(default)s)")
    parser.add_argument("--bad-step", type=int, default=23,
                        help="step whose batch holds an out-of-range label; -1 for none (default: %(default)s)")
    parser.add_argument("--log-every", type=int, default=10, help="steps between loss.item() calls")
    opts = parser.parse_args()

    cuda = Cuda(opts.lib_dir)
    floats = ctypes.c_float * (BATCH * N_CLASSES)
    # log-probabilities of a model that has learnt nothing yet: the loss is log(N_CLASSES)
    logits_host = floats(*[math.log(1.0 / N_CLASSES)] * (BATCH * N_CLASSES))
    logits, grads, out = (cuda.malloc(ctypes.sizeof(floats)) for _ in range(3))
    cuda.to_device(grads, floats())
    labels = cuda.malloc(BATCH * 8)
    loss, total_weight = cuda.malloc(4), cuda.malloc(4)

    for step in range(1, opts.steps + 1):
        batch = (ctypes.c_long * BATCH)(*[(step + i) % N_CLASSES for i in range(BATCH)])
        if step == opts.bad_step:
            batch[5] = N_CLASSES  # a label one past the last class: the classic bug
        cuda.to_device(logits, logits_host)
        cuda.to_device(labels, batch)
        # forward: out = logits + 0.5 * grads, then some compute, then the loss
        cuda.launch("elementwise_add", 1, 128, out, logits, grads, ctypes.c_float(0.5),
                    ctypes.c_long(BATCH * N_CLASSES))
        cuda.launch("busy", 1, 1, ctypes.c_ulonglong(2000))
        cuda.launch("nll_loss", 1, 32, loss, total_weight, out, labels, None, ctypes.c_bool(True),
                    ctypes.c_long(BATCH), ctypes.c_long(N_CLASSES), ctypes.c_long(N_CLASSES), ctypes.c_long(-100))
        if step % opts.log_every == 0:
            value = (ctypes.c_float * 1)()
            cuda.to_host(value, loss)  # loss.item(): the first synchronizing call after the bad step
            print(f"step {step:3d}  loss {value[0]:.4f}", flush=True)
    print("training finished", flush=True)


if __name__ == "__main__":
    main()
