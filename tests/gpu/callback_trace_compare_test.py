#!/usr/bin/env python3
"""Test: scripts/lib/callback_trace.py, the comparison of two callback traces, on small hand-written traces (stdlib
unittest)."""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "lib", "callback_trace.py")
sys.path.insert(0, os.path.dirname(SCRIPT))

import callback_trace  # noqa: E402


def trace(*rows, dropped=0):
    """rows: (thread, domain, cbid, name, site, depth); the order column is numbered here."""
    lines = [callback_trace.HEADER]
    lines += ["\t".join(str(field) for field in (order, *row)) for order, row in enumerate(rows)]
    lines.append(f"# dropped {dropped}")
    return "\n".join(lines) + "\n"


def launch(thread, runtime_depth=0, driver_depth=1):
    return [(thread, "runtime", 211, "cudaLaunchKernel_v7000", "enter", runtime_depth),
            (thread, "driver", 307, "cuLaunchKernel", "enter", driver_depth),
            (thread, "driver", 307, "cuLaunchKernel", "exit", driver_depth),
            (thread, "runtime", 211, "cudaLaunchKernel_v7000", "exit", runtime_depth)]


def poll(thread):
    return [(thread, "runtime", 5, "cudaStreamQuery_v3020", "enter", 0),
            (thread, "driver", 420, "cuStreamQuery", "enter", 1),
            (thread, "driver", 420, "cuStreamQuery", "exit", 1),
            (thread, "runtime", 5, "cudaStreamQuery_v3020", "exit", 0)]


SYNC = [(1, "runtime", 165, "cudaDeviceSynchronize_v3020", "enter", 0),
        (1, "driver", 17, "cuCtxSynchronize", "enter", 1),
        (1, "synchronize", 2, "-", "context_synchronized", 2),
        (1, "driver", 17, "cuCtxSynchronize", "exit", 1),
        (1, "runtime", 165, "cudaDeviceSynchronize_v3020", "exit", 0)]


def differ(expected, actual):
    return callback_trace.first_difference(callback_trace.parse(expected), callback_trace.parse(actual))


class Comparison(unittest.TestCase):
    def test_equal_sequences_interleaved_differently_and_polled_more_often_are_the_same(self):
        gpu = trace(*launch(1), *launch(2), *poll(1), *poll(1), *poll(1), *SYNC)
        sim = trace(*launch(2), *launch(1), *poll(1), *SYNC)
        self.assertIsNone(differ(gpu, sim))

    def test_the_first_difference_names_the_thread_the_callback_and_both_events(self):
        gpu = trace(*launch(1), *SYNC)
        flat = launch(1, driver_depth=0)  # the driver launch not nested in the runtime's
        self.assertEqual(differ(gpu, trace(*flat, *SYNC)),
                         "thread 1, callback 2: expected cuLaunchKernel enter at depth 1, "
                         "got cuLaunchKernel enter at depth 0")

    def test_a_missing_event_and_a_missing_thread_are_differences(self):
        gpu = trace(*launch(1), *SYNC, *launch(2))
        no_event = [row for row in SYNC if row[1] != "synchronize"]
        self.assertEqual(differ(gpu, trace(*launch(1), *no_event, *launch(2))),
                         "thread 1, callback 7: expected synchronize context_synchronized at depth 2, "
                         "got cuCtxSynchronize exit at depth 1")
        self.assertEqual(differ(gpu, trace(*launch(1), *SYNC)),
                         "thread 2, callback 1: expected cudaLaunchKernel_v7000 enter at depth 0, got the thread's end")

    def test_a_poll_between_other_calls_is_not_left_out(self):
        self.assertEqual(differ(trace(*launch(1), *poll(1), *launch(1)), trace(*launch(1), *launch(1))),
                         "thread 1, callback 5: expected cudaStreamQuery_v3020 enter at depth 0, "
                         "got cudaLaunchKernel_v7000 enter at depth 0")

    def test_a_trace_that_dropped_callbacks_is_not_compared(self):
        self.assertIn("dropped 3 callbacks", differ(trace(*launch(1)), trace(*launch(1), dropped=3)))

    def test_what_is_not_a_trace_is_refused_with_where(self):
        with self.assertRaisesRegex(callback_trace.TraceError, "not a callback trace"):
            callback_trace.parse("hello\n")
        with self.assertRaisesRegex(callback_trace.TraceError, "incomplete"):
            callback_trace.parse(trace(*launch(1)).rsplit("# dropped", 1)[0])
        with self.assertRaisesRegex(callback_trace.TraceError, "trace:2: not 7"):
            callback_trace.parse(callback_trace.HEADER + "\n0\t1\truntime\n# dropped 0\n")


class CommandLine(unittest.TestCase):
    def run_script(self, expected, actual):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, text in (("expected", expected), ("actual", actual)):
                paths.append(os.path.join(tmp, name + ".trace"))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    f.write(text)
            return subprocess.run([sys.executable, SCRIPT, *paths], capture_output=True, text=True, timeout=30)

    def test_same_is_0_different_is_1_with_the_difference_unreadable_is_2(self):
        same = self.run_script(trace(*launch(1)), trace(*launch(1)))
        self.assertEqual((same.returncode, same.stdout), (0, ""))
        different = self.run_script(trace(*launch(1)), trace(*launch(1, driver_depth=0)))
        self.assertEqual(different.returncode, 1)
        self.assertTrue(different.stdout.startswith("thread 1, callback 2: "), different.stdout)
        unreadable = self.run_script("nothing\n", trace(*launch(1)))
        self.assertEqual(unreadable.returncode, 2)
        self.assertIn("not a callback trace", unreadable.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
