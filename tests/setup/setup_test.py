#!/usr/bin/env python3
"""Test: the set-up's own pieces (suite: setup). scripts/lib/progress.py driven by a stand-in for ninja that prints
as ninja does, on a pseudo-terminal and into a pipe; scripts/lib/setup.sh's choice of Meson (FIRSTASSERT_MESON,
FIRSTASSERT_TOOLS_DIR) among stand-in meson programs this test writes, so nothing depends on what is installed.

usage: setup_test.py
"""
import os
import pty
import select
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROGRESS = os.path.join(REPO, "scripts", "lib", "progress.py")
SETUP = os.path.join(REPO, "scripts", "lib", "setup.sh")
sys.path.insert(0, os.path.join(REPO, "tests", "support"))

import skip_aware  # noqa: E402

# Prints as ninja does outside a terminal: NINJA_STATUS before each finished step's description, a failing
# command's output in between; `fail` makes step 3 fail, `idle` has nothing to do.
FAKE_NINJA = textwrap.dedent("""\
    import os, sys
    status = os.environ.get("NINJA_STATUS", "[%f/%t] ")
    what = sys.argv[1]
    if what == "idle":
        print("ninja: no work to do.")
        sys.exit(0)
    total = 40
    for done in range(1, total + 1):
        print(status.replace("%f", str(done)).replace("%t", str(total)) + f"Compiling C++ object step{done}.o")
        if what == "fail" and done == 3:
            print("FAILED: step3.o")
            print("step3.cpp:7:1: error: expected ';' before '}' token")
            sys.exit(1)
    """)


def run_in_pipe(*command):
    return subprocess.run([sys.executable, PROGRESS, *command], capture_output=True, text=True, timeout=60)


