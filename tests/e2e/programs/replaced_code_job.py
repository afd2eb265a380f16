"""A Python job that launches from a function remade launch after launch at the same address, as a code generator
that rebuilds a function every step would: each new code object is a copy of one template with another first line
(CodeType.replace: the same bytecode and size, so the allocator hands it the block the previous one was freed from),
called from one call site. The stack of every launch is the previous launch's, frame for frame and instruction for
instruction; only the code object in one frame was replaced. From the first one found at its predecessor's address
it launches the failing kernel, and the report must name the line that code object gives, not its predecessor's.

usage: replaced_code_job.py LIB_DIR
Prints "launched from line: N"; exits 3 when no address was reused back to back (then the test cannot judge).
"""
import ctypes
import sys
import types

import sim_cuda

kernels, cudart = sim_cuda.load(sys.argv[1], release_gil=True)
launch = sim_cuda.nll_loss_launcher(kernels, cudart)


def template(launch, labels):
    return launch(labels)


good = (ctypes.c_long * 4)(0, 1, 2, 3)
bad = (ctypes.c_long * 4)(0, 1, 9, 2)
last_address, last_line = None, None
for i in range(2000):
    first_line = 1000 + 10 * (i % 7)  # lines past the file's end, as generated code's are
    code = template.__code__.replace(co_firstlineno=first_line, co_name="step")
    step = types.FunctionType(code, globals(), "step")
    line = first_line + 1  # the body's line
    # After a hundred launches: the first ones may run before the interpreter has called anything of the shim's
    # back (a code watcher is registered from the main thread's next pending call).
    reused = i >= 100 and id(code) == last_address and line != last_line
    if reused:
        print(f"launched from line: {line}", flush=True)
    step(launch, bad if reused else good)  # one call site for both
    if reused:
        sys.exit(1)
    last_address, last_line = id(code), line
    del step, code
sys.exit(3)
