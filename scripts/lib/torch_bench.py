#!/usr/bin/env python3
"""What only real PyTorch shows, measured on the simulated GPU (scripts/torch-bench runs this under scripts/simtorch):
for real training loops, (a) the CUDA runtime and driver API calls per aten op and per launch, (b) the launches in
flight during a training step, (c) the shim's own instructions per aten op, per launch and per CUDA call (callgrind).

Each figure comes from a fresh process running one of the loops (`worker`, below) in one mode, after the same
warm-up steps (--warmup, default 10):
- count: a CUPTI callback subscriber of its own (ctypes; the runtime and driver domains, every callback id) counts
  each call at ENTER, and a TorchDispatchMode names the aten op each call is made in: the ops as they reach the
  backend, below autograd (forward, backward on autograd's thread, the optimizer), one op per dispatch; an op is on
  the GPU when a tensor it takes or returns is. A driver call made while a runtime call is in progress on the thread
  (the runtime implementing it) is counted apart from driver calls made by torch or a library (top-level ones). The
  mode does not change the calls (the totals are the same without it). No shim: CUPTI admits one subscriber, and
  the shim holds that slot when preloaded.
- inflight: CUPTI's activity API (ctypes; RUNTIME, DRIVER and CONCURRENT_KERNEL records) over the measured steps:
  at the start of each launching API call, the kernels launched before it (smaller correlation id) whose device end
  is later than that start are in flight. The simulator runs a kernel without a body as SIMCUDA_KERNEL_US
  microseconds of stream time (a sleep: on a machine whose sleeps overshoot, longer), and computes GEMMs for real on
  the CPU (the cuBLAS stand-in), so the depth follows both.
- plain: the loop alone, for callgrind (--tool=callgrind --separate-threads=yes --instr-atstart=no), bare and under
  the shim (LD_PRELOAD; defaults, and defaults with FIRSTASSERT_STACK_DEPTH=0): TORCH_BENCH_TOGGLE names a library
  built from callgrind_toggle.c whose client requests switch counting on after the warm-up and off after the
  measured steps' work, so that start-up, importing torch, the warm-up and exit are not counted (and run several
  times faster). All threads are summed. The shim's libunwind count repeats exactly from run to run; the recorder's
  moves by a few percent with the simulated device's timing (what its syncs find done).

The loops: fixed seeds; each step's batch is made on the host and moved with .cuda() (a pageable copy, which
synchronizes the stream, as a DataLoader's batches do without pin_memory); the loss is read with .item() every 10th
step. mlp: a 32-64-64-10 classifier, batch 64, SGD with momentum. token: one Transformer encoder layer (width 32,
4 heads, feed-forward 64, dropout 0.1) between an embedding (vocabulary 128) and a linear head, sequence 16, batch 8,
AdamW. mlp-compiled: mlp with its loss (model and cross entropy, forward and backward) under torch.compile: Inductor's
Triton kernels, launched from its generated code (compiled during the warm-up). They are small because the
simulated device computes GEMMs and Triton kernels on the CPU (and under callgrind).
"""
import argparse
import contextlib
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_counts  # noqa: E402

WARMUP_STEPS = 10  # before any measurement (default; --warmup): the caching allocator and cuBLAS handles settle
LOG_EVERY = 10  # the loss is read (.item(), a device-to-host copy that synchronizes) every LOG_EVERY steps
MODELS = ("mlp", "token", "mlp-compiled")
# Loops whose aten ops are not counted: under a TorchDispatchMode (the op tagger) torch.compile's graphs run their ops
# one by one instead of their compiled kernels, so the count run would measure another loop.
UNTAGGED = ("mlp-compiled",)

# ---- the training loops (run in the measured process) -------------------------------------------------------------


