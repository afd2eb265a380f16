"""A Python job that launches from one loop many times (so that its stacks are kept and found again), then, while
Python exits, launches a kernel that asserts from an atexit function registered before its first launch: atexit
runs the last registered first, so firstassert's own (registered at the first launches) has run by then, and the
report must still name the function and line the failing launch came from.

usage: exit_job.py LIB_DIR
"""
import atexit
import sys

import sim_cuda
from sim_cuda import dim3

kernels, cudart = sim_cuda.load(sys.argv[1], release_gil=True)
tensors = [sim_cuda.malloc(cudart, size) for size in (4, 4, 64, 32)]


def labels(values):
    sim_cuda.copy_labels(cudart, tensors[3], values)


def launch():
    argv, _ = sim_cuda.nll_loss_arguments(*tensors)
    return cudart.cudaLaunchKernel(kernels.simkernels_host_stub(b"nll_loss"), dim3(1, 1, 1), dim3(32, 1, 1), argv,
                                   0, None)


def while_exiting():
    labels((0, 1, 9, 2))
    launch()  # EXIT_LINE
    print("sync at exit:", cudart.cudaDeviceSynchronize())


atexit.register(while_exiting)
labels((0, 1, 2, 3))
for _ in range(300):
    launch()  # LOOP_LINE
print("sync:", cudart.cudaDeviceSynchronize())
