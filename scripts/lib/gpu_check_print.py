"""What scripts/gpu-check prints on stdout: the table (one row per case and mode), why the failing rows failed, and
the probes' sections."""

COLUMNS = (  # heading, Row attribute, widest it may be
    ("case", "case", 27),  # the longest name of the table's
    ("mode", "mode", 10),
    ("expected culprit", "expected", 50),
    ("reported culprit", "reported", 56),
    ("confidence", "confidence", 10),
    ("Python frame", "python_frame", 24),
    ("secondary", "secondary", 16),
    ("backend", "backend", 9),
    ("result", "verdict", 60),
)


def clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def table(rows):
    cells = [[clip(str(getattr(row, attribute)), limit) for _, attribute, limit in COLUMNS] for row in rows]
    widths = [max([len(heading)] + [len(r[i]) for r in cells]) for i, (heading, _, _) in enumerate(COLUMNS)]

    def line(values):
        return "  ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip()

    return [line([heading for heading, _, _ in COLUMNS]), line(["-" * w for w in widths])] + [line(c) for c in cells]


def failure_notes(rows):
    lines = []
    for row in rows:
        if row.result != "FAIL":
            continue
        lines.append(f"{row.case} / {row.mode}: {row.verdict}")
        lines += [f"    {note}" for note in row.notes]
    return lines


def counts(rows):
    tally = {result: sum(1 for row in rows if row.result == result) for result in ("PASS", "FAIL", "SKIP")}
    return f"{len(rows)} rows: {tally['PASS']} pass, {tally['FAIL']} fail, {tally['SKIP']} skipped"


def section(title, lines):
    return [title] + [f"    {line}" for line in lines]
