"""scripts/gpu-check's main() run inside a test, as the gpu-check and torch suites run it on the simulator: its
printing held for the test to read, and what it wrote to --out/summary.json. Needs scripts/lib on sys.path."""
import contextlib
import io
import json
import os

import gpu_check


def run_main(argv, **main_arguments):
    """gpu_check.main(argv, **main_arguments): (its exit status, what it printed on stdout, its summary)."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
        status = gpu_check.main(argv, **main_arguments)
    with open(os.path.join(argv[argv.index("--out") + 1], "summary.json")) as f:
        return status, printed.getvalue(), json.load(f)


def rows_by_case_and_mode(summary):
    """The summary's rows, by (case, mode)."""
    return {(row["case"], row["mode"]): row for row in summary["rows"]}
