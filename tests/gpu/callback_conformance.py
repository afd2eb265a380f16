#!/usr/bin/env python3
"""Test: the simulator's CUPTI callbacks against a GPU's. For each fixture FIXTURES/<program>.trace, recorded on a GPU
by scripts/gpu-check (its --out/callback-traces/), the same program of tests/gpu is built with nvcc for the simulator,
run under the callback tracer, and its trace compared with the fixture (scripts/lib/callback_trace.py).

usage: callback_conformance.py TRACER SIM_DIR NVCC FIXTURES
       TRACER    build/tests/gpu/libfirstassert_callback_trace.so
       SIM_DIR   build/tests/sim (the simulator's libcuda.so.1, libcudart.so.13 and libcupti.so.13)
       NVCC      the toolkit's nvcc (meson's cuda-root), present or not
       FIXTURES  tests/gpu/fixtures/callbacks

Exit 0 when every fixture matches, 1 when one differs (each difference printed), 77 (SKIP) when there is no fixture
or no nvcc to build the programs with: never a pass without a comparison.
"""
import glob
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts", "lib"))

import callback_trace  # noqa: E402

SKIP = 77


def build(nvcc, source, output, sim_dir):
    """The program's object from nvcc, linked as tests/sim/meson.build links its nvcc program: against the
    simulator's runtime instead of NVIDIA's. Returns "" or what went wrong."""
    obj = output + ".o"
    steps = [[nvcc, "-c", "-arch=sm_90", "-std=c++17", "-O1", "-Xcompiler", "-fPIE", source, "-o", obj],
             ["c++", obj, "-o", output, os.path.join(sim_dir, "libcudart.so.13"), "-ldl",
              f"-Wl,-rpath,{sim_dir}"]]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            return f"{os.path.basename(step[0])} failed: " + " | ".join((done.stderr + done.stdout).splitlines()[-3:])
    return ""


def traced_run(program, trace_path, tracer, sim_dir):
    """Runs program under the tracer; its own outcome is not judged here (a probe may end in a device assert)."""
    env = dict(os.environ, CUDA_INJECTION64_PATH=tracer, FIRSTASSERT_CALLBACK_TRACE=trace_path,
               LD_LIBRARY_PATH=sim_dir)
    try:
        subprocess.run([program], capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        return "timed out after 120 s"
    return "" if os.path.exists(trace_path) else "it left no trace"


def compare(name, fixture, work, tracer, sim_dir, nvcc):
    """One line: the program's name and whether the simulator's trace matches the fixture."""
    source = os.path.join(HERE, name + ".cu")
    if name not in callback_trace.TRACED_PROGRAMS or not os.path.exists(source):
        return False, f"{name}: no such traced program (scripts/lib/callback_trace.py: TRACED_PROGRAMS)"
    program = os.path.join(work, name)
    why = build(nvcc, source, program, sim_dir) or traced_run(program, program + ".trace", tracer, sim_dir)
    if why:
        return False, f"{name}: not compared: {why}"
    try:
        difference = callback_trace.first_difference(callback_trace.read(fixture),
                                                     callback_trace.read(program + ".trace"))
    except callback_trace.TraceError as error:
        return False, f"{name}: {error}"
    return difference is None, f"{name}: " + ("the simulator's callbacks match the GPU's" if difference is None
                                               else f"the simulator differs from the GPU: {difference}")


def main(argv):
    tracer, sim_dir, nvcc, fixtures = (os.path.abspath(p) for p in argv[1:5])
    found = sorted(glob.glob(os.path.join(fixtures, "*.trace")))
    if not found:
        print(f"SKIPPED: no hardware fixture exists yet in {fixtures} (scripts/gpu-check leaves them in "
              "--out/callback-traces/ on a GPU)")
        return SKIP
    if not os.access(nvcc, os.X_OK):
        print(f"SKIPPED: no nvcc at {nvcc} to build the fixtures' programs with")
        return SKIP
    failed = False
    with tempfile.TemporaryDirectory() as work:
        for fixture in found:
            same, line = compare(os.path.basename(fixture)[:-len(".trace")], fixture, work, tracer, sim_dir, nvcc)
            print(line)
            failed |= not same
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv))
