#!/usr/bin/env python3
"""Median training-step time of small PyTorch models, bare and under firstassert (see scripts/gpu-bench)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_counts  # noqa: E402
import gpu_check_shim  # noqa: E402  (how gpu-check loads a packed shim: its libraries on LD_LIBRARY_PATH)
from gpu_check_run import with_library_path  # noqa: E402

CONFIGURATIONS = [
    ("baseline", False, {}),
    ("firstassert (defaults)", True, {}),
    ("firstassert, FIRSTASSERT_VALUES=probe", True, {"FIRSTASSERT_VALUES": "probe"}),
    ("firstassert, FIRSTASSERT_SYNC=all", True, {"FIRSTASSERT_SYNC": "all"}),
    ("CUDA_LAUNCH_BLOCKING=1", False, {"CUDA_LAUNCH_BLOCKING": "1"}),
]
DEFAULTS_GOAL = 1.02  # the defaults' step time at most this times the bare one (docs/performance.md)
WARMUP_STEPS = 10
# Where `firstassert run --values=MODE` finds the package's sitecustomize.py, relative to the shim: the build's
# (build/src/ beside build/python/) and the pack's (scripts/gpu-check --pack: python/ beside the shim).
VALUES_SITES = (os.path.join("..", "python", "firstassert", "values", "_site"),
                os.path.join("python", "firstassert", "values", "_site"))


def worker(model_name, steps, count_launches=False):
    """Runs in the measured process: prints one JSON line with the step times in seconds (with count_launches, the
    kernel launches of one step instead, counted by torch.profiler)."""
    import time
    import torch

    torch.manual_seed(0)
    device = torch.device("cuda")
    if model_name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 4096),
                                    torch.nn.ReLU(), torch.nn.Linear(4096, 10))
        inputs = torch.randn(256, 1024, device=device)
        labels = torch.randint(0, 10, (256,), device=device)
    else:
        import torchvision
        model = torchvision.models.resnet18(num_classes=10)
        inputs = torch.randn(64, 3, 224, 224, device=device)
        labels = torch.randint(0, 10, (64,), device=device)
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    def step_once():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), labels).backward()
        optimizer.step()

    if count_launches:
        for _ in range(WARMUP_STEPS):
            step_once()
        torch.cuda.synchronize()
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step_once()
            torch.cuda.synchronize()
        kernels = sum(1 for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA)
        print(json.dumps({"launches_per_step": kernels}))
        return
    times = []
    for step in range(WARMUP_STEPS + steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(inputs), labels).backward()
        optimizer.step()
        torch.cuda.synchronize()
        if step >= WARMUP_STEPS:
            times.append(time.perf_counter() - start)
    values = sys.modules.get("firstassert.values")
    print(json.dumps({"step_times": times, "values": values.mode() if values else "off"}))


def values_site(shim):
    """The directory of firstassert's sitecustomize.py for the shim (what `firstassert run --values=MODE` puts first
    on PYTHONPATH), or None."""
    for relative in VALUES_SITES:
        site = os.path.normpath(os.path.join(os.path.dirname(shim), relative))
        if os.path.isfile(os.path.join(site, "sitecustomize.py")):
            return site
    return None


RECORDING = "firstassert: recording launches through "  # what the shim says at FIRSTASSERT_LOG=info once it records


def measure(model_name, shim, env_extra, steps):
    """The step times of one run. Under the shim, also whether it recorded (its own words at FIRSTASSERT_LOG=info,
    which adds lines at start-up and exit only): a shim that could not record would be timed as if it cost nothing.
    Returns (step times, "" or what the shim said instead)."""
    env = clean_environment(shim)
    env.update(env_extra)
    if shim:
        env["FIRSTASSERT_LOG"] = "info"
    wanted = env_extra.get("FIRSTASSERT_VALUES", "off")
    if wanted != "off":
        site = values_site(shim)
        if site is None:
            raise RuntimeError(f"no firstassert sitecustomize.py beside {shim} ({', '.join(VALUES_SITES)}) to turn "
                               f"FIRSTASSERT_VALUES={wanted} on with")
        env["PYTHONPATH"] = site + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    completed = subprocess.run([sys.executable, __file__, "--worker", model_name, "--steps", str(steps)],
                               env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{model_name} under {env_extra or 'no settings'}{' with the shim' if shim else ''} "
                           f"exited with {completed.returncode}: {completed.stderr.strip()[-2000:]}")
    said = [line for line in completed.stderr.splitlines() if line.startswith("firstassert: ")]
    not_recording = ""
    if shim and not any(line.startswith(RECORDING) for line in said):
        not_recording = said[0] if said else "the shim said nothing at FIRSTASSERT_LOG=info"
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    if result.get("values", "off") != wanted and not not_recording:
        not_recording = f"the job's values mode was {result.get('values')}, not {wanted}"
    return result["step_times"], not_recording


OWN = ("libfirstassert", "libunwind")


LIBRARY_PATH = ""  # the shim's own directory where it needs the libraries packed beside it, else ""


def clean_environment(shim=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FIRSTASSERT_") and k not in ("LD_PRELOAD", "CUDA_LAUNCH_BLOCKING")}
    if shim:
        env["LD_PRELOAD"] = shim
        with_library_path(env, LIBRARY_PATH)
    return env


def instructions_per_step(model_name, shim, steps, valgrind, out_dir, tag, deadline):
    """Instructions per training step of all the process's threads (PyTorch launches backward's kernels from its
    autograd thread), {object file name: count}, by the difference of a run of STEPS and one of 2*STEPS (start-up and
    warm-up cancel). subprocess.TimeoutExpired once DEADLINE (time.monotonic()) has passed."""
    counts = []
    for n in (steps, 2 * steps):
        command = [sys.executable, __file__, "--worker", model_name, "--steps", str(n)]
        completed, files = callgrind_counts.run(valgrind, command, clean_environment(shim),
                                                os.path.join(out_dir, f"{tag}.{n}"),
                                                timeout=max(1.0, deadline - time.monotonic()))
        if completed.returncode != 0 or not files:
            raise RuntimeError(f"callgrind run of {model_name} failed ({completed.returncode}): "
                               f"{completed.stderr.strip()[-300:]}")
        total = {}
        for path in files.values():
            for k, v in callgrind_counts.self_instructions_by_object(path).items():
                total[k] = total.get(k, 0) + v
        counts.append(total)
    return {os.path.basename(k): v / steps for k, v in callgrind_counts.difference(*counts).items()}


def instruction_table(model_name, shim, steps, valgrind, budget_s):
    """The shim's own instructions per CUDA launch (libfirstassert*.so + libunwind, all threads), from callgrind, where
    valgrind runs a CUDA process within BUDGET_S seconds; one line saying why not otherwise."""
    completed = subprocess.run([sys.executable, __file__, "--worker", model_name, "--count-launches"],
                               env=clean_environment(), capture_output=True, text=True, timeout=budget_s)
    if completed.returncode != 0:
        print(f"  instructions: skipped (counting the launches of a step failed: {completed.stderr.strip()[-300:]})")
        return
    launches = max(1, json.loads(completed.stdout.strip().splitlines()[-1])["launches_per_step"])
    deadline = time.monotonic() + budget_s
    with tempfile.TemporaryDirectory(prefix="gpu_bench_callgrind.") as out_dir:
        bare = instructions_per_step(model_name, None, steps, valgrind, out_dir, "bare", deadline)
        shimmed = instructions_per_step(model_name, shim, steps, valgrind, out_dir, "shim", deadline)
    own = sum(v for k, v in shimmed.items() if k.startswith(OWN)) / launches
    others = (sum(v for k, v in shimmed.items() if not k.startswith(OWN)) - sum(bare.values())) / launches
    print(f"  instructions (callgrind, all threads; {launches} CUDA activities a step by torch.profiler: kernels, "
          f"copies, fills): the shim's own {own:,.0f} a launch (target <= 1,200: {'met' if own <= 1200 else 'MISSED'}); "
          f"other objects' added {others:,.0f} a launch; a bare step {sum(bare.values()):,.0f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shim")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--worker", choices=["mlp", "resnet18"])
    parser.add_argument("--count-launches", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--callgrind-steps", type=int, default=2,
                        help="steps of the callgrind runs (default 2; 0: no instruction counts)")
    parser.add_argument("--callgrind-budget", type=int, default=240,
                        help="seconds the callgrind runs may take in all (default 240)")
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps, args.count_launches)
        return 0

    global LIBRARY_PATH
    try:
        LIBRARY_PATH = gpu_check_shim.library_path_for(args.shim)
    except gpu_check_shim.ShimError as error:
        print(f"scripts/gpu-bench: {error}; nothing was measured", file=sys.stderr)
        return 2
    models = ["mlp"]
    try:
        import torchvision  # noqa: F401
        models.append("resnet18")
    except ImportError:
        print("gpu-bench: torchvision is not installed; ResNet-18 is left out", file=sys.stderr)

    import torch
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {args.steps} timed steps after "
          f"{WARMUP_STEPS} warm-up, {args.runs} runs per configuration, alternating; median step time")
    for model_name in models:
        samples = {name: [] for name, *_ in CONFIGURATIONS}
        not_recording = {}
        for run in range(args.runs):
            for name, with_shim, env_extra in CONFIGURATIONS:
                print(f"  {model_name}: run {run + 1}/{args.runs}, {name}", file=sys.stderr, flush=True)
                times, why = measure(model_name, args.shim if with_shim else None, env_extra, args.steps)
                samples[name] += times
                if why:
                    not_recording.setdefault(name, why)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        print(f"\n{model_name}")
        print(f"  {'configuration':<40} {'median step ms':>15} {'ratio':>7}")
        for name, value in medians.items():
            print(f"  {name:<40} {value * 1e3:>15.3f} {value / medians['baseline']:>7.2f}")
        defaults = medians["firstassert (defaults)"] / medians["baseline"]
        print(f"  defaults: {defaults:.3f} x bare (goal <= {DEFAULTS_GOAL}: "
              f"{'met' if defaults <= DEFAULTS_GOAL else 'MISSED'})")
        for name, why in not_recording.items():
            print(f"  NOT RECORDING in '{name}' (so its time is not firstassert's cost): {why}")
    # The launch path's own work as instructions, which repeat, after the times: where valgrind is installed and
    # can run a CUDA process (it may not: then one line says so, and the times above stand).
    sys.stdout.flush()  # the times are out before the slow part starts, whatever becomes of it
    valgrind = shutil.which("valgrind")
    if args.callgrind_steps == 0:
        print("\ninstructions: skipped (--callgrind-steps 0)")
    elif valgrind is None:
        print("\ninstructions: skipped (no valgrind on PATH)")
    else:
        print(f"\ninstructions, mlp ({args.callgrind_steps} and {2 * args.callgrind_steps} steps, differenced; at "
              f"most {args.callgrind_budget} s)", flush=True)
        try:
            instruction_table("mlp", args.shim, args.callgrind_steps, valgrind, args.callgrind_budget)
        except Exception as e:  # noqa: BLE001  the times above stand, whatever goes wrong here
            print(f"  instructions: skipped ({type(e).__name__}: {e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
