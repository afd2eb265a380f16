#!/usr/bin/env python3
"""Median training-step time of small PyTorch models, bare and under firstassert (see scripts/gpu-bench)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

CONFIGURATIONS = [
    ("baseline", False, {}),
    ("firstassert (defaults)", True, {}),
    ("firstassert, FIRSTASSERT_SYNC=all", True, {"FIRSTASSERT_SYNC": "all"}),
    ("CUDA_LAUNCH_BLOCKING=1", False, {"CUDA_LAUNCH_BLOCKING": "1"}),
]
WARMUP_STEPS = 10


def worker(model_name, steps):
    """Runs in the measured process: prints one JSON line with the step times in seconds."""
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
    print(json.dumps({"step_times": times}))


def measure(model_name, shim, env_extra, steps):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("FIRSTASSERT_") and k not in ("LD_PRELOAD", "CUDA_LAUNCH_BLOCKING")}
    env.update(env_extra)
    if shim:
        env["LD_PRELOAD"] = shim
    completed = subprocess.run([sys.executable, __file__, "--worker", model_name, "--steps", str(steps)],
                               env=env, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{model_name} under {env_extra or 'no settings'}{' with the shim' if shim else ''} "
                           f"exited with {completed.returncode}: {completed.stderr.strip()[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])["step_times"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shim")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--worker", choices=["mlp", "resnet18"])
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps)
        return 0

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
        for run in range(args.runs):
            for name, with_shim, env_extra in CONFIGURATIONS:
                print(f"  {model_name}: run {run + 1}/{args.runs}, {name}", file=sys.stderr, flush=True)
                samples[name] += measure(model_name, args.shim if with_shim else None, env_extra, args.steps)
        medians = {name: statistics.median(values) for name, values in samples.items()}
        print(f"\n{model_name}")
        print(f"  {'configuration':<36} {'median step ms':>15} {'ratio':>7}")
        for name, value in medians.items():
            print(f"  {name:<36} {value * 1e3:>15.3f} {value / medians['baseline']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
