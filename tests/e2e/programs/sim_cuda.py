"""The simulator's libraries through ctypes, as the Python e2e jobs drive them (python_job.py,
regenerated_code_job.py, replaced_code_job.py, repeated_stack_job.py)."""
import ctypes
import os


class dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def load(lib_dir, release_gil):
    """(kernels, cudart) with the signatures the jobs call. ctypes.CDLL releases the GIL around each call, as PyTorch
    and Triton do before they launch; ctypes.PyDLL keeps it held, as a framework's own C++ extension may."""
    library = ctypes.CDLL if release_gil else ctypes.PyDLL
    kernels = library(os.path.join(lib_dir, "libsimkernels.so"), mode=ctypes.RTLD_GLOBAL)
    cudart = library(os.path.join(lib_dir, "libcudart.so.13"), mode=ctypes.RTLD_GLOBAL)
    kernels.simkernels_host_stub.restype = ctypes.c_void_p
    cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    cudart.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    cudart.cudaLaunchKernel.argtypes = [ctypes.c_void_p, dim3, dim3, ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.c_size_t, ctypes.c_void_p]
    return kernels, cudart


def malloc(cudart, nbytes):
    p = ctypes.c_void_p()
    cudart.cudaMalloc(ctypes.byref(p), nbytes)
    return p


def copy_labels(cudart, tensor, values):
    """Copies 4 labels (longs) to the device tensor: values outside [0, 4) fire nll_loss's assert."""
    array = (ctypes.c_long * 4)(*values)
    cudart.cudaMemcpy(tensor, ctypes.cast(array, ctypes.c_void_p), ctypes.sizeof(array), 1)


def nll_loss_arguments(loss, weight_sum, logits, labels):
    """The kernel's argument array, and the values it points at (kept alive by the caller until the launch)."""
    holders = [loss, weight_sum, logits, labels, ctypes.c_void_p(None), ctypes.c_bool(True), ctypes.c_long(4),
               ctypes.c_long(4), ctypes.c_long(4), ctypes.c_long(-100)]
    return (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders]), holders


def nll_loss_launcher(kernels, cudart):
    """launch(labels): copies the labels (a ctypes array of 4 longs) to the device, launches the nll_loss kernel on
    them with one block, waits for it, and returns the launch's result. Labels outside [0, 4) fire its assert."""
    tensors = [malloc(cudart, size) for size in (4, 4, 64, 32)]

    def launch(labels):
        cudart.cudaMemcpy(tensors[3], ctypes.cast(labels, ctypes.c_void_p), ctypes.sizeof(labels), 1)
        argv, _ = nll_loss_arguments(*tensors)
        result = cudart.cudaLaunchKernel(kernels.simkernels_host_stub(b"nll_loss"), dim3(1, 1, 1), dim3(32, 1, 1),
                                         argv, 0, None)
        cudart.cudaDeviceSynchronize()
        return result

    return launch
