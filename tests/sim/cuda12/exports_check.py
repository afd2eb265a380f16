"""The simulator's CUDA 12 runtime and CUPTI against NVIDIA's own (PyPI's nvidia-cuda-runtime-cu12 and
nvidia-cuda-cupti-cu12, unpacked beside the headers): the same soname and version node, and no export NVIDIA's
library lacks (nothing invented). With torch venvs given, also: every symbol their libraries import from
libcudart.so.12 or libcupti.so.12 is exported (else Python's RTLD_NOW load of torch fails).

usage: exports_check.py SIM_CUDA12_DIR NVIDIA_LIB_DIR [TORCH_VENV...]
"""
import pathlib
import re
import subprocess
import sys

LIBRARIES = ["libcudart.so.12", "libcupti.so.12"]


def readelf(*args):
    return subprocess.run(["readelf", "--wide", *args], capture_output=True, text=True, check=True).stdout


def soname_and_nodes(path):
    soname = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", readelf("-d", path))
    definitions = readelf("-V", path).split("Version definition section", 1)[-1].split("Version needs section")[0]
    return soname.group(1) if soname else None, set(re.findall(r"Name: (\S+)", definitions))


def exported(path):
    names = set()
    for line in readelf("--dyn-syms", path).splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] != "UND" and fields[4] in ("GLOBAL", "WEAK") and fields[3] == "FUNC":
            names.add(fields[7].split("@")[0])
    return names


def imported(path, soname):
    """Names path imports under soname's version node (name@soname)."""
    names = set()
    for line in readelf("--dyn-syms", path).splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[6] == "UND" and fields[7].endswith("@" + soname):
            names.add(fields[7].split("@")[0])
    return names


def main():
    sim_dir, nvidia_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    venvs = [pathlib.Path(v) for v in sys.argv[3:]]
    failures = []
    for library in LIBRARIES:
        ours, theirs = sim_dir / library, nvidia_dir / library
        soname, nodes = soname_and_nodes(ours)
        if soname != library or nodes != {library}:
            failures.append(f"{ours}: soname {soname}, version nodes {sorted(nodes)}; NVIDIA's: {library}")
        if theirs.exists():
            invented = exported(ours) - exported(theirs)
            if invented:
                failures.append(f"{ours} exports what NVIDIA's {library} does not: {sorted(invented)}")
        else:
            failures.append(f"NVIDIA's {theirs} is not there to compare with")
        for venv in venvs:
            libs = sorted(venv.glob("lib/python3*/site-packages/torch/lib/*.so*"))
            if not libs:
                failures.append(f"{venv}: no torch/lib/*.so")
            needed = set().union(*(imported(lib, library) for lib in libs))
            missing = needed - exported(ours)
            if missing:
                failures.append(f"torch in {venv} imports from {library} what {ours} lacks: {sorted(missing)}")
            else:
                print(f"{venv.name}: the {len(needed)} symbols torch imports from {library} are all exported")
    for failure in failures:
        print(failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
