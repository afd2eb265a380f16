#!/usr/bin/env python3
"""scripts/lib/callgrind_counts.py, the parser behind scripts/bench's and scripts/gpu-bench's instruction counts,
against callgrind files written here: compressed names, calls whose inclusive cost must not count as the caller's own,
relative positions, several events, files in several parts."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "lib"))
import callgrind_counts  # noqa: E402

# Two objects; main in the program calls work in the library twice (inclusive 300 each time, which is work's).
ONE_PART = """# callgrind format
version: 1
creator: callgrind-3.19.0
positions: line
events: Ir
summary: 1011

ob=(1) /bin/program
fl=(1) program.c
fn=(1) main
10 5
+2 6
cob=(2) /lib/libwork.so
cfi=(2) work.c
cfn=(2) work
calls=2 20
* 600
-1 0x0

ob=(2)
fl=(2)
fn=(2)
20 400
+1 200

ob=(1)
fl=(1)
fn=(3) helper
30 400

totals: 1011
"""

# Instruction-level positions and a second event before Ir; a part without totals: but with summary:.
TWO_EVENTS = """positions: instr line
events: Dr Ir
ob=(1) /bin/a
fn=(1) f
0x10 3 7 70
+4 * 1 30
calls=1 0x40 9
0x14 3 0 1000
ob=(2) /lib/b.so
fn=(2) g
0x40 9 2 1000
summary: 3 1100
"""


def write(text):
    handle = tempfile.NamedTemporaryFile("w", suffix=".callgrind", delete=False)
    handle.write(text)
    handle.close()
    return handle.name


class CallgrindCounts(unittest.TestCase):
    def test_self_cost_by_object_leaves_out_calls_inclusive_cost(self):
        path = write(ONE_PART)
        try:
            counts = callgrind_counts.self_instructions_by_object(path)
            self.assertEqual(counts, {"/bin/program": 5 + 6 + 0 + 400, "/lib/libwork.so": 600})
            self.assertEqual(sum(counts.values()), callgrind_counts.recorded_total(path))
        finally:
            os.remove(path)

    def test_functions_are_resolved_from_their_compressed_names(self):
        path = write(ONE_PART)
        try:
            counts = callgrind_counts.self_instructions_by_object(path, functions=True)
            self.assertEqual(counts[("/bin/program", "helper")], 400)
            self.assertEqual(counts[("/lib/libwork.so", "work")], 600)
            self.assertEqual(counts[("/bin/program", "main")], 11)
        finally:
            os.remove(path)

    def test_the_ir_column_is_found_among_other_events_and_positions(self):
        path = write(TWO_EVENTS)
        try:
            counts = callgrind_counts.self_instructions_by_object(path)
            self.assertEqual(counts, {"/bin/a": 100, "/lib/b.so": 1000})
            self.assertEqual(callgrind_counts.recorded_total(path), 1100)
        finally:
            os.remove(path)

    def test_parts_add_up(self):
        path = write(ONE_PART + ONE_PART)
        try:
            self.assertEqual(sum(callgrind_counts.self_instructions_by_object(path).values()), 2022)
            self.assertEqual(callgrind_counts.recorded_total(path), 2022)
        finally:
            os.remove(path)

    def test_difference_covers_the_keys_of_either_run(self):
        self.assertEqual(callgrind_counts.difference({"a": 5, "b": 2}, {"a": 9, "c": 4}), {"a": 4, "b": -2, "c": 4})

    def test_a_file_without_ir_is_refused(self):
        path = write("positions: line\nevents: Dr\nob=(1) x\nfn=(1) f\n1 5\n")
        try:
            with self.assertRaises(ValueError):
                callgrind_counts.self_instructions_by_object(path)
        finally:
            os.remove(path)


if __name__ == "__main__":
    unittest.main()
