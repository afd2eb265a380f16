"""A Python job whose failing launch is three calls deep, for Python frames: main() -> train_step() ->
compute_loss(). It drives the simulator's libcudart through ctypes.PyDLL, which keeps the GIL held during the
call, or, with --release-gil, through ctypes.CDLL, which releases it as PyTorch and Triton do before they launch.
The marker comments give the test the lines to expect.

usage: python_job.py LIB_DIR [--release-gil]
"""
import ctypes
import os
import sys


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


lib_dir = sys.argv[1]
Library = ctypes.CDLL if sys.argv[2:] == ["--release-gil"] else ctypes.PyDLL
kernels = Library(os.path.join(lib_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
cudart = Library(os.path.join(lib_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
kernels.simkernels_host_stub.restype = ctypes.c_void_p
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t,
                                    ctypes.c_void_p]


def malloc(nbytes):
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), nbytes)
    return p


def compute_loss(loss, weight_sum, logits, labels):
    holders = [loss, weight_sum, logits, labels, ctypes.c_void_p(None), ctypes.c_bool(True), ctypes.c_long(4),
               ctypes.c_long(4), ctypes.c_long(4), ctypes.c_long(-100)]
    argv = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    stub = kernels.simkernels_host_stub(b"nll_loss")
    return cudart.cudaLaunchKernel(stub, dim3(1, 1, 1), dim3(32, 1, 1), argv, 0, None)  # LAUNCH_LINE


def train_step(tensors):
    return compute_loss(*tensors)  # CALL_LINE


def main():
    tensors = [malloc(4), malloc(4), malloc(64), malloc(32)]
    bad = (ctypes.c_long * 4)(0, 1, 9, 2)
    cudart.cudaMemcpy(tensors[3], ctypes.cast(bad, ctypes.c_void_p), ctypes.sizeof(bad), 1)
    print("launch:", train_step(tensors))
    print("sync:", cudart.cudaDeviceSynchronize())


main()
