"""A step of scripts/gpu-check: the CUPTI callbacks of the traced programs (scripts/lib/callback_trace.py:
TRACED_PROGRAMS) recorded on the GPU, without the shim, by the callback tracer (tests/gpu/callback_trace.cpp), so that
the simulator can be compared with them (tests/gpu/callback_conformance.py).

Each program runs as gpu-check builds it against the shared CUDA runtime, as the conformance test links it against
the simulator's. It leaves <out>/callback-traces/<program>.trace and, beside it, <program>.stderr: what the program
and the driver printed on stderr, bytes as printed (the device's assertion lines among them). Both are meant to be
copied as they are into tests/gpu/fixtures/callbacks/. A trace that cannot be read is renamed
<program>.trace.unreadable, so that such a copy never takes it.
"""
import os
import shutil

import callback_trace
import gpu_check_print as printing
import gpu_check_shim as shim_files
import gpu_check_table as table

TRACER = "libfirstassert_callback_trace.so"
BUILT_TRACER = os.path.join(shim_files.BUILD_DIR, "tests", "gpu", TRACER)  # meson builds it with the tests
TRACE_DIR = "callback-traces"
FIXTURES = os.path.join("tests", "gpu", "fixtures", "callbacks")
# The loader's CUPTI, which the tracer opens when it is not told which (FIRSTASSERT_CALLBACK_TRACE_CUPTI).
DEFAULT_CUPTI = "libcupti.so.13"


def traced_builds(cases=table.CASES, probes=table.PROBE_PROGRAMS):
    """{traced program: the Case gpu-check builds from its source against the shared runtime}."""
    found = {}
    for name in callback_trace.TRACED_PROGRAMS:
        for case in list(cases) + list(probes.values()):
            flags = list(case.nvcc_flags)
            if case.program == name + ".cu" and flags[flags.index("-cudart") + 1:][:1] == ["shared"]:
                found[name] = case
                break
    return found


def find_tracer(shim):
    """The tracer beside the shim (a pack), else the build's, else the default pack's; None when none is there."""
    for candidate in (os.path.join(os.path.dirname(shim), TRACER), BUILT_TRACER,
                      os.path.join(shim_files.PACK_DIR, TRACER)):
        if os.path.isfile(candidate):
            return candidate
    return None


def pack(directory, say):
    """Copies the build's tracer into the pack; returns the names copied."""
    if not os.path.isfile(BUILT_TRACER):
        say(f"no callback tracer at {BUILT_TRACER} (meson builds it with the tests): the pack records no callback "
            "traces")
        return []
    shutil.copy2(BUILT_TRACER, os.path.join(directory, TRACER))
    return [TRACER]


def trace_path(out_dir, program, suffix=".trace"):
    return os.path.join(out_dir, TRACE_DIR, program + suffix)


def run_name(program):
    """The run's directory under <out>/runs."""
    return "trace." + program


def jobs(binaries, tracer, cupti, out_dir, builds=None):
    """gpu-check's jobs (key, label, argv or None, why not, run name, preload the shim, environment) of the traced
    runs. binaries: {slug: (path or None, why)}; cupti: the library the tracer opens (None: the loader's)."""
    builds = traced_builds() if builds is None else builds
    os.makedirs(os.path.join(out_dir, TRACE_DIR), exist_ok=True)
    listed = []
    for program in callback_trace.TRACED_PROGRAMS:
        for suffix in (".trace", ".stderr", ".trace.unreadable"):  # an earlier gpu-check's, with the same --out
            if os.path.exists(trace_path(out_dir, program, suffix)):
                os.remove(trace_path(out_dir, program, suffix))
        case = builds.get(program)
        path, why = binaries.get(case.slug, (None, "not built")) if case else (
            None, f"gpu-check builds no {program}.cu against the shared runtime")
        if tracer is None:
            path, why = None, (f"no callback tracer ({TRACER}) beside the shim or in {os.path.dirname(BUILT_TRACER)}: "
                               "scripts/gpu-check --pack carries it")
        env = {"CUDA_INJECTION64_PATH": tracer or "", "FIRSTASSERT_CALLBACK_TRACE": trace_path(out_dir, program)}
        if cupti:
            env["FIRSTASSERT_CALLBACK_TRACE_CUPTI"] = cupti
        listed.append((("trace", program), f"trace of {program}", [path] if path else None, why, run_name(program),
                       False, env))
    return listed


def counted(trace):
    """How many callbacks a trace holds, in all and per domain, in words."""
    events = [event for thread in trace.threads.values() for event in thread]
    domains = {}
    for event in events:
        domains[event.domain] = domains.get(event.domain, 0) + 1
    per_domain = ", ".join(f"{domain} {count}" for domain, count in sorted(domains.items()))
    return (f"{len(events)} callbacks ({per_domain or 'none'}) on {len(trace.threads)} thread(s), "
            f"{trace.dropped} dropped")


def collect(program, outcome, out_dir):
    """One line: whether the program's trace was recorded (its callbacks counted) or why not. A recorded trace gets
    the run's stderr beside it."""
    if outcome is None:
        return f"{program}: not recorded: not run"
    if outcome.not_run:
        return f"{program}: not recorded: {outcome.not_run}"
    path = trace_path(out_dir, program)
    said = [line for line in outcome.stderr.splitlines() if line.startswith("callback_trace: ")]
    if not os.path.exists(path):
        return (f"{program}: not recorded: the run ({outcome.ended}) left no trace" +
                (f"; the tracer said: {said[0][len('callback_trace: '):]}" if said else
                 "; the tracer said nothing (was it loaded? the driver loads it at cuInit)"))
    try:
        trace = callback_trace.read(path)
    except callback_trace.TraceError as error:
        os.replace(path, path + ".unreadable")
        return f"{program}: not recorded: {error} (kept as {os.path.basename(path)}.unreadable)"
    stderr_bytes = os.path.join(out_dir, "runs", run_name(program), "stderr.txt")
    shutil.copyfile(stderr_bytes, trace_path(out_dir, program, ".stderr"))
    size = os.path.getsize(stderr_bytes)
    caution = "; a trace with dropped callbacks cannot be compared in full" if trace.dropped else ""
    return f"{program}: recorded, {counted(trace)}; the run ended with {outcome.ended}, {size} bytes on stderr{caution}"


def section(results, out_dir, tracer, cupti):
    """The printed section: what was recorded where, and where every run's output is kept."""
    where = os.path.join(out_dir, TRACE_DIR)
    lines = [collect(program, results.get(("trace", program)), out_dir) for program in callback_trace.TRACED_PROGRAMS]
    if any(": recorded, " in line for line in lines):
        lines.append(f"copy them as they are (<program>.trace and <program>.stderr, the stderr bytes as printed): "
                     f"cp {where}/*.trace {where}/*.stderr {FIXTURES}/")
    lines.append(f"every run's stdout and stderr, bytes as printed, matrix cases included: "
                 f"{os.path.join(out_dir, 'runs')}/<case>.<mode>/stdout.txt and stderr.txt")
    opened = cupti or f"{DEFAULT_CUPTI}, as the loader finds it"
    heading = f"callback traces, without the shim (tracer {tracer or 'none'}; CUPTI {opened}), in {where}:"
    return printing.section(heading, lines)
