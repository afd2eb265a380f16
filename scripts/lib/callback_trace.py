"""Reads the traces of tests/gpu/callback_trace.cpp (its format is documented there) and tells the first place where two
of them differ: a trace recorded on a GPU, kept as a fixture, against the simulator's trace of the same program.

usage: callback_trace.py EXPECTED ACTUAL
       exit 0 when they are the same, 1 when they differ (the first difference printed), 2 when one cannot be read

Each thread's sequence of (domain, name, site, depth) is compared on its own, threads paired by their numbers, which
the tracer gives in the order of each thread's first callback. What cannot be compared across machines is left out:
  - the order column across threads: how two threads' callbacks interleave depends on timing;
  - the callback ids: cuptiGetCallbackName's names say the same, and say it in a difference one can read;
  - how many times in a row a program polls (POLLING_CALLS): a query returns cudaErrorNotReady until the device has
    finished, so the number of polls is the device's speed, not the API's behaviour. A run of the same polling call
    (with whatever it calls inside) counts as one.
"""
import dataclasses
import sys

HEADER = "# firstassert callback trace 1"
DROPPED = "# dropped "

# Calls that ask whether work has finished without waiting for it (CUDA Runtime API: cudaStreamQuery, cudaEventQuery;
# Driver API: cuStreamQuery, cuEventQuery), as cuptiGetCallbackName names them.
POLLING_CALLS = frozenset({
    "cudaStreamQuery_v3020", "cudaStreamQuery_ptsz_v7000", "cudaEventQuery_v3020",
    "cuStreamQuery", "cuStreamQuery_ptsz", "cuEventQuery",
})


# The programs of tests/gpu (<name>.cu, built with -cudart shared) whose traces are kept as fixtures,
# tests/gpu/fixtures/callbacks/<name>.trace. probe_cupti is not one: it subscribes to CUPTI itself, and CUPTI before
# 13.3 admits one subscriber per process (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), so under the tracer it
# would not do what it does alone.
TRACED_PROGRAMS = ("probe_breadcrumbs", "probe_graph_breadcrumbs", "nvcc_assert")


class TraceError(ValueError):
    """A file that is not a callback trace."""


@dataclasses.dataclass(frozen=True)
class Event:
    domain: str
    name: str
    site: str
    depth: int

    def __str__(self):
        what = self.name if self.name != "-" else self.domain
        return f"{what} {self.site} at depth {self.depth}"


@dataclasses.dataclass
class Trace:
    threads: dict  # thread number -> [Event], in the thread's own order
    dropped: int


def parse(text, where="trace"):
    lines = text.splitlines()
    if not lines or lines[0] != HEADER:
        raise TraceError(f"{where}: not a callback trace (its first line is not {HEADER!r})")
    if len(lines) < 2 or not lines[-1].startswith(DROPPED):
        raise TraceError(f"{where}: incomplete: no '{DROPPED.strip()}' line at its end")
    threads = {}
    for number, line in enumerate(lines[1:-1], start=2):
        fields = line.split("\t")
        try:
            _, thread, domain, _, name, site, depth = fields
            event = Event(domain, name, site, int(depth))
            threads.setdefault(int(thread), []).append(event)
        except ValueError:
            raise TraceError(f"{where}:{number}: not 7 tab-separated fields with numbers where they belong: "
                             f"{line!r}") from None
    try:
        dropped = int(lines[-1][len(DROPPED):])
    except ValueError:
        raise TraceError(f"{where}: its last line is not a count of dropped callbacks: {lines[-1]!r}") from None
    return Trace(threads, dropped)


def read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return parse(f.read(), path)
    except OSError as error:
        raise TraceError(f"{path}: cannot read ({error.strerror})") from None


def calls(events):
    """The thread's events cut into top-level pieces: each call at its first depth with everything inside it, and
    each event outside any call on its own."""
    pieces, start = [], 0
    while start < len(events):
        first = events[start]
        end = start + 1
        if first.site == "enter":
            while end < len(events) and not (events[end].depth == first.depth and events[end].site == "exit"):
                end += 1
            end = min(end + 1, len(events))
        pieces.append(tuple(events[start:end]))
        start = end
    return pieces


def without_repeated_polls(events):
    """events with each run of identical polling calls kept once (see POLLING_CALLS)."""
    kept = []
    for piece in calls(events):
        if kept and piece == kept[-1] and piece[0].name in POLLING_CALLS:
            continue
        kept.append(piece)
    return [event for piece in kept for event in piece]


def first_difference(expected, actual):
    """None when the traces agree, else one line saying where they first part and how."""
    for label, trace in (("expected", expected), ("actual", actual)):
        if trace.dropped:
            return f"the {label} trace dropped {trace.dropped} callbacks: it cannot be compared in full"
    for thread in sorted(set(expected.threads) | set(actual.threads)):
        want = without_repeated_polls(expected.threads.get(thread, []))
        got = without_repeated_polls(actual.threads.get(thread, []))
        for index, (w, g) in enumerate(zip(want, got)):
            if w != g:
                return f"thread {thread}, callback {index + 1}: expected {w}, got {g}"
        if len(want) != len(got):
            index = min(len(want), len(got))
            if len(want) > len(got):
                return f"thread {thread}, callback {index + 1}: expected {want[index]}, got the thread's end"
            return f"thread {thread}, callback {index + 1}: expected the thread's end, got {got[index]}"
    return None


def main(argv):
    if len(argv) != 3:
        print("usage: callback_trace.py EXPECTED ACTUAL", file=sys.stderr)
        return 2
    try:
        expected, actual = read(argv[1]), read(argv[2])
    except TraceError as error:
        print(error, file=sys.stderr)
        return 2
    difference = first_difference(expected, actual)
    if difference is None:
        return 0
    print(difference)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