def run_on_terminal(*command):
    """(exit status, what was written on the terminal) with stderr a pseudo-terminal."""
    leader, follower = pty.openpty()
    child = subprocess.Popen([sys.executable, PROGRESS, *command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=follower, env=dict(os.environ, TERM="xterm"))
    os.close(follower)
    shown = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed with the child
            break
        if not chunk:
            break
        shown += chunk
    status = child.wait(timeout=30)
    child.stdout.close()
    os.close(leader)
    return status, shown.decode()


class Progress(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="setup-test-")
        cls.ninja = os.path.join(cls.dir, "fake_ninja.py")
        with open(cls.ninja, "w") as f:
            f.write(FAKE_NINJA)

    def build(self, what):
        return ["building build", "--", sys.executable, self.ninja, what]

    def test_a_log_gets_a_plain_line_per_tenth_of_the_build(self):
        done = run_in_pipe(*self.build("ok"))
        self.assertEqual(done.returncode, 0)
        self.assertEqual(done.stdout, "")
        lines = done.stderr.splitlines()
        self.assertEqual(lines[0], "firstassert setup: building build: 1 of 40")
        self.assertEqual(lines[-1], "firstassert setup: building build: 40 of 40")
        self.assertEqual(len(lines), 11, done.stderr)  # the first step, then each tenth
        self.assertNotIn("\r", done.stderr)
        self.assertNotIn("Compiling", done.stderr, "a log gets counts, not each step")

    def test_a_terminal_gets_one_line_rewritten_in_place(self):
        status, shown = run_on_terminal(*self.build("ok"))
        self.assertEqual(status, 0)
        self.assertIn("\r\x1b[K", shown)
        self.assertIn("building build: 40 of 40 (Compiling C++ object step40.o)", shown)
        # What stays on the screen once it is done: one closing line.
        lines = [part for part in shown.replace("\r\n", "\n").split("\n") if part]
        self.assertEqual(len(lines), 1, repr(shown))
        self.assertRegex(lines[0].split("\r\x1b[K")[-1], r"^firstassert setup: building build: 40 steps done in \d+ s$")

    def both_ways(self, what):
        """(where, exit status, what was shown on stderr) of a build run into a pipe, then on a terminal."""
        piped = run_in_pipe(*self.build(what))
        yield "pipe", piped.returncode, piped.stderr
        yield ("terminal",) + run_on_terminal(*self.build(what))

    def test_a_failure_shows_the_commands_output_and_its_status(self):
        for where, status, said in self.both_ways("fail"):
            with self.subTest(where=where):
                self.assertEqual(status, 1)
                self.assertIn("FAILED: step3.o\n", said.replace("\r\n", "\n"))
                self.assertIn("step3.cpp:7:1: error: expected ';' before '}' token", said)
                self.assertIn("firstassert setup: building build failed (exit status 1; the output above is python", said)

    def test_nothing_to_do_is_quiet(self):
        for where, status, said in self.both_ways("idle"):
            with self.subTest(where=where):
                self.assertEqual(status, 0)
                self.assertEqual(said.replace("\r\x1b[K", ""), "")

    def test_another_command_is_quiet_in_a_log_and_shows_its_last_line_on_a_terminal(self):
        # Its output is shown once it has run for a second (progress.QUIET_FOR).
        command = ["installing", "--", sys.executable, "-c", "import time; time.sleep(1.2); print('Collecting meson', "
                   "flush=True); time.sleep(0.3); print('Installing meson', flush=True); time.sleep(0.3)"]
        done = run_in_pipe(*command)
        self.assertEqual((done.returncode, done.stderr), (0, ""))
        status, shown = run_on_terminal(*command)
        self.assertEqual(status, 0)
        self.assertIn("firstassert setup: installing: Installing meson", shown)
        self.assertTrue(shown.endswith("\r\x1b[K"), repr(shown))  # nothing left on the screen

    def test_a_command_that_cannot_start_is_one_line_and_127(self):
        done = run_in_pipe("building build", "--", os.path.join(self.dir, "no-such-program"))
        self.assertEqual(done.returncode, 127)
        self.assertEqual(len(done.stderr.splitlines()), 1, done.stderr)
        self.assertIn("building build failed: cannot run", done.stderr)


class MesonChoice(unittest.TestCase):
    """Which meson scripts/lib/setup.sh takes: among stand-ins this test writes, whatever the machine has."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="setup-meson-")
        root = self.dir.name
        self.on_path = os.path.join(root, "bin", "meson")
        self.own = os.path.join(root, "tools", "venv", "bin", "meson")
        self.old = os.path.join(root, "old", "meson")

    def tearDown(self):
        self.dir.cleanup()

    def fake(self, path, version):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(f"#!/bin/sh\necho {version}\n")
        os.chmod(path, 0o755)

    def choose(self, choice=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")}
        env.update(PATH=os.path.dirname(self.on_path) + ":/usr/bin:/bin",
                   FIRSTASSERT_TOOLS_DIR=os.path.join(self.dir.name, "tools"))
        if choice is not None:
            env["FIRSTASSERT_MESON"] = choice
        script = f'source "{SETUP}"; if find_meson; then echo "$meson_cmd"; else echo none; fi'
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout.strip()

    def test_auto_takes_path_first_then_the_own_one(self):
        self.fake(self.on_path, "1.4.0")
        self.fake(self.own, "1.12.1")
        self.assertEqual(self.choose(), "meson")
        self.assertEqual(self.choose("auto"), "meson")
        self.fake(self.on_path, "1.0.1")  # Debian 12's: too old for meson.options
        self.assertEqual(self.choose(), self.own)

    def test_own_ignores_the_meson_on_path(self):
        self.fake(self.on_path, "1.4.0")
        self.assertEqual(self.choose("own"), "none", "nothing installed yet: ensure_meson installs it")
        self.fake(self.own, "1.12.1")
        self.assertEqual(self.choose("own"), self.own)

    def test_a_named_meson_must_be_new_enough(self):
        self.fake(self.old, "1.0.1")
        self.assertEqual(self.choose(self.old), "none")
        self.fake(self.old, "1.3.0")
        self.assertEqual(self.choose(self.old), self.old)

    def test_a_named_meson_too_old_is_one_line_and_status_2(self):
        self.fake(self.old, "1.0.1")
        env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")}
        env.update(FIRSTASSERT_MESON=self.old, FIRSTASSERT_TOOLS_DIR=os.path.join(self.dir.name, "tools"))
        done = subprocess.run(["bash", "-c", f'source "{SETUP}"; ensure_meson'], capture_output=True, text=True,
                              env=env, timeout=60)
        self.assertEqual(done.returncode, 2)
        self.assertEqual(done.stderr, f"firstassert setup: FIRSTASSERT_MESON={self.old} is not a meson >= 1.3 "
                                      "(it says: 1.0.1)\n")


class Help(unittest.TestCase):
    """Every script with -h or --help (scripts/lib/help.sh): its usage, and nothing installed or built."""

    SCRIPTS = ("test", "fuzz", "bench", "demo", "wheel", "check-wheel", "gpu-check", "gpu-session", "gpu-bench",
               "simtorch", "torch-bench")

    def test_help_prints_the_usage_and_builds_nothing(self):
        for script in self.SCRIPTS:
            path = os.path.join(REPO, "scripts", script)
            with open(path) as f:
                header = f.read().split("\n")[1]  # the header comment's first line, which the usage begins with
            for args in (["--help"], ["-h"]) + ((["--suite", "unit", "--help"],) if script == "test" else ()):
                with self.subTest(script=script, args=args), tempfile.TemporaryDirectory() as scratch:
                    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_")}
                    env.update(FIRSTASSERT_BUILD_DIR=os.path.join(scratch, "build"),
                               FIRSTASSERT_TOOLS_DIR=os.path.join(scratch, "tools"), FIRSTASSERT_MESON="own")
                    done = subprocess.run([path, *args], capture_output=True, text=True, env=env, timeout=60)
                    self.assertEqual((done.returncode, done.stderr), (0, ""))
                    self.assertEqual(done.stdout.split("\n")[0], header.lstrip("# "))
                    self.assertIn(f"usage: scripts/{script}", done.stdout)
                    self.assertEqual(os.listdir(scratch), [], "nothing installed or built")

if __name__ == "__main__":
    skip_aware.main(sys.argv[1:])
