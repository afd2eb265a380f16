"""The CUDA toolkit on the device machine: its nvcc builds the nvcc cases and probes for the GPU there, and its
CUPTI goes with the programs nvcc builds (scripts/gpu-check)."""
import glob
import os
import shutil
import subprocess


def find_nvcc():
    """nvcc on PATH, else the usual toolkit's; None when neither is there."""
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.access(candidate, os.X_OK):
            return os.path.realpath(candidate)
    return None


def toolkit_root(nvcc):
    return os.path.dirname(os.path.dirname(nvcc))


def nvcc_version(nvcc):
    try:
        text = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return "?"
    release = [line for line in text.splitlines() if "release" in line]
    return release[-1].split("release", 1)[1].split(",")[0].strip() if release else "?"


def library_dirs(root):
    """Where a toolkit keeps its shared libraries (lib64 is a link to targets/<arch>/lib in most installs)."""
    return [d for d in (os.path.join(root, "lib64"), os.path.join(root, "targets", "x86_64-linux", "lib"),
                        os.path.join(root, "lib")) if os.path.isdir(d)]


def toolkit_cupti(root):
    """The toolkit's own CUPTI (extras/CUPTI/lib64 in NVIDIA's installers, lib64 in some), or None."""
    for directory in [os.path.join(root, "extras", "CUPTI", "lib64")] + library_dirs(root):
        found = sorted(glob.glob(os.path.join(directory, "libcupti.so.*")))
        if found:
            return os.path.realpath(found[0])
    return None


def build(nvcc, source, output, flags, arch):
    """Compiles and links source with nvcc into output; returns "" or what went wrong (the compiler's last lines).
    The runtime's directory is in the program's RUNPATH: a toolkit's lib64 is often not in ld.so.conf."""
    root = toolkit_root(nvcc)
    command = [nvcc, f"-arch={arch}", "-std=c++17", "-O1", "-o", output, source, *flags, "-ldl"]
    for directory in library_dirs(root)[:1]:
        command += ["-Xlinker", f"-rpath,{directory}"]
    cupti_include = os.path.join(root, "extras", "CUPTI", "include")
    if os.path.isdir(cupti_include):
        command += ["-I", cupti_include]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as error:
        return f"nvcc could not run ({error})"
    if done.returncode != 0:
        said = [line for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        return f"nvcc failed on {os.path.basename(source)}: " + " | ".join(said[-3:])
    return ""