def make_loop(model_name):
    """step(number): one training step of MODEL_NAME (mlp or token) on a host-made batch; the model and its optimizer
    are made on the device first."""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    if model_name in ("mlp", "mlp-compiled"):
        model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).cuda()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)

        def batch():
            return torch.randn(64, 32).cuda(), torch.randint(0, 10, (64,)).cuda()

        def loss_of(x, y):
            return nn.functional.cross_entropy(model(x), y)

        if model_name == "mlp-compiled":
            loss_of = torch.compile(loss_of)  # Inductor's Triton kernels, compiled in the warm-up
    else:
        vocab, width, sequence, batch_size = 128, 32, 16, 8

        class TokenModel(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(vocab, width)
                self.encoder = nn.TransformerEncoderLayer(width, nhead=4, dim_feedforward=64, batch_first=True)
                self.head = nn.Linear(width, vocab)

            def forward(self, ids):
                return self.head(self.encoder(self.embed(ids)))

        model = TokenModel().cuda()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

        def batch():
            ids = torch.randint(0, vocab, (batch_size, sequence + 1))
            return ids[:, :-1].contiguous().cuda(), ids[:, 1:].reshape(-1).cuda()

        def loss_of(x, y):
            return nn.functional.cross_entropy(model(x).view(-1, vocab), y)

    model.train()
    losses = []

    def step(number):
        x, y = batch()
        loss = loss_of(x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (number + 1) % LOG_EVERY == 0:
            losses.append(loss.item())

    return step


# ---- CUPTI through ctypes -----------------------------------------------------------------------------------------

CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API = 1, 2
CUPTI_API_ENTER = 0
ACTIVITY_KIND = {"DRIVER": 4, "RUNTIME": 5, "CONCURRENT_KERNEL": 10}
# Offsets in the records (cupti_activity.h of CUDA 13; stable since CUpti_ActivityKernel4 / CUpti_ActivityAPI).
API_RECORD = {"cbid": 4, "start": 8, "end": 16, "correlation": 32}
KERNEL_RECORD = {"start": 16, "end": 24, "stream": 48, "correlation": 92, "name": 104}
LAUNCH_CALLS = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
                "cuLaunchKernelEx", "cuLaunchCooperativeKernel")


def is_launch(name):
    """A kernel launch: cudaLaunchKernel (CUDA 13's runtime reports the launches of <<<...>>> as __cudaLaunchKernel),
    cuLaunchKernel and their variants."""
    return name.lstrip("_").startswith(LAUNCH_CALLS)


class CallbackData(ctypes.Structure):
    _fields_ = [("callbackSite", ctypes.c_int), ("functionName", ctypes.c_char_p), ("functionParams", ctypes.c_void_p),
                ("functionReturnValue", ctypes.c_void_p), ("symbolName", ctypes.c_char_p),
                ("context", ctypes.c_void_p), ("contextUid", ctypes.c_uint32), ("correlationData", ctypes.c_void_p),
                ("correlationId", ctypes.c_uint32)]


CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p)
BUFFER_REQUESTED = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                    ctypes.POINTER(ctypes.c_size_t))
BUFFER_COMPLETED = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t,
                                    ctypes.c_size_t)


def load_cupti():
    cupti = ctypes.CDLL("libcupti.so.13")
    for name in ("cuptiSubscribe", "cuptiEnableDomain", "cuptiUnsubscribe", "cuptiActivityEnable",
                 "cuptiActivityDisable", "cuptiActivityRegisterCallbacks", "cuptiActivityFlushAll",
                 "cuptiActivityGetNextRecord", "cuptiGetCallbackName"):
        getattr(cupti, name).restype = ctypes.c_int
    return cupti


def check(result, what):
    if result != 0:
        raise RuntimeError(f"{what} returned CUPTI error {result}")


CPU_OPS = "(aten ops on the CPU)"
OUTSIDE_MAIN = "(outside aten ops, main thread)"
OUTSIDE_OTHER = "(outside aten ops, other threads)"


class CallCounter:
    """A CUPTI subscriber counting API calls by (aten op, kind, name); kind: runtime, driver (made by torch or a
    library itself) or driver in runtime (made by the runtime while one of its calls is in progress on the thread)."""

    def __init__(self):
        self.cupti = load_cupti()
        self.local = threading.local()
        self.names = {}
        self.calls = {}  # (op, kind, name) -> count
        self.counting = False
        self._callback = CALLBACK(self._on_call)  # kept alive: CUPTI holds the pointer
        self.handle = ctypes.c_void_p()
        check(self.cupti.cuptiSubscribe(ctypes.byref(self.handle), self._callback, None), "cuptiSubscribe")
        for domain in (CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API):
            check(self.cupti.cuptiEnableDomain(1, self.handle, domain), "cuptiEnableDomain")

    def _on_call(self, _userdata, domain, cbid, data):
        local = self.local
        call = CallbackData.from_address(data)
        depth = getattr(local, "runtime_depth", 0)
        if domain == CUPTI_CB_DOMAIN_RUNTIME_API:
            local.runtime_depth = depth + (1 if call.callbackSite == CUPTI_API_ENTER else -1)
        if call.callbackSite != CUPTI_API_ENTER or not self.counting:
            return
        key = (domain, cbid)
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = (call.functionName or b"?").decode()
        if domain == CUPTI_CB_DOMAIN_RUNTIME_API:
            kind = "runtime" if depth == 0 else "runtime in runtime"
        else:
            kind = "driver" if depth == 0 else "driver in runtime"
        frame = getattr(local, "op", None)  # the calls of the op in progress, merged when it returns
        if frame is not None:
            frame[(kind, name)] = frame.get((kind, name), 0) + 1
            return
        op = OUTSIDE_MAIN if threading.current_thread() is threading.main_thread() else OUTSIDE_OTHER
        self.add(op, {(kind, name): 1})

    def add(self, op, calls):
        for (kind, name), count in calls.items():
            entry = (op, kind, name)
            self.calls[entry] = self.calls.get(entry, 0) + count

    def close(self):
        check(self.cupti.cuptiUnsubscribe(self.handle), "cuptiUnsubscribe")


