"""Instruction counts from callgrind's output files, by object (the shared library or program the code is in).

A callgrind file lists, per function, cost lines: the instructions run in the function itself, and after each
`calls=` line, the inclusive cost of that call (already counted in the callee's own lines). Summing the lines that
do not follow a `calls=` line gives each object's own ("self") instructions; their sum is the file's total, which
callgrind also writes as its `totals:` (and `summary:`) line: recorded_total() reads it, so that a caller can check
this parser against callgrind's own sum. Names are compressed as `(id) name` the first time and `(id)` after that;
`ob=` sets the object of the functions that follow, `fl=`/`fi=`/`fe=`/`fn=` do not change it. `jump=`/`jcnd=`
lines (--collect-jumps=yes) carry no cost of their own.
"""
import glob
import os
import re
import subprocess

_NAME = re.compile(r"\((\d+)\)(?: (.*))?$")
EVENT = "Ir"  # instructions executed


def _resolve(table, value):
    match = _NAME.match(value.strip())
    if not match:
        return value.strip()
    key, name = match.group(1), match.group(2)
    if name is not None:
        table[key] = name
    return table.get(key, f"({key})")


def _number(text):
    return int(text, 16) if text.startswith(("0x", "0X")) else int(text)


def _event_column(header_line, positions):
    """Index in a cost line of the Ir count, given the `events:` line and the number of position fields."""
    events = header_line.split(":", 1)[1].split()
    if EVENT not in events:
        raise ValueError(f"callgrind file without {EVENT} events: {header_line.strip()}")
    return positions + events.index(EVENT)


def self_instructions_by_object(path, functions=False):
    """{object path: instructions run in that object's own code} for one callgrind output file (all its parts);
    with FUNCTIONS, keyed by (object path, function name) instead."""
    objects, names, by_object = {}, {}, {}
    current, function, after_call = "?", "?", False
    positions, column, events_line = 1, 1, None
    with open(path) as f:
        for line in f:
            first = line[:1]
            if first.isdigit() or first in "+-*":
                if after_call:
                    after_call = False
                    continue
                fields = line.split()
                if len(fields) > column:  # a cost line may leave out trailing (zero) counts
                    key = (current, function) if functions else current
                    by_object[key] = by_object.get(key, 0) + _number(fields[column])
            elif line.startswith("positions:"):
                positions = len(line.split()) - 1  # "line", or "instr line" with --dump-instr=yes
                if events_line:
                    column = _event_column(events_line, positions)
            elif line.startswith("events:"):
                events_line = line
                column = _event_column(line, positions)
            elif line.startswith("ob="):
                current = _resolve(objects, line[3:])
            elif line.startswith("fn="):
                function = _resolve(names, line[3:])
            elif line.startswith("calls="):
                after_call = True
            elif line.startswith("cob="):
                _resolve(objects, line[4:])  # a callee's object may be named here first
            elif line.startswith("cfn="):
                _resolve(names, line[4:])
    return by_object


def difference(first, second):
    """{key: second's count - first's} over the keys of either: what a longer run did beyond a shorter one."""
    return {key: second.get(key, 0) - first.get(key, 0) for key in set(first) | set(second)}


def recorded_total(path):
    """The Ir total callgrind wrote for the file: its `totals:` lines (one a part), or where a part has none its
    `summary:` line; None if there is neither."""
    total, found, column, part_total = 0, False, 0, None
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                if part_total is not None:
                    total, found = total + part_total, True
                column, part_total = _event_column(line, 0), None
            elif line.startswith(("summary:", "totals:")):
                fields = line.split(":", 1)[1].split()
                value = _number(fields[column]) if len(fields) > column else 0
                if line.startswith("totals:") or part_total is None:
                    part_total = value  # a part's totals: (at its end) overrides its summary: (in its header)
    if part_total is not None:
        total, found = total + part_total, True
    return total if found else None


def run(valgrind, command, env, out_prefix, options=(), timeout=None):
    """Runs COMMAND under callgrind (with extra OPTIONS), one output file per thread. Returns (completed process,
    {thread number: path}); subprocess.TimeoutExpired past TIMEOUT seconds."""
    for stale in glob.glob(glob.escape(out_prefix) + "*"):
        os.remove(stale)
    completed = subprocess.run([valgrind, "--tool=callgrind", "--separate-threads=yes",
                                f"--callgrind-out-file={out_prefix}", *options] + command,
                               env=env, capture_output=True, text=True, timeout=timeout)
    files = {}
    for path in glob.glob(glob.escape(out_prefix) + "-*"):
        suffix = path.rsplit("-", 1)[1]
        if suffix.isdigit():
            files[int(suffix)] = path
    return completed, files
