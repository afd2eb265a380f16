"""What an installed PyTorch imports from the NVIDIA libraries the stand-ins replace that the stand-ins do not export.

Usage: torch_imports.py TORCH_VENV STANDIN_DIR...

For each of torch/lib/*.so in the venv's site-packages, and each library it needs that one of the STANDIN_DIRs holds
(searched in the order given, as LD_LIBRARY_PATH is: a CUDA 12 torch is checked against build/tests/sim/standins/
cuda12 and then build/tests/sim/standins), every import the dynamic linker would bind there:
  - a versioned one (name@node, the node one of that library's, as `nm -D --with-symbol-versions` shows it) binds
    only to a definition of name under that node;
  - an unversioned one carries no library: it is counted as that library's when its name begins with the library's
    API prefix (the longest matching one: cusparseLt before cusparse), and binds to a definition of name under any
    node.
Prints each import that would not bind, then a summary; exits 1 when there is one. python3's standard library only."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts", "lib"))
import elf_symbols  # noqa: E402

# A library's name without ".so.N", and the prefix of its API's names (NVIDIA's headers name them so).
API_PREFIXES = {
    "libcublas": "cublas", "libcublasLt": "cublasLt", "libcufft": "cufft", "libcusolver": "cusolver",
    "libcusparse": "cusparse", "libcusparseLt": "cusparseLt", "libnvrtc": "nvrtc", "libcudnn": "cudnn",
    "libnccl": "nccl", "libcufile": "cuFile", "libcurand": "curand", "libnvToolsExt": "nvtx",
    "libnvshmem_host": "nvshmem",
}


def stem(soname):
    return re.sub(r"\.so(\.\d+)*$", "", soname)


def owner_of(name):
    """The library stem whose API prefix is the longest that name begins with, None when none does."""
    matches = [(len(prefix), library) for library, prefix in API_PREFIXES.items() if name.startswith(prefix)]
    return max(matches)[1] if matches else None


def torch_libraries(venv):
    found = sorted(glob.glob(os.path.join(venv, "lib", "python3*", "site-packages", "torch", "lib", "*.so*")))
    if not found:
        raise SystemExit(f"no torch/lib/*.so under {venv}/lib/python3*/site-packages")
    return found


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    venv, directories = argv[1], argv[2:]
    standins = {}  # soname -> DynamicLinkage of the first stand-in by that name

    def standin(soname):
        if soname not in standins:
            paths = [os.path.join(d, soname) for d in directories if os.path.isfile(os.path.join(d, soname))]
            standins[soname] = elf_symbols.dynamic_linkage(paths[0]) if paths else None
        return standins[soname]

    missing, checked, unchecked = [], 0, set()
    for path in torch_libraries(venv):
        torch_lib = elf_symbols.dynamic_linkage(path)
        provided = {soname: standin(soname) for soname in torch_lib.needed if standin(soname) is not None}
        by_stem = {stem(soname): soname for soname in provided}
        unchecked |= {soname for soname in torch_lib.needed if soname not in provided and stem(soname) in API_PREFIXES}
        for name, node in sorted(torch_lib.undefined, key=lambda imported: (imported[0], imported[1] or "")):
            if node is not None:
                soname = torch_lib.node_files.get(node)
                if soname not in provided:
                    continue
                binds = (name, node) in provided[soname].defined
                shown = f"{name}@{node}"
            else:
                soname = by_stem.get(owner_of(name))
                if soname is None:
                    continue
                binds = any(defined == name for defined, _ in provided[soname].defined)
                shown = f"{name} (unversioned, from {soname})"
            checked += 1
            if not binds:
                missing.append(f"{os.path.basename(path)}: {shown}")

    for line in missing:
        print(line)
    print(f"{checked} imports from {len([s for s in standins.values() if s])} stand-ins checked "
          f"({', '.join(sorted(s for s, linkage in standins.items() if linkage))}): {len(missing)} not exported")
    if unchecked:
        print(f"needed NVIDIA libraries none of the directories holds (not checked): {', '.join(sorted(unchecked))}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
