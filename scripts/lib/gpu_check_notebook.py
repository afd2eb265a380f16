"""What scripts/gpu-check's notebook cases need besides the shim: the firstassert Python package that goes with it,
and a Jupyter kernel (ipykernel, jupyter_client) for the Python with torch.

A GPU machine set up for PyTorch may have no Jupyter and cannot reach PyPI, so `--pack` downloads the kernel's wheels
here (tests/gpu/notebook-requirements.txt, for each CPython a GPU machine may run), and gpu-check unpacks those of its
Python into a directory of its own (put on the kernel's path, never installed into the machine's Python) only when
that Python cannot import them already.
"""
import glob
import operator
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

from gpu_check_shim import PACK_DIR
from gpu_check_table import CASE_DIR, REPO_ROOT

PACKAGE = "firstassert"
PACKED_PACKAGE_DIR = "python"          # <pack>/python/firstassert
WHEELS_DIR = "notebook-wheels"         # <pack>/notebook-wheels/*.whl, and cpXY.txt: the wheels of CPython X.Y
REQUIREMENTS = os.path.join(CASE_DIR, "notebook-requirements.txt")
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")
PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")
# What the notebook cases need of a Jupyter kernel: that its kernel and shell import (the packed wheels' closure, for
# the Python there), and versions that name a cell's frames `Cell In[n], line L` (IPython 8) and run ipykernel 6's
# kernel; an older Jupyter the machine has is passed over for the packed wheels.
PROBE = ("import ipykernel, ipykernel.ipkernel, IPython, IPython.core.interactiveshell, jupyter_client\n"
         "major = lambda module: int(module.__version__.split('.')[0])\n"
         "assert major(IPython) >= 8 and major(ipykernel) >= 6 and major(jupyter_client) >= 7, "
         "'IPython %s, ipykernel %s, jupyter_client %s: too old' % (IPython.__version__, ipykernel.__version__, "
         "jupyter_client.__version__)")
PROBE_TIMEOUT = 120
DOWNLOAD_TIMEOUT = 300
MARKER_TESTS = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne, "<": operator.lt,
                ">": operator.gt}


def package_root(shim):
    """The directory holding the firstassert package that goes with shim, or None: a wheel's (the shim is in
    firstassert/_native/), a pack's (python/ beside the shim), a build tree's (build/python, the shim in build/src)."""
    here = os.path.dirname(os.path.abspath(shim))
    candidates = [os.path.join(here, PACKED_PACKAGE_DIR), os.path.join(os.path.dirname(here), PACKED_PACKAGE_DIR)]
    if os.path.basename(here) == "_native":
        candidates.insert(0, os.path.dirname(os.path.dirname(here)))
    return next((c for c in candidates if os.path.isfile(os.path.join(c, PACKAGE, "__init__.py"))), None)


def python_tag(version=None):
    major, minor = version or sys.version_info[:2]
    return f"cp{major}{minor}"


def jupyter_error(python, env, site=None):
    """Why python cannot import the kernel's packages (with site in front of its path), or ""."""
    code = (f"import sys; sys.path.insert(0, {site!r}); " if site else "") + PROBE
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env, timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"{python} did not import ipykernel and jupyter_client within {PROBE_TIMEOUT} s"
    if done.returncode == 0:
        return ""
    said = [line for line in done.stderr.splitlines() if line.strip()]
    return said[-1] if said else f"exit {done.returncode}"


def unpack_wheels(wheels, tag, site):
    """Extracts the wheels listed for tag into site, or raises ValueError saying what is missing.
    A wheel's .data/purelib and .data/platlib files go where an installer puts them: beside the packages."""
    listing = os.path.join(wheels, tag + ".txt")
    if not os.path.isfile(listing):
        packed = sorted(name[:-4] for name in os.listdir(wheels) if name.endswith(".txt"))
        raise ValueError(f"no wheels were packed for {tag} (packed: {', '.join(packed) or 'none'})")
    with open(listing, encoding="utf-8") as f:
        names = [line.strip() for line in f if line.strip()]
    os.makedirs(site, exist_ok=True)
    for name in names:
        with zipfile.ZipFile(os.path.join(wheels, name)) as archive:
            for member in archive.infolist():
                parts = member.filename.split("/")
                if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
                    target = os.path.join(site, *parts[2:])
                elif len(parts) > 1 and parts[0].endswith(".data"):
                    continue  # scripts, headers: nothing the kernel imports
                else:
                    target = os.path.join(site, *parts)
                if member.is_dir():
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with archive.open(member) as source, open(target, "wb") as out:
                    shutil.copyfileobj(source, out)


