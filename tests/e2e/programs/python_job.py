"""A Python job whose failing launch is three calls deep, for Python frames: main() -> train_step() ->
compute_loss(). It drives the simulator's libcudart through ctypes.PyDLL, which keeps the GIL held during the
call, or, with --release-gil, through ctypes.CDLL, which releases it as PyTorch and Triton do before they launch.
The marker comments give the test the lines to expect.

usage: python_job.py LIB_DIR [--release-gil]
"""
import ctypes
import sys

import sim_cuda
from sim_cuda import dim3

kernels, cudart = sim_cuda.load(sys.argv[1], release_gil=sys.argv[2:] == ["--release-gil"])


def malloc(nbytes):
    return sim_cuda.malloc(cudart, nbytes)


def compute_loss(loss, weight_sum, logits, labels):
    argv, _ = sim_cuda.nll_loss_arguments(loss, weight_sum, logits, labels)
    stub = kernels.simkernels_host_stub(b"nll_loss")
    return cudart.cudaLaunchKernel(stub, dim3(1, 1, 1), dim3(32, 1, 1), argv, 0, None)  # LAUNCH_LINE


def train_step(tensors):
    return compute_loss(*tensors)  # CALL_LINE


def main():
    tensors = [malloc(4), malloc(4), malloc(64), malloc(32)]
    bad = (ctypes.c_long * 4)(0, 1, 9, 2)
    cudart.cudaMemcpy(tensors[3], ctypes.cast(bad, ctypes.c_void_p), ctypes.sizeof(bad), 1)
    print("launch:", train_step(tensors))  # MAIN_LINE
    print("sync:", cudart.cudaDeviceSynchronize())


main()  # MODULE_LINE
