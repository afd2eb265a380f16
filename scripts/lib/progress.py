#!/usr/bin/env python3
"""Runs one long set-up step (apt-get, pip, meson setup, meson compile) and shows that it is moving, without
printing its output unless it fails.

usage: progress.py WHAT -- COMMAND [ARGUMENT...]
  WHAT     what the step does, in the words of the set-up's lines ("building build")
  COMMAND  run with its stdout and stderr captured together

What it shows, on stderr:
  - a build (ninja, as `meson compile` runs it): "WHAT: n of N" with the step being run, on one line rewritten in
    place on a terminal; in a log, a plain line each time another tenth of the steps is done, and the last one. A build
    with nothing to do prints nothing.
  - any other command: on a terminal, once it has run for a second, its latest output line after WHAT, rewritten in
    place, then nothing; in a log, nothing beyond the line the caller printed before.
  - a failure: everything the command printed, then one line saying which step failed.
Exit status: the command's (127 when it cannot be started).
"""
import os
import re
import shutil
import subprocess
import sys
import time

PREFIX = "firstassert setup: "
# ninja prints this before each step's description; %f: steps finished, %t: steps in all.
STATUS_MARK = "@firstassert-step "
STATUS = re.compile(re.escape(STATUS_MARK) + r"(\d+)/(\d+) (.*)")
KEPT_OUTPUT = 4 << 20  # bytes of a failing command's output shown: its end, where the error is
REDRAW_EVERY = 0.1  # seconds between two redraws of the terminal line
QUIET_FOR = 1.0  # seconds a command's own output is not shown: a step that ends sooner (nothing to do) shows nothing


class Display:
    """The one line of progress: redrawn in place on a terminal, plain and sparse in a log."""

    def __init__(self, what, stream):
        self.what = what
        self.stream = stream
        self.terminal = stream.isatty() and os.environ.get("TERM") != "dumb"
        self.drawn = False
        self.last_draw = 0.0
        self.tenths_said = -1  # a log gets its first line at the first step
        self.said_last = False
        self.steps = 0
        self.started = time.monotonic()

    def show_step(self, done, total, description):
        self.steps = max(self.steps, done)
        if self.terminal:
            self.draw(f"{self.what}: {done} of {total} ({description})", force=done == total)
            return
        if done >= total:
            if not self.said_last:
                self.say(f"{self.what}: {done} of {total}")
                self.said_last = True
            return
        tenth = done * 10 // total
        if tenth > self.tenths_said:
            self.say(f"{self.what}: {done} of {total}")
            self.tenths_said = tenth

    def show_output(self, line):
        if self.terminal and line.strip() and time.monotonic() - self.started >= QUIET_FOR:
            self.draw(f"{self.what}: {line.strip()}")

    def draw(self, text, force=False):
        now = time.monotonic()
        if not force and now - self.last_draw < REDRAW_EVERY:
            return
        self.last_draw = now
        width = shutil.get_terminal_size((100, 24)).columns - 1
        line = (PREFIX + text)[:max(width, 20)]
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self.drawn = True

    def clear(self):
        if self.drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.drawn = False

    def say(self, text):
        self.clear()
        self.stream.write(PREFIX + text + "\n")
        self.stream.flush()


def run(what, command, stream=sys.stderr):
    """Runs command, showing its progress on stream; returns its exit status."""
    display = Display(what, stream)
    env = dict(os.environ, NINJA_STATUS=STATUS_MARK + "%f/%t ")
    started = time.monotonic()
    kept = bytearray()
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=env)
    except OSError as error:
        display.say(f"{what} failed: cannot run {command[0]}: {error.strerror}")
        return 127
    try:
        for raw in child.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            step = STATUS.search(line)
            if step:
                display.show_step(int(step.group(1)), int(step.group(2)), step.group(3))
                continue
            kept += raw
            if len(kept) > 2 * KEPT_OUTPUT:
                del kept[:-KEPT_OUTPUT]
            display.show_output(line)
        status = child.wait()
    except KeyboardInterrupt:
        child.terminate()
        child.wait()
        display.clear()
        raise
    display.clear()
    if status != 0:
        stream.write(bytes(kept[-KEPT_OUTPUT:]).decode("utf-8", "replace"))
        display.say(f"{what} failed (exit status {status}; the output above is {os.path.basename(command[0])}'s)")
        return status
    if display.steps and display.terminal:
        display.say(f"{what}: {display.steps} steps done in {time.monotonic() - started:.0f} s")
    return 0


def main(argv):
    if len(argv) < 3 or argv[1] != "--":
        print("usage: progress.py WHAT -- COMMAND [ARGUMENT...]", file=sys.stderr)
        return 2
    try:
        return run(argv[0], argv[2:])
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
