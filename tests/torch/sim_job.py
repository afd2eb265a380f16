"""What the torch suite's scripts share: the environment scripts/simtorch gives a job (torch on the simulator's
libraries, ATen's asserting kernels modelled), and a job run as a user runs it, under `firstassert run`."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile

JOBS = pathlib.Path(__file__).resolve().parent / "jobs"
CUBIN_FACTS = pathlib.Path(__file__).resolve().parent.parent / "sim" / "aten" / "cubin_facts.py"


def wheel_assert_sites(torch_python, parts):
    """What the wheel's own device code says about its asserts (cubin_facts.py over its libtorch_cuda.so): {mangled
    kernel name: [(line, {the strings its __assertfail call loads: condition, file, function})]} for the kernels whose
    names contain one of parts. Tens of seconds for an LZ4-compressed wheel (torch 2.4, 2.8)."""
    library = next(pathlib.Path(torch_python).parent.parent.glob(
        "lib/python*/site-packages/torch/lib/libtorch_cuda.so"))
    out = subprocess.run([sys.executable, str(CUBIN_FACTS), str(library), *parts], capture_output=True, text=True,
                         timeout=1200, check=True).stdout
    sites, kernel = {}, None
    for line in out.splitlines():
        if not line.startswith(" "):
            kernel = line.strip()
            sites.setdefault(kernel, [])
        elif line.startswith("  assert line ") and kernel is not None:
            number, strings = line[len("  assert line "):].split(": ", 1)
            sites[kernel].append((int(number), set(strings.split(" | "))))
    return sites


def library_path(sim_dir):
    """The simulator's libraries and stand-ins of both CUDA generations: a job's libraries ask for libcudart.so.13 or
    .12 (and their stand-ins' sonames) and so find their own generation, as scripts/simtorch gives them."""
    return ":".join(f"{sim_dir}/{d}" if d else str(sim_dir) for d in ("", "standins", "cuda12", "standins/cuda12"))


def simulated_gpu_env(sim_dir, package_root, device_code=True, extra=None):
    """The job's environment: none of firstassert's settings from outside, no preloaded library; the simulator's
    libraries and stand-ins first; ATen's device code unless device_code is False (then no kernel asserts)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = library_path(sim_dir)
    env.pop("SIMCUDA_DEVICE_CODE", None)
    if device_code:
        env["SIMCUDA_DEVICE_CODE"] = f"{sim_dir}/aten/libsimaten.so"
    env["PYTHONPATH"] = package_root
    env.update(extra or {})
    return env


def marked(job, mark):
    """(line number, the text after the mark) of the one line of the job whose comment is the mark."""
    lines = (JOBS / job).read_text().splitlines()
    found = [(number, text.split(mark, 1)[1].strip()) for number, text in enumerate(lines, start=1)
             if "  " + mark in text]
    assert len(found) == 1, f"{job} marks {len(found)} lines with {mark!r}"
    return found[0]


class Run:
    """command run under `firstassert run [options] --dir <a new directory> --` (or bare, shim=False), its status,
    stdout, stderr and the reports it left."""

    def __init__(self, command, firstassert, sim_dir, package_root, options=(), shim=True, device_code=True,
                 env=None, timeout=300):
        self.reports = tempfile.mkdtemp(prefix="firstassert-torch-")
        if shim:
            command = [firstassert, "run", *options, "--dir", self.reports, "--"] + list(command)
        done = subprocess.run(command, env=simulated_gpu_env(sim_dir, package_root, device_code, env),
                              capture_output=True, text=True, timeout=timeout)
        self.status, self.stdout, self.stderr = done.returncode, done.stdout, done.stderr
        self.report_paths = sorted(pathlib.Path(self.reports).glob("firstassert-*.json"))

    def report(self):
        assert self.report_paths, f"no report was written; stderr:\n{self.stderr[-4000:]}"
        return json.loads(self.report_paths[-1].read_text())