def op_tagger(counter):
    """A TorchDispatchMode that counts the aten ops reaching the backend, by name and by whether a tensor they take or
    return is on the GPU (a CUDA op) or none is (a CPU op: the host's batch, the optimizer's step counts), and names
    the one in progress on the thread for COUNTER's callbacks."""
    import torch
    from torch.utils._pytree import tree_leaves
    from torch.utils._python_dispatch import TorchDispatchMode

    def on_gpu(values):
        return any(isinstance(v, torch.Tensor) and v.is_cuda for v in tree_leaves(values))

    class OpTagger(TorchDispatchMode):
        ops = {}  # (name, on the GPU) -> [dispatches, dispatches that launched a kernel]

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = str(func.overloadpacket.__name__)
            name = "aten::" + name if func.namespace == "aten" else f"{func.namespace}::{name}"
            local = counter.local
            outer = getattr(local, "op", None)
            local.op = frame = {}
            try:
                result = func(*args, **kwargs)
            finally:
                local.op = outer
            if counter.counting:
                gpu = on_gpu((args, kwargs)) or on_gpu(result)
                launched = any(is_launch(call) for kind, call in frame if kind in ("runtime", "driver"))
                counts = self.ops.setdefault((name, gpu), [0, 0])
                counts[0] += 1
                counts[1] += launched
                counter.add(name if gpu else CPU_OPS, frame)
            return result

    return OpTagger()


class ActivityCollector:
    """CUPTI's activity API: API records (runtime, driver) and kernel records, kept as tuples."""

    BUFFER_SIZE = 32 << 20

    def __init__(self):
        self.cupti = load_cupti()
        self.buffers = {}
        self.api = []  # (correlation id, start, end, cbid, is runtime)
        self.kernels = []  # (correlation id, start, end, stream, name)
        self._requested = BUFFER_REQUESTED(self._on_request)
        self._completed = BUFFER_COMPLETED(self._on_complete)
        check(self.cupti.cuptiActivityRegisterCallbacks(self._requested, self._completed),
              "cuptiActivityRegisterCallbacks")

    def _on_request(self, buffer, size, max_records):
        memory = (ctypes.c_uint8 * (self.BUFFER_SIZE + 8))()
        address = (ctypes.addressof(memory) + 7) // 8 * 8
        self.buffers[address] = memory
        buffer[0] = address
        size[0] = self.BUFFER_SIZE
        max_records[0] = 0

    def _on_complete(self, _context, _stream, buffer, _size, valid):
        record = ctypes.c_void_p(None)
        u32, u64 = ctypes.c_uint32, ctypes.c_uint64
        while self.cupti.cuptiActivityGetNextRecord(ctypes.c_void_p(buffer), ctypes.c_size_t(valid),
                                                    ctypes.byref(record)) == 0:
            at = record.value
            kind = u32.from_address(at).value
            if kind in (ACTIVITY_KIND["RUNTIME"], ACTIVITY_KIND["DRIVER"]):
                self.api.append((u32.from_address(at + API_RECORD["correlation"]).value,
                                 u64.from_address(at + API_RECORD["start"]).value,
                                 u64.from_address(at + API_RECORD["end"]).value,
                                 u32.from_address(at + API_RECORD["cbid"]).value, kind == ACTIVITY_KIND["RUNTIME"]))
            elif kind == ACTIVITY_KIND["CONCURRENT_KERNEL"]:
                self.kernels.append((u32.from_address(at + KERNEL_RECORD["correlation"]).value,
                                     u64.from_address(at + KERNEL_RECORD["start"]).value,
                                     u64.from_address(at + KERNEL_RECORD["end"]).value,
                                     u32.from_address(at + KERNEL_RECORD["stream"]).value,
                                     (ctypes.c_char_p.from_address(at + KERNEL_RECORD["name"]).value or b"?").decode()))
        self.buffers.pop(buffer, None)

    def enable(self, on):
        for kind in ACTIVITY_KIND.values():
            call = self.cupti.cuptiActivityEnable if on else self.cupti.cuptiActivityDisable
            check(call(kind), "cuptiActivityEnable" if on else "cuptiActivityDisable")

    def flush(self):
        check(self.cupti.cuptiActivityFlushAll(1), "cuptiActivityFlushAll")