def prepare(python, shim, out_dir, env):
    """(the settings the notebook cases run with, or {} and why they cannot run here)."""
    package = package_root(shim)
    if package is None:
        return {}, (f"no firstassert Python package goes with the shim {shim} (a wheel's, a pack's python/, a build "
                    "tree's build/python)")
    settings = {"GPU_CHECK_PACKAGE": package}
    missing = jupyter_error(python, env)
    if not missing:
        return settings, ""
    # The pack's wheels: beside the shim when it is the pack's, else in the pack gpu-check finds by itself (the shim
    # named by --shim or --wheel, or a build tree there).
    places = [os.path.join(os.path.dirname(shim), WHEELS_DIR), os.path.join(PACK_DIR, WHEELS_DIR)]
    wheels = next((place for place in places if os.path.isdir(place)), None)
    if wheels is None:
        return {}, (f"{python} has no Jupyter kernel ({missing}) and no wheels were packed beside the shim or in "
                    f"{PACK_DIR}")
    site = os.path.join(out_dir, "notebook-site")
    try:
        unpack_wheels(wheels, python_tag(), site)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        return {}, f"{python} has no Jupyter kernel ({missing}), and the packed wheels cannot be used: {error}"
    still = jupyter_error(python, env, site)
    if still:
        return {}, f"{python} cannot import the packed Jupyter kernel from {site}: {still}"
    return dict(settings, GPU_CHECK_NOTEBOOK_SITE=site), ""


def pack(shim, directory, say):
    """Copies the package that goes with shim into directory/python, and downloads the kernel's wheels into
    directory/notebook-wheels; returns the names it added. Without the package or the network, one line says what the
    notebook cases will lack, and the pack goes on."""
    names = []
    package = package_root(shim)
    if package is None:
        say(f"no firstassert Python package goes with {shim}: the notebook cases will be SKIP where it is carried")
    else:
        target = os.path.join(directory, PACKED_PACKAGE_DIR, PACKAGE)
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(os.path.join(package, PACKAGE), target, ignore=shutil.ignore_patterns("__pycache__"))
        names.append(os.path.join(PACKED_PACKAGE_DIR, PACKAGE))
    wheels = os.path.join(directory, WHEELS_DIR)
    shutil.rmtree(wheels, ignore_errors=True)
    os.makedirs(wheels)
    packed = []
    pip = pip_command()
    for version in PYTHONS if pip else ():
        say(f"downloading the Jupyter kernel's wheels for CPython {version} (pip download)")
        error = download(version, wheels, pip)
        if error:
            say(f"no Jupyter wheels for CPython {version}: {error}")
        else:
            packed.append(version)
    if not packed:
        shutil.rmtree(wheels)
        say("no Jupyter wheels packed" + ("" if pip else f" ({sys.executable} has no pip)") +
            ": the notebook cases run only where the GPU machine's Python has ipykernel")
        return names
    return names + [f"{WHEELS_DIR} (CPython {', '.join(packed)})"]


def requirements_for(version, path=REQUIREMENTS):
    """The requirements of path that hold for CPython version ("3.10"). pip would test their markers against the
    Python it runs in, not the one it downloads for, so they are tested here; a marker may test python_version only
    (ValueError otherwise)."""
    wanted = tuple(int(part) for part in version.split("."))
    kept = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            requirement, _, marker = (part.strip() for part in text.partition(";"))
            if marker:
                said = re.fullmatch(r"python_version\s*(>=|<=|==|!=|<|>)\s*[\"']([0-9.]+)[\"']", marker)
                if not said:
                    raise ValueError(f"{os.path.basename(path)}: the marker {marker!r} tests more than python_version")
                bound = tuple(int(part) for part in said.group(2).split("."))
                if not MARKER_TESTS[said.group(1)](wanted, bound):
                    continue
            kept.append(requirement)
    return kept


def pip_command():
    """A pip to download with: this Python's, else that of a venv scripts/lib/setup.sh made (for Meson, for the
    notebook suite; Debian's python3 has no pip without python3-pip); None without any."""
    tools = os.environ.get("FIRSTASSERT_TOOLS_DIR") or os.path.join(REPO_ROOT, ".tools")
    venvs = [os.path.join(tools, "venv")] + sorted(glob.glob(os.path.join(tools, "notebook", "*")))
    for python in [sys.executable] + [os.path.join(venv, "bin", "python3") for venv in venvs]:
        try:
            done = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, timeout=PROBE_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return [python, "-m", "pip"]
    return None


def download(version, wheels, pip):
    """pip download of the requirements for CPython version into wheels, listed in its cpXY.txt; "" or why not."""
    tag = python_tag(tuple(int(part) for part in version.split(".")))
    try:
        requirements = requirements_for(version)
    except (OSError, ValueError) as error:
        return str(error)
    with tempfile.TemporaryDirectory() as scratch:
        argv = pip + ["download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:", "--python-version",
                      version, "--implementation", "cp", "--dest", scratch, *requirements]
        for platform in PLATFORMS:
            argv += ["--platform", platform]
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"pip download took more than {DOWNLOAD_TIMEOUT} s"
        except OSError as error:
            return f"pip cannot be run ({error.strerror})"
        if done.returncode != 0:
            said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
            return said[-1] if said else f"pip download exited {done.returncode}"
        files = sorted(name for name in os.listdir(scratch) if name.endswith(".whl"))
        for name in files:
            if not os.path.exists(os.path.join(wheels, name)):
                shutil.move(os.path.join(scratch, name), os.path.join(wheels, name))
    with open(os.path.join(wheels, tag + ".txt"), "w", encoding="utf-8") as f:
        f.write("".join(name + "\n" for name in files))
    return ""
