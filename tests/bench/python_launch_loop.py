"""The launch loop of launch_loop.cpp, driven from Python the way PyTorch drives CUDA: each launch made several
Python calls deep, through ctypes.CDLL, which releases the GIL around the call as PyTorch's operators do. The shim
then reads the Python frames of every launch; launch_cost.py compares that with Python frames off.

usage: python_launch_loop.py LIB_DIR LAUNCHES
Prints "cpu_ns_per_launch: X" (CPU time of this thread) and "wall_ns_per_launch: Y" for the timed loop, after a
warm-up.
"""
import ctypes
import os
import sys
import time

DEPTH = 8  # Python frames between the loop and the launch, as in a model's forward pass


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit() or int(sys.argv[2]) < 1:
        print("usage: python_launch_loop.py LIB_DIR LAUNCHES", file=sys.stderr)
        return 2
    lib_dir, launches = sys.argv[1], int(sys.argv[2])
    kernels = ctypes.CDLL(os.path.join(lib_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
    cudart = ctypes.CDLL(os.path.join(lib_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    kernels.simkernels_host_stub.restype = ctypes.c_void_p
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    cudart.cudaStreamSynchronize.argtypes = [ctypes.c_void_p]
    launch_kernel = cudart.cudaLaunchKernel
    launch_kernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                              ctypes.c_void_p]

    buffers = [ctypes.c_void_p() for _ in range(3)]
    for b in buffers:
        if cudart.cudaMalloc(ctypes.byref(b), 4) != 0:
            print("python_launch_loop: CUDA set-up failed", file=sys.stderr)
            return 1
    holders = buffers + [ctypes.c_float(1.0), ctypes.c_long(1)]
    args = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    stub = kernels.simkernels_host_stub(b"elementwise_add")
    one = dim3(1, 1, 1)

    def launch(depth):
        if depth > 0:
            return launch(depth - 1)
        return launch_kernel(stub, one, one, args, 0, None)

    def run(count):
        for _ in range(count):
            if launch(DEPTH) != 0:
                return False
        return cudart.cudaStreamSynchronize(None) == 0

    if not run(launches // 10 + 1):
        return 1
    wall_start, cpu_start = time.perf_counter_ns(), time.thread_time_ns()
    if not run(launches):
        return 1
    cpu, wall = time.thread_time_ns() - cpu_start, time.perf_counter_ns() - wall_start
    print(f"cpu_ns_per_launch: {cpu / launches:.1f}\nwall_ns_per_launch: {wall / launches:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
