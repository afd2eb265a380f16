"""The shim scripts/gpu-check preloads: found (built here and carried, or packed), built only when missing, checked
to load, and packed with the libraries a bare machine may lack.

The build directory is too large to carry to the GPU machine, and the shim needs libunwind, which a machine set up
for PyTorch may not have (its C++ runtime and Boost.Stacktrace are inside it): `--pack` copies the shim's two
libraries and that one into one small directory (build/gpu-check-pack), which gpu-check finds by itself and puts on
LD_LIBRARY_PATH only when needed.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import unpack_wheel
from gpu_check_run import with_library_path

from gpu_check_table import REPO_ROOT

# Where scripts/lib/setup.sh builds (FIRSTASSERT_BUILD_DIR, else build/), and the pack beside what it was built from.
BUILD_DIR = os.environ.get("FIRSTASSERT_BUILD_DIR") or os.path.join(REPO_ROOT, "build")
PACK_DIR = os.path.join(BUILD_DIR, "gpu-check-pack")
RECORDER = "libfirstassert_recorder.so"  # the half the preloaded shim loads at cuInit (src/stub/recorder_abi.h)
BUILD_HELPER = os.path.join(REPO_ROOT, "scripts", "lib", "gpu_check_build_shim.sh")
# Libraries every glibc system with a C++ runtime has; anything else the shim needs goes into the pack. liblzma
# (libunwind's) is on every distribution (dpkg and systemd need it): a packed copy would go on LD_LIBRARY_PATH of every
# run, torch's included, in place of the machine's own, perhaps newer, one.
SYSTEM_LIBRARIES = ("libc.so", "libm.so", "libdl.so", "libpthread.so", "librt.so", "ld-linux", "libstdc++.so",
                    "libgcc_s.so", "linux-vdso.so", "liblzma.so")
PACK_INFO = "pack-info.txt"  # which commit the packed shim was built from, for the note the results go into


class ShimError(Exception):
    """One line saying what is missing."""


def find_or_build(explicit):
    """The shim's path: the one named, else the built one, else the packed one, else one built now."""
    if explicit:
        if not os.path.isfile(explicit):
            raise ShimError(f"no shim at {explicit} (--shim)")
        return os.path.abspath(explicit)
    built, packed = shim_paths()
    for candidate in (built, packed):
        if os.path.isfile(candidate):
            return candidate
    print("gpu-check: no shim built or packed; building it", file=sys.stderr, flush=True)
    done = subprocess.run(["bash", BUILD_HELPER], capture_output=True, text=True)
    if done.returncode != 0 or not os.path.isfile(built):
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise ShimError(f"no shim at {built} and it cannot be built here ({said[-1] if said else 'no reason given'}); "
                        "build it where the toolchain is (scripts/test) and carry it (--pack), or pass --shim")
    return built


def from_wheel(wheel):
    """The shim of a wheel (scripts/wheel's: what pip installs), unpacked into a new directory."""
    try:
        return unpack_wheel.unpack(wheel, tempfile.mkdtemp(prefix="gpu-check-wheel-"))
    except (OSError, zipfile.BadZipFile, ValueError) as error:
        raise ShimError(f"--wheel {wheel}: {error}") from None


def shim_paths():
    """(where scripts/lib/setup.sh builds the shim; where --pack puts it)."""
    return os.path.join(BUILD_DIR, "src", "libfirstassert.so"), os.path.join(PACK_DIR, "libfirstassert.so")


def recorder_of(shim):
    """The shim's other half, which the preloaded libfirstassert.so loads from its own directory at cuInit."""
    return os.path.join(os.path.dirname(shim), RECORDER)


def load_error(shim, lib_path=""):
    """Why the shim or its recorder cannot be loaded in a fresh process (the dynamic loader's words), or ""."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH")}
    with_library_path(env, lib_path)
    done = subprocess.run([sys.executable, "-c", "import ctypes, sys; [ctypes.CDLL(p) for p in sys.argv[1:]]", shim,
                           recorder_of(shim)], env=env, capture_output=True, text=True)
    if done.returncode == 0:
        return ""
    said = [line for line in done.stderr.splitlines() if line.strip()]
    return said[-1] if said else f"exit {done.returncode}"


def library_path_for(shim):
    """"" when the shim loads as it is; its own directory when it loads from there (a pack); ShimError otherwise."""
    error = load_error(shim)
    if not error:
        return ""
    here = os.path.dirname(shim)
    if not load_error(shim, here):
        return here
    raise ShimError(f"the shim at {shim} cannot be loaded: {error}; run scripts/gpu-check --pack where it was built "
                    "and carry the pack")


def needed_libraries(shim):
    """Paths of the non-system libraries the shim loads, as ldd resolves them here."""
    listing = subprocess.run(["ldd", shim], capture_output=True, text=True, check=True).stdout
    found = []
    for line in listing.splitlines():
        if "=>" not in line:
            continue
        name, target = (part.strip() for part in line.split("=>", 1))
        path = target.split(" (")[0].strip()
        if not name.startswith(SYSTEM_LIBRARIES) and os.path.isfile(path):
            found.append((name, path))
    return found


def source_commit():
    """The commit the working tree is at, "+ changes" when tracked files differ from it; "" without git."""
    try:
        head = subprocess.run(["git", "-C", REPO_ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, timeout=30)
        dirty = subprocess.run(["git", "-C", REPO_ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    if head.returncode != 0:
        return ""
    return head.stdout.strip() + (" + changes" if dirty.stdout.strip() else "")


def describe(shim):
    """Which build the shim is: the commit its pack recorded, or (a build tree here) the working tree's."""
    info = os.path.join(os.path.dirname(shim), PACK_INFO)
    if os.path.isfile(info):
        with open(info, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    commit = source_commit()
    return f"built from commit {commit}" if commit else ""


def pack(shim, directory):
    """Copies the shim, its recorder and the libraries they need into directory; returns the file names."""
    os.makedirs(directory, exist_ok=True)
    commit = source_commit()
    with open(os.path.join(directory, PACK_INFO), "w", encoding="utf-8") as f:
        f.write(f"packed from commit {commit or 'unknown (no git)'} on {time.strftime('%Y-%m-%d %H:%M %Z')}\n")
    names = ["libfirstassert.so", RECORDER]
    shutil.copy2(shim, os.path.join(directory, "libfirstassert.so"))
    shutil.copy2(recorder_of(shim), os.path.join(directory, RECORDER))
    for name, path in needed_libraries(shim) + needed_libraries(recorder_of(shim)):
        if name in names:
            continue
        shutil.copy2(path, os.path.join(directory, name))  # under its soname: what the loader looks for
        names.append(name)
    return names + [PACK_INFO]