# ---- the worker's modes -------------------------------------------------------------------------------------------


def warmed_up(model_name, warmup):
    """The model's step function, after `warmup` steps and a synchronization: what every mode measures from."""
    import torch

    step = make_loop(model_name)
    for number in range(warmup):
        step(number)
    torch.cuda.synchronize()
    return step


def worker_count(model_name, steps, warmup):
    import torch

    step = warmed_up(model_name, warmup)
    counter = CallCounter()
    tagger = None if model_name in UNTAGGED else op_tagger(counter)
    with tagger or contextlib.nullcontext():
        counter.counting = True
        for number in range(warmup, warmup + steps):
            step(number)
        counter.counting = False
    torch.cuda.synchronize()
    counter.close()
    calls = [[op, kind, name, count] for (op, kind, name), count in sorted(counter.calls.items())]
    tagged = tagger.ops.items() if tagger is not None else []
    ops = [[name, gpu, count, launching] for (name, gpu), (count, launching) in sorted(tagged)]
    return {"steps": steps, "ops": ops, "calls": calls}


def worker_inflight(model_name, steps, warmup):
    import torch

    step = warmed_up(model_name, warmup)
    collector = ActivityCollector()
    collector.enable(True)
    started = time.perf_counter()
    for number in range(warmup, warmup + steps):
        step(number)
    torch.cuda.synchronize()
    wall = time.perf_counter() - started
    collector.enable(False)
    collector.flush()
    kernel_of = {k[0]: k for k in collector.kernels}
    launches = sorted((c, start) for c, start, _end, _cbid, _runtime in collector.api if c in kernel_of)
    ends = sorted((k[0], k[2]) for k in collector.kernels)
    depths = []
    for correlation, start in launches:
        depths.append(sum(1 for c, end in ends if c < correlation and end > start))
    gemm = [k[2] - k[1] for k in collector.kernels if "gemm" in k[4]]
    others = [k[2] - k[1] for k in collector.kernels if "gemm" not in k[4]]
    per_step = len(launches) // steps if len(launches) % steps == 0 else 0  # every step launches alike
    step_peaks = [max(depths[i:i + per_step]) for i in range(0, len(depths), per_step)] if per_step else []
    return {"steps": steps, "wall_s": wall, "launches": len(launches), "depths": depths, "step_peaks": step_peaks,
            "gemm_ns": sum(gemm), "gemms": len(gemm), "other_ns": sum(others),
            "other_median_ns": statistics.median(others) if others else 0}


def worker_plain(model_name, steps, warmup):
    """The loop alone. Under callgrind (--instr-atstart=no) with TORCH_BENCH_TOGGLE naming the toggle library
    (callgrind_toggle.c), instructions are counted from the first measured step to the end of the last one's work."""
    import torch

    toggle = os.environ.get("TORCH_BENCH_TOGGLE")
    toggle = ctypes.CDLL(toggle) if toggle else None
    step = warmed_up(model_name, warmup)
    if toggle:
        toggle.torch_bench_start()
    for number in range(warmup, warmup + steps):
        step(number)
    torch.cuda.synchronize()
    if toggle:
        toggle.torch_bench_stop()
    values = sys.modules.get("firstassert.values")
    return {"steps": steps, "values": values.mode() if values else "off"}


WORKER_MODES = {"count": worker_count, "inflight": worker_inflight, "plain": worker_plain}

# ---- the orchestrating process ------------------------------------------------------------------------------------


def clean_environment(shim=None, extra=None):
    dropped = ("LD_PRELOAD", "CUDA_LAUNCH_BLOCKING", "CUDA_INJECTION64_PATH", "SIMCUDA_KERNEL_US")
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k not in dropped}
    env.update(extra or {})
    if shim:
        env["LD_PRELOAD"] = shim
        env["FIRSTASSERT_DIR"] = tempfile.gettempdir()
    return env


