"""The stand-ins a CUDA 12 build of PyTorch loads: each under the soname torch asks for, exporting under the version
node torch's imports name (or unversioned, as NVIDIA's library exports them), with entry points that resolve when the
library is loaded as the dynamic linker loads it for torch (RTLD_NOW). The entry points checked are among those the
PyPI wheels of torch 2.8.0 (CUDA 12.8) and 2.4.1 (CUDA 12.1) import (nm -D --with-symbol-versions --undefined-only
on torch/lib/libtorch_cuda.so, libtorch_cuda_linalg.so, libtorch_python.so and libcaffe2_nvrtc.so); the torch
venvs are not needed here (torch_imports.py checks every import against an installed torch).

Usage: cuda12_standins_test.py LIBRARY... (the built stand-ins, named by their soname)"""
import ctypes
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "scripts", "lib"))
import elf_symbols  # noqa: E402

# soname: (the version node torch imports it under, None where NVIDIA's library and torch's imports are unversioned;
# entry points torch imports)
EXPECTED = {
    "libcublas.so.12": ("libcublas.so.12", ["cublasCreate_v2", "cublasSetWorkspace_v2", "cublasSgemm_v2",
                                            "cublasGemmEx"]),
    "libcublasLt.so.12": ("libcublasLt.so.12", ["cublasLtMatmulDescCreate", "cublasLtMatmulAlgoGetHeuristic",
                                                "cublasLtMatmul"]),
    "libcufft.so.11": ("libcufft.so.11", ["cufftXtMakePlanMany", "cufftXtExec"]),
    "libcusolver.so.11": ("libcusolver.so.11", ["cusolverDnCreate", "cusolverDnDsyevj",
                                                "cusolverDnXsyevjSetSortEig"]),
    "libnvrtc.so.12": ("libnvrtc.so.12", ["nvrtcVersion", "nvrtcCompileProgram", "nvrtcGetCUBIN"]),
    # The sonames CUDA 12 and 13 share: one stand-in each.
    "libcusparse.so.12": ("libcusparse.so.12", ["cusparseCreate", "cusparseSpMM"]),
    "libcudnn.so.9": ("libcudnn.so.9", ["cudnnGetVersion", "cudnnCreate"]),
    "libnccl.so.2": (None, ["ncclGetVersion", "ncclCommInitRankConfig"]),
    "libcufile.so.0": (None, ["cuFileRead"]),
    "libcusparseLt.so.0": (None, ["cusparseLtInit"]),
    "libnvToolsExt.so.1": ("libnvToolsExt.so.1", ["nvtxMarkA", "nvtxRangePushA", "nvtxRangePop", "nvtxRangeStartA",
                                                  "nvtxRangeEnd"]),
    "libcurand.so.10": ("libcurand.so.10", []),  # needed by torch 2.8.0 and 2.4.1, which import none of its symbols
}

# The libraries whose soname, and so version node, CUDA 13 changed: the node of the parent directory's build.
CUDA_13_NODES = {"libcublas.so.12": "libcublas.so.13", "libcublasLt.so.12": "libcublasLt.so.13",
                 "libcufft.so.11": "libcufft.so.12", "libcusolver.so.11": "libcusolver.so.12",
                 "libnvrtc.so.12": "libnvrtc.so.13"}

LIBRARIES = {}  # soname -> path, from the command line

_libc = ctypes.CDLL(None)
_libc.dlvsym.restype = ctypes.c_void_p
_libc.dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
_libc.dlsym.restype = ctypes.c_void_p
_libc.dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


def loaded(soname):
    return ctypes.CDLL(LIBRARIES[soname])  # dlopen with RTLD_NOW: every symbol the stand-in needs binds now


def resolve(library, name, node):
    """The address the dynamic linker binds name@node (or unversioned name) to in library, None when it binds none."""
    if node is None:
        return _libc.dlsym(library._handle, name.encode())
    return _libc.dlvsym(library._handle, name.encode(), node.encode())


class Cuda12Standins(unittest.TestCase):
    def test_every_library_torch_needs_is_built(self):
        self.assertEqual(sorted(LIBRARIES), sorted(EXPECTED))

    def test_each_carries_its_soname_and_exports_its_api_under_its_version_node(self):
        for soname, (node, entry_points) in EXPECTED.items():
            with self.subTest(soname=soname):
                linkage = elf_symbols.dynamic_linkage(LIBRARIES[soname])
                self.assertEqual(linkage.soname, soname)
                self.assertEqual(linkage.nodes, {node} if node else set())
                for name in entry_points:
                    self.assertIn((name, node), linkage.defined)
                # Nothing outside the node (the node's own definition, named after it, is how ELF records it).
                self.assertEqual({(name, version) for name, version in linkage.defined
                                  if version != node and name != node}, set())

    def test_entry_points_resolve_under_cuda_12s_node_only(self):
        for soname, (node, entry_points) in EXPECTED.items():
            with self.subTest(soname=soname):
                library = loaded(soname)
                for name in entry_points:
                    self.assertIsNotNone(resolve(library, name, node), f"{name}@{node}")
                if soname in CUDA_13_NODES:  # an import of CUDA 13's library binds nothing here
                    cuda13 = CUDA_13_NODES[soname]
                    self.assertIsNone(resolve(library, entry_points[0], cuda13), f"{entry_points[0]}@{cuda13}")

    def test_curand_exports_nothing(self):
        linkage = elf_symbols.dynamic_linkage(LIBRARIES["libcurand.so.10"])
        self.assertEqual({name for name, _ in linkage.defined if name.startswith("curand")}, set())

    def test_nvtx_answers_as_with_no_tool_attached(self):
        # nvtx3/nvtxDetail/nvtxImplCore.h: push and pop return NVTX_NO_PUSH_POP_TRACKING (-2), start returns range 0.
        nvtx = loaded("libnvToolsExt.so.1")
        nvtx.nvtxRangeStartA.restype = ctypes.c_uint64
        self.assertEqual(nvtx.nvtxRangePushA(b"outer"), -2)
        self.assertEqual(nvtx.nvtxRangePop(), -2)
        self.assertEqual(nvtx.nvtxRangeStartA(b"range"), 0)
        nvtx.nvtxRangeEnd(ctypes.c_uint64(0))
        nvtx.nvtxMarkA(b"mark")

    def test_nvrtc_reports_cuda_12(self):
        nvrtc = loaded("libnvrtc.so.12")
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.assertEqual(nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), 0)  # NVRTC_SUCCESS
        self.assertEqual((major.value, minor.value), (12, 8))


if __name__ == "__main__":
    for path in sys.argv[1:]:
        LIBRARIES[os.path.basename(path)] = path
    unittest.main(argv=sys.argv[:1], verbosity=2)
