"""gpu-check's first run: what this machine has. Touches CUDA once (so that a preloaded shim activates and says, at
FIRSTASSERT_LOG=info, which CUPTI it took) and prints one JSON line: versions, the device, the CUDA libraries this
process loaded, and the CUPTI libraries that could be named in FIRSTASSERT_CUPTI if the shim's own search fails."""
import ctypes
import glob
import json
import os
import sys

import gpucase


def loaded_libraries():
    """Real paths of the CUDA libraries mapped into this process, by soname prefix."""
    found = {}
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            for prefix in ("libcuda.so", "libcudart.so", "libcupti.so"):
                if name.startswith(prefix):
                    found.setdefault(prefix.split(".")[0], os.path.realpath(path))
    return found


def cupti_candidates():
    """CUPTI libraries shipped with PyTorch's wheels and with a toolkit, in that order."""
    patterns = []
    for root in sys.path:
        patterns += [os.path.join(root, "nvidia", sub, "lib", "libcupti.so*") for sub in ("cuda_cupti", "cu13", "cu12")]
        patterns.append(os.path.join(root, "torch", "lib", "libcupti*.so*"))
    patterns += ["/usr/local/cuda/extras/CUPTI/lib64/libcupti.so*", "/usr/local/cuda/lib64/libcupti.so*"]
    seen = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)):
            real = os.path.realpath(path)
            if real not in seen:
                seen.append(real)
    return seen


def driver_version():
    try:
        version = ctypes.c_int()
        if ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version)) == 0:
            return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except OSError:
        pass
    return None


torch = gpucase.require_cuda()
torch.zeros(1, device="cuda").add_(1)
torch.cuda.synchronize()
try:
    import triton
    triton_version = triton.__version__
except ImportError:
    triton_version = None
print(json.dumps({
    "python": sys.version.split()[0],
    "torch": torch.__version__,
    "torch_cuda": torch.version.cuda,
    "device": torch.cuda.get_device_name(0),
    "capability": "%d.%d" % torch.cuda.get_device_capability(0),
    "driver": driver_version(),
    "triton": triton_version,
    "loaded": loaded_libraries(),
    "cupti_candidates": cupti_candidates(),
}))
