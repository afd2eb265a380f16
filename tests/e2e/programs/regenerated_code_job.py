"""A Python job that makes the same function again and again from generated source (as exec, notebooks and code
generators do), each time with its body on another line, until a new code object lands at the address of a freed
one; from that one it launches the failing kernel. The report must name the line it launched from now, not the
line a freed code object at that address launched from before.

usage: regenerated_code_job.py LIB_DIR
Prints "launched from line: N"; exits 3 when no address was reused (then the test cannot judge).
"""
import ctypes
import sys

import sim_cuda

kernels, cudart = sim_cuda.load(sys.argv[1], release_gil=True)
launch = sim_cuda.nll_loss_launcher(kernels, cudart)


good = (ctypes.c_long * 4)(0, 1, 2, 3)
bad = (ctypes.c_long * 4)(0, 1, 9, 2)
lines_at = {}  # code object address -> the line its body was on
for i in range(5000):
    blank = i % 7
    namespace = {}
    exec(compile("\n" * blank + "def step(launch, labels):\n    return launch(labels)\n", "generated.py", "exec"),
         namespace)
    address = id(namespace["step"].__code__)
    reused = lines_at.get(address, blank + 2) != blank + 2
    if reused:
        print(f"launched from line: {blank + 2}", flush=True)
    # One call site for both: the failing launch's stack differs from an earlier launch's only in the code object
    # that replaced a freed one at its address (the same bytecode, its body on another line).
    namespace["step"](launch, bad if reused else good)
    if reused:
        sys.exit(1)
    lines_at[address] = blank + 2
    del namespace
sys.exit(3)