def worker_command(model_name, mode, steps):
    return [sys.executable, os.path.abspath(__file__), "worker", model_name, mode, str(steps), str(WARMUP_STEPS)]


def run_worker(model_name, mode, steps, extra=None):
    completed = subprocess.run(worker_command(model_name, mode, steps), env=clean_environment(extra=extra),
                               capture_output=True, text=True, timeout=600)
    if completed.returncode != 0:
        raise RuntimeError(f"the {mode} run of {model_name} exited with {completed.returncode}: "
                           f"{completed.stderr.strip()[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


TOP_LEVEL = ("runtime", "driver")


def summarize_calls(counted):
    """Per-step figures from a count run."""
    steps = counted["steps"]
    gpu_ops = {name: (count, launching) for name, gpu, count, launching in counted["ops"] if gpu}
    cpu_ops = sum(count for _name, gpu, count, _launching in counted["ops"] if not gpu)
    by_op = {}  # op -> {(kind, name) -> count}
    totals = {}  # kind -> {name -> count}
    for op, kind, name, count in counted["calls"]:
        by_op.setdefault(op, {})[(kind, name)] = by_op.get(op, {}).get((kind, name), 0) + count
        totals.setdefault(kind, {})[name] = totals.get(kind, {}).get(name, 0) + count
    calls = {kind: sum(names.values()) for kind, names in totals.items()}
    return {"steps": steps, "gpu_ops": gpu_ops, "cpu_ops": cpu_ops, "by_op": by_op, "totals": totals, "calls": calls,
            "ops": sum(count for count, _ in gpu_ops.values()),
            "launching_ops": sum(launching for _, launching in gpu_ops.values()),
            "launches": sum(c for kind in TOP_LEVEL for n, c in totals.get(kind, {}).items() if is_launch(n)),
            "top_level": sum(calls.get(kind, 0) for kind in TOP_LEVEL)}


def per(total, count, width=0, form=",.0f"):
    """total / count, or n/a where nothing was counted (a loop whose aten ops are not counted: UNTAGGED)."""
    return f"{total / count:>{width}{form}}" if count else f"{'n/a':>{width}}"


def top(names, n):
    return sorted(names.items(), key=lambda item: (-item[1], item[0]))[:n]


def top_level_names(calls):
    names = {}
    for (kind, name), count in calls.items():
        if kind in TOP_LEVEL:
            names[name] = names.get(name, 0) + count
    return names


def print_calls(model_name, summary):
    steps = summary["steps"]
    calls = summary["calls"]
    ops, launching, launches, top_level = (summary[k] for k in ("ops", "launching_ops", "launches", "top_level"))
    print(f"\n{model_name}: CUDA API calls in a training step ({steps} steps counted after {WARMUP_STEPS} warm-up; "
          f"per step)")
    print(f"  aten ops on the GPU {ops / steps:.1f} ({len(summary['gpu_ops'])} kinds), {launching / steps:.1f} of them "
          f"launching a kernel (the rest: views, detach); aten ops on the CPU {summary['cpu_ops'] / steps:.1f}; kernel "
          f"launches {launches / steps:.1f}")
    print(f"  top-level calls {top_level / steps:.1f}: runtime {calls.get('runtime', 0) / steps:.1f}, driver "
          f"{calls.get('driver', 0) / steps:.1f} (cuDevicePrimaryCtxGetState: torch's hasPrimaryContext; "
          f"cuCtxGetCurrent and cuLaunchKernel: the cuBLAS stand-in's GEMMs); driver calls inside runtime calls "
          f"{calls.get('driver in runtime', 0) / steps:.1f}")
    if not ops:
        print("  (aten ops not counted: under a TorchDispatchMode torch.compile runs the ops one by one)")
    print(f"  top-level calls per aten op on the GPU {per(top_level, ops, form='.2f')}, per launching op "
          f"{per(top_level, launching, form='.2f')}, per launch {top_level / launches:.2f} (the synthetic --ops loop: "
          f"4 per op)")
    for kind in ("runtime", "driver", "driver in runtime", "runtime in runtime"):
        names = summary["totals"].get(kind)
        if names:
            shown = ", ".join(f"{name} {count / steps:.1f}" for name, count in top(names, 8))
            print(f"  {kind} calls per step: {shown}")
    print("  by aten op on the GPU: dispatches per step, top-level calls per dispatch (the most made)")
    rows = sorted(summary["gpu_ops"].items(), key=lambda row: (-row[1][0], row[0]))
    for op, (count, _launching) in rows:
        names = top_level_names(summary["by_op"].get(op, {}))
        shown = ", ".join(f"{name} {n / count:.2f}" for name, n in top(names, 5))
        print(f"    {op:<44} {count / steps:>5.1f} {sum(names.values()) / count:>6.2f}  {shown or '(none)'}")
    for label in (CPU_OPS, OUTSIDE_MAIN, OUTSIDE_OTHER):
        names = top_level_names(summary["by_op"].get(label, {}))
        if names:
            shown = ", ".join(f"{name} {n / steps:.1f}" for name, n in top(names, 6))
            print(f"    {label:<44} per step: {shown}")


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0


def print_inflight(kernel_us, result):
    depths = result["depths"]
    steps = result["steps"]
    wall = result["wall_s"]
    busy = (result["gemm_ns"] + result["other_ns"]) / 1e9 / wall
    idle = sum(1 for d in depths if d == 0) / max(1, len(depths))
    print(f"  SIMCUDA_KERNEL_US={kernel_us:<4} {wall / steps * 1e3:6.2f} ms a step, device busy {busy:4.0%} (GEMMs "
          f"{result['gemm_ns'] / 1e6 / steps:.2f} ms a step; other kernels {result['other_median_ns'] / 1e3:.0f} us "
          f"each, median); kernels in flight at a launch: mean {statistics.mean(depths) if depths else 0:.1f}, median "
          f"{percentile(depths, 0.5)}, p90 {percentile(depths, 0.9)}, max {max(depths) if depths else 0} (a step's "
          f"peak: median {percentile(result['step_peaks'], 0.5)}); {idle:.0%} of launches find the device idle")


RECORDING = "firstassert: recording launches through "  # what the shim says at FIRSTASSERT_LOG=info once it records


# (label, under the shim?, its settings): the configurations counted under callgrind.
CALLGRIND_CONFIGURATIONS = [
    ("bare", False, {}),
    ("defaults", True, {}),
    ("defaults, no native stacks", True, {"FIRSTASSERT_STACK_DEPTH": "0"}),
    ("values check", True, {"FIRSTASSERT_VALUES": "check"}),
    ("values probe", True, {"FIRSTASSERT_VALUES": "probe"}),
]


def callgrind_run(args, model_name, shim, settings, out_prefix):
    """{object file name: instructions} of one callgrind run over the measured steps, all threads summed, and
    {thread number: {object file name: instructions}}."""
    extra = dict(settings, TORCH_BENCH_TOGGLE=args.toggle)
    if shim:
        extra["FIRSTASSERT_LOG"] = "info"
    if "FIRSTASSERT_VALUES" in settings:
        extra["PYTHONPATH"] = args.values_site  # what `firstassert run --values=MODE` puts first on PYTHONPATH
    env = clean_environment(shim, extra)
    completed, files = callgrind_counts.run(args.valgrind, worker_command(model_name, "plain", args.callgrind_steps),
                                            env, out_prefix, options=["--instr-atstart=no"],
                                            timeout=args.callgrind_timeout)
    lines = [line for line in completed.stderr.strip().splitlines() if not line.startswith("==")]
    if completed.returncode != 0 or not files:
        raise RuntimeError(f"callgrind run of {model_name}{' under the shim' if shim else ''} failed "
                           f"({completed.returncode}): {(lines or ['no output'])[-1]}")
    if shim and not any(line.startswith(RECORDING) for line in lines):
        said = [line for line in lines if line.startswith("firstassert")]
        raise RuntimeError(f"the shim did not record under callgrind ({(said or ['it said nothing'])[0]})")
    wanted = settings.get("FIRSTASSERT_VALUES", "off")
    mode = json.loads(completed.stdout.strip().splitlines()[-1]).get("values")
    if mode != wanted:
        raise RuntimeError(f"the values mode of the callgrind run was {mode}, not {wanted}")
    total, threads = {}, {}
    for number, path in files.items():
        counts = callgrind_counts.self_instructions_by_object(path)
        recorded = callgrind_counts.recorded_total(path)
        if recorded is not None and recorded != sum(counts.values()):
            raise RuntimeError(f"callgrind_counts summed {sum(counts.values()):,} in {path}, callgrind says "
                               f"{recorded:,}")
        threads[number] = {}
        for key, value in counts.items():
            name = os.path.basename(key)
            total[name] = total.get(name, 0) + value
            threads[number][name] = threads[number].get(name, 0) + value
    return total, threads


def callgrind_figures(args, model_names):
    """{(model, configuration label): ({object: instructions per step}, {thread: {object: instructions per step}})};
    the runs go two at a time (valgrind runs a process's threads one at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    steps = args.callgrind_steps
    jobs = {}
    with tempfile.TemporaryDirectory(prefix="torch_bench_callgrind.") as out_dir, \
            ThreadPoolExecutor(max_workers=2) as pool:
        for model_name in model_names:
            for index, (label, shim, settings) in enumerate(CALLGRIND_CONFIGURATIONS):
                jobs[(model_name, label)] = pool.submit(callgrind_run, args, model_name, args.shim if shim else None,
                                                        settings, os.path.join(out_dir, f"{model_name}.{index}"))
        results = {key: job.result() for key, job in jobs.items()}
    return {key: ({k: v / steps for k, v in objects.items()},
                  {n: {k: v / steps for k, v in thread.items()} for n, thread in threads.items()})
            for key, (objects, threads) in results.items()}


def own_columns(objects):
    own = {"stub": 0, "recorder": 0, "libunwind": 0}
    for name, value in objects.items():
        if name.startswith("libfirstassert.so"):
            own["stub"] += value
        elif name.startswith("libfirstassert"):
            own["recorder"] += value
        elif name.startswith("libunwind.so"):
            own["libunwind"] += value
    return own


SIMULATOR = ("libcuda.so", "libcudart.so", "libcupti.so")


def host_total(threads):
    """Instructions of the threads that run torch's code (Python's main thread, autograd's), not the simulated
    device's (whose GEMMs are computed on the CPU)."""
    return sum(sum(thread.values()) for thread in threads.values() if thread.get("libtorch_cpu.so", 0) > 0)


def print_callgrind(model_name, figures, summary, steps):
    bare, bare_threads = figures[(model_name, "bare")]
    per_step = summary["steps"]
    ops, launching = summary["ops"] / per_step, summary["launching_ops"] / per_step
    launches, calls = summary["launches"] / per_step, summary["top_level"] / per_step
    bare_host = host_total(bare_threads)
    print(f"\n{model_name}: the shim's own instructions (callgrind, all threads, {steps} measured steps after "
          f"{WARMUP_STEPS} warm-up; per step {ops:.1f} aten ops on the GPU, {launching:.1f} of them launching, "
          f"{launches:.1f} launches, {calls:.1f} top-level CUDA calls)")
    print(f"  {'configuration':<27} {'own a step':>10} {'stub':>6} {'recorder':>9} {'libunwind':>9} | {'per op':>6} "
          f"{'per launch':>10} {'per call':>8} | {'simulator +':>11} {'torch threads +':>15}")
    for label, shim, _settings in CALLGRIND_CONFIGURATIONS:
        if not shim:
            continue
        objects, threads = figures[(model_name, label)]
        own = own_columns(objects)
        total = sum(own.values())
        simulator = (sum(v for k, v in objects.items() if k.startswith(SIMULATOR)) -
                     sum(v for k, v in bare.items() if k.startswith(SIMULATOR))) / launches
        host = (host_total(threads) - bare_host) / bare_host
        print(f"  {label:<27} {total:>10,.0f} {own['stub']:>6,.0f} {own['recorder']:>9,.0f} {own['libunwind']:>9,.0f} "
              f"| {per(total, ops, 6)} {total / launches:>10,.0f} {total / calls:>8,.0f} | {simulator:>+11,.0f} "
              f"{host:>+15.1%}")
    defaults_host = host_total(figures[(model_name, "defaults")][1])
    for label, _shim, settings in CALLGRIND_CONFIGURATIONS:
        if "FIRSTASSERT_VALUES" in settings:
            added = host_total(figures[(model_name, label)][1]) - defaults_host
            print(f"  {label}: {per(added, ops, form='+,.0f')} instructions per aten op on the torch threads over the "
                  f"defaults "
                  f"({added / defaults_host:+.1%} a step)")
    print(f"  per op: per aten op on the GPU; per call: per top-level CUDA call; simulator +: what libcuda, libcudart "
          f"and libcupti run on the shim's behalf, a launch; torch threads +: the instructions of the threads running "
          f"torch (main, autograd; bare: {bare_host:,.0f} a step) added under the shim (a bare step is "
          f"{sum(bare.values()):,.0f} on all threads, the simulated device's GEMMs, computed on the CPU, included)")


def orchestrate(args):
    import platform

    started = time.monotonic()
    models = [m for m in args.models.split(",") if m]
    kernel_us = [int(v) for v in args.kernel_us.split(",") if v]
    print(f"torch-bench: real PyTorch on the simulated GPU; {platform.machine()}, {os.cpu_count()} cores; "
          f"python {platform.python_version()}")
    summaries = {}
    for model_name in models:
        counted = run_worker(model_name, "count", args.count_steps)
        summaries[model_name] = summarize_calls(counted)
        print_calls(model_name, summaries[model_name])
        sys.stdout.flush()
    for model_name in models:
        launches = summaries[model_name]["launches"] / summaries[model_name]["steps"]
        print(f"\n{model_name}: launches in flight ({args.inflight_steps} steps after {WARMUP_STEPS} warm-up, "
              f"{launches:.0f} launches a step; CUPTI activity records)")
        for us in kernel_us:
            result = run_worker(model_name, "inflight", args.inflight_steps, {"SIMCUDA_KERNEL_US": str(us)})
            print_inflight(us, result)
            sys.stdout.flush()
    print(f"\n(counting and in-flight runs: {time.monotonic() - started:.0f} s)")
    args.valgrind = shutil.which("valgrind")
    callgrind_models = [m for m in args.callgrind_models.split(",") if m]
    if args.callgrind_steps == 0 or not callgrind_models:
        print("\ninstructions: skipped (--callgrind-steps 0)")
    elif args.valgrind is None or not args.toggle:
        print("\ninstructions: skipped (no valgrind on PATH, or no --toggle library; scripts/torch-bench gives both)")
    else:
        begun = time.monotonic()
        for model_name in callgrind_models:
            if model_name not in summaries:
                summaries[model_name] = summarize_calls(run_worker(model_name, "count", args.count_steps))
        figures = callgrind_figures(args, callgrind_models)
        for model_name in callgrind_models:
            print_callgrind(model_name, figures, summaries[model_name], args.callgrind_steps)
        print(f"\n(callgrind: {len(CALLGRIND_CONFIGURATIONS) * len(callgrind_models)} runs, two at a time: "
              f"{time.monotonic() - begun:.0f} s)")
    print(f"\ntorch-bench: {time.monotonic() - started:.0f} s in all")
    return 0


def main():
    global WARMUP_STEPS
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        model_name, mode, steps, warmup = sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        print(json.dumps(WORKER_MODES[mode](model_name, steps, warmup)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shim", required=True, help="path to libfirstassert.so")
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated: mlp, token, mlp-compiled (default all)")
    parser.add_argument("--warmup", type=int, default=WARMUP_STEPS,
                        help=f"steps every run makes before it measures (default {WARMUP_STEPS})")
    parser.add_argument("--count-steps", type=int, default=10, help="steps whose calls are counted (default 10)")
    parser.add_argument("--inflight-steps", type=int, default=20, help="steps of the in-flight runs (default 20)")
    parser.add_argument("--kernel-us", default="0,10,100,1000",
                        help="SIMCUDA_KERNEL_US values of the in-flight runs (default 0,10,100,1000)")
    parser.add_argument("--callgrind-models", default="mlp,token", help="models counted under callgrind")
    parser.add_argument("--callgrind-steps", type=int, default=20,
                        help="measured steps of the callgrind runs (default 20; 0: no instruction counts)")
    parser.add_argument("--callgrind-timeout", type=int, default=480, help="seconds a callgrind run may take")
    parser.add_argument("--toggle", help="the compiled callgrind_toggle.c (scripts/torch-bench builds it)")
    parser.add_argument("--values-site", required=True,
                        help="the directory of firstassert's sitecustomize.py (build/python/firstassert/values/_site)")
    args = parser.parse_args()
    for value in (args.count_steps, args.inflight_steps):
        if value < 1:
            parser.error("--count-steps and --inflight-steps must be positive")
    if not os.path.isfile(args.shim):
        parser.error(f"no such file: {args.shim}")
    if args.warmup < 0:
        parser.error("--warmup must not be negative")
    for model_name in (args.models + "," + args.callgrind_models).split(","):
        if model_name and model_name not in MODELS:
            parser.error(f"unknown model '{model_name}' ({', '.join(MODELS)})")
    WARMUP_STEPS = args.warmup
    try:
        return orchestrate(args)
    except (RuntimeError, subprocess.TimeoutExpired) as failure:
        print(f"torch-bench: FAILED: {failure}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
