#!/usr/bin/env python3
"""torch.profiler on the simulator: PyTorch's Kineto drives the simulated libcupti's activity API (activity.cpp), and
the profile must list the kernels the ops launched, on their streams, tied to the ops and runtime calls that launched
them.

Run with the real PyTorch (CUDA 13 build) and the simulator's libraries first on the library path:
  LD_LIBRARY_PATH=BUILD/tests/sim:BUILD/tests/sim/standins PYTHON tests/sim/cupti/torch_profiler_check.py [trace.json]
Exit 0 when every check holds, 1 with the failed checks listed, 77 (skip) when torch or a CUDA device is missing.
"""
import json
import os
import sys
import tempfile


def main():
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError as e:
        print(f'no torch: {e}')
        return 77
    if not torch.cuda.is_available():
        print('torch sees no CUDA device (is the simulator first on LD_LIBRARY_PATH?)')
        return 77

    x = torch.ones(256, 256, device='cuda')
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        y = x * 2
        with torch.cuda.stream(side):
            w = x + 1
        side.synchronize()
        z = (y + w).sum()
        host = z.cpu()  # a device-to-host copy
        torch.cuda.synchronize()

    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    # The op table: each op's kernel, timed.
    averages = prof.key_averages()
    print(averages.table(sort_by='self_device_time_total', row_limit=20))
    by_key = {e.key: e for e in averages}
    for op in ('aten::mul', 'aten::add', 'aten::sum'):
        check(op in by_key and getattr(by_key[op], 'self_device_time_total', 0) > 0,
              f'{op} has no device time (its kernel record was not tied to it)')
    kernel_rows = [e.key for e in averages if 'kernel' in e.key and getattr(e, 'self_device_time_total', 0) > 0]
    check(len(kernel_rows) >= 3, f'expected the ops\' kernels among the rows, found {kernel_rows}')

    # The trace: kernels with their streams and correlation ids, matching the runtime calls that launched them.
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), 'trace.json')
    prof.export_chrome_trace(path)
    with open(path, encoding='utf-8') as f:
        events = json.load(f)['traceEvents']
    kernels = [e for e in events if e.get('cat') == 'kernel']
    runtime = [e for e in events if e.get('cat') == 'cuda_runtime']
    copies = [e for e in events if e.get('cat') == 'gpu_memcpy']
    flows = [e for e in events if e.get('cat') == 'ac2g']
    check(len(kernels) >= 4, f'expected at least 4 kernels in the trace, found {len(kernels)}')
    launch_correlations = {e['args'].get('correlation') for e in runtime if 'LaunchKernel' in e.get('name', '')}
    for k in kernels:
        args = k.get('args', {})
        check(args.get('correlation') in launch_correlations,
              f'kernel {k["name"][:60]} (correlation {args.get("correlation")}) matches no launch call')
        check(k.get('dur', 0) > 0, f'kernel {k["name"][:60]} has no duration')
        check(args.get('External id') is not None, f'kernel {k["name"][:60]} is tied to no op')
    streams = {k.get('args', {}).get('stream') for k in kernels}
    check(len(streams) >= 2, f'expected kernels on two streams, found streams {streams}')
    check(any('DtoH' in c.get('name', '') for c in copies),
          f'expected a DtoH copy, found {[c["name"] for c in copies]}')
    check(len(flows) > 0, 'no CPU-to-GPU flow events')

    print(f'{len(kernels)} kernels on streams {sorted(s for s in streams if s is not None)}, {len(copies)} copies, '
          f'{len(runtime)} runtime calls, {len(flows)} flow events; trace: {path}')
    for f in failures:
        print('FAILED:', f)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
