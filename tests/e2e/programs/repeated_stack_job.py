"""A Python job that launches, hundreds of times, from one function at one depth but from two lines in turn (the
frames sit at the same addresses, only the current instruction differs), then asserts from the first line. Every
launch the report keeps must name the line it came from: a frame seen before is reused only while it is unchanged.
The grid tells the two lines' launches apart (1 block from FIRST_LINE, 2 from SECOND_LINE).

usage: repeated_stack_job.py LIB_DIR
"""
import sys

import sim_cuda
from sim_cuda import dim3

kernels, cudart = sim_cuda.load(sys.argv[1], release_gil=True)
tensors = [sim_cuda.malloc(cudart, size) for size in (4, 4, 64, 32)]


def labels(values):
    sim_cuda.copy_labels(cudart, tensors[3], values)


def launch(blocks):
    argv, _ = sim_cuda.nll_loss_arguments(*tensors)
    return cudart.cudaLaunchKernel(kernels.simkernels_host_stub(b"nll_loss"), dim3(blocks, 1, 1), dim3(32, 1, 1),
                                   argv, 0, None)


def step(n):
    if n % 2 == 0:
        return launch(1)  # FIRST_LINE
    return launch(2)  # SECOND_LINE


labels((0, 1, 2, 3))
for n in range(600):
    step(n)
cudart.cudaDeviceSynchronize()
labels((0, 1, 9, 2))
step(0)
cudart.cudaDeviceSynchronize()
