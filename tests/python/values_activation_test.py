"""How values checks come to be on (firstassert.values' activation), without PyTorch: FIRSTASSERT_VALUES read when
firstassert is imported, nothing done before torch is imported, bad modes as one line, a torch too old for the checks
as one line (a stand-in torch package here), the post-import hook, the sitecustomize `firstassert run --values` puts
first on PYTHONPATH and its chaining to the job's own, enable(values=...) and `%firstassert values`.

usage: values_activation_test.py PYTHON_PACKAGE_ROOT [unittest arguments]
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

PACKAGE_ROOT = os.path.abspath(sys.argv[1])
del sys.argv[1]
SITE = os.path.join(PACKAGE_ROOT, "firstassert", "values", "_site")


def python(code, env_extra=None, path=()):
    """Runs code in a fresh python3; returns (status, stdout, stderr)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FIRSTASSERT_") and k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(list(path))
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=60)
    return done.returncode, done.stdout, done.stderr


class StandIns:
    """A directory with a stand-in `torch` (an old one: no TorchDispatchMode) and a job's own sitecustomize."""

    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        self.torch_dir = os.path.join(self.dir.name, "old_torch")
        os.makedirs(os.path.join(self.torch_dir, "torch"))
        with open(os.path.join(self.torch_dir, "torch", "__init__.py"), "w") as f:
            f.write("__version__ = '1.9.0'\n")
        self.own_site = os.path.join(self.dir.name, "own_site")
        os.makedirs(self.own_site)
        with open(os.path.join(self.own_site, "sitecustomize.py"), "w") as f:
            f.write("import os\nos.environ['OWN_SITECUSTOMIZE'] = 'ran'\n")

    def close(self):
        self.dir.cleanup()


class Activation(unittest.TestCase):
    def setUp(self):
        self.stand_ins = StandIns()

    def tearDown(self):
        self.stand_ins.close()

    def test_unset_does_nothing(self):
        # Importing firstassert only waits for Inductor's modules (compiled_nodes.py), and imports no torch.
        status, out, err = python("""
            import sys
            before = list(sys.meta_path)
            import firstassert
            added = [f for f in sys.meta_path if f not in before]
            print(firstassert.values.mode(), sorted((type(f).__name__, f.name) for f in added), 'torch' in sys.modules)
            """, path=[PACKAGE_ROOT])
        waiting = [("_AfterImport", "torch._inductor." + name) for name in ("compile_fx", "graph", "output_code")]
        self.assertEqual((status, out, err), (0, "off %r False\n" % (waiting,), ""))

    def test_check_waits_for_torch_and_never_imports_it(self):
        status, out, err = python("""
            import sys
            import firstassert
            print(firstassert.values.mode(), 'torch' in sys.modules,
                  any(type(f).__name__ == '_AfterImport' for f in sys.meta_path))
            """, {"FIRSTASSERT_VALUES": "check"}, path=[PACKAGE_ROOT])
        self.assertEqual((status, out, err), (0, "check False True\n", ""))

    def test_a_torch_without_what_the_checks_need_is_one_line_not_a_crash(self):
        status, out, err = python("""
            import firstassert
            import torch
            print(torch.__version__, firstassert.values.mode())
            """, {"FIRSTASSERT_VALUES": "check"}, path=[PACKAGE_ROOT, self.stand_ins.torch_dir])
        self.assertEqual(status, 0, err)
        self.assertEqual(out, "1.9.0 off\n")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn("firstassert: values checks need torch 2.0 or newer", err)
        self.assertIn("this torch is 1.9.0", err)

    def test_bad_modes_are_one_line_and_off(self):
        for value, says in (("chek", "is not a values mode"), ("probes", "is not a values mode")):
            with self.subTest(value):
                status, out, err = python("import firstassert; print(firstassert.values.mode())",
                                          {"FIRSTASSERT_VALUES": value}, path=[PACKAGE_ROOT])
                self.assertEqual((status, out), (0, "off\n"))
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn("firstassert: FIRSTASSERT_VALUES=%s: %r is" % (value, value), err)
                self.assertIn(says, err)
                self.assertIn("(modes: off, check, probe); values checks are off", err)

    def test_enable_and_the_magic_set_the_mode(self):
        status, out, err = python("""
            import firstassert
            from firstassert import notebook
            firstassert.enable(values="check", lib="/nonexistent/libfirstassert.so")
            print(firstassert.values.mode())
            notebook.magic("values off")
            notebook.magic("values")
            notebook.magic("values chek")
            """, path=[PACKAGE_ROOT])
        self.assertEqual(status, 0, err)
        self.assertEqual(out.splitlines(), ["check"] + ["firstassert: values off (%firstassert values check, or "
                                                        "probe, turns them on)"] * 3)
        self.assertIn("%firstassert values chek: 'chek' is not a values mode", err)

    def test_the_hook_calls_back_after_the_import_and_leaves_the_module_its_loader(self):
        status, out, err = python("""
            import sys
            from firstassert.values import _hook
            seen = []
            _hook.when_imported("colorsys", lambda module: seen.append(module.__name__))
            print(seen)
            import colorsys
            print(seen, type(colorsys.__loader__).__name__, colorsys.__spec__.loader is colorsys.__loader__,
                  any(type(f).__name__ == '_AfterImport' and f.name == 'colorsys' for f in sys.meta_path))
            _hook.when_imported("colorsys", lambda module: seen.append("again"))
            print(seen)
            """, path=[PACKAGE_ROOT])
        self.assertEqual(status, 0, err)
        self.assertEqual(out.splitlines(), ["[]", "['colorsys'] SourceFileLoader True False", "['colorsys', 'again']"])


class SiteCustomize(unittest.TestCase):
    """The sitecustomize `firstassert run --values=MODE` puts first on the job's PYTHONPATH."""

    def setUp(self):
        self.stand_ins = StandIns()

    def tearDown(self):
        self.stand_ins.close()

    def test_it_imports_firstassert_only_once_torch_is_and_runs_the_jobs_own_sitecustomize(self):
        status, out, err = python("""
            import os, sys, sitecustomize
            print(os.environ.get('OWN_SITECUSTOMIZE'), sitecustomize.__file__.endswith('own_site/sitecustomize.py'))
            print('firstassert' in sys.modules)
            import torch
            print('firstassert' in sys.modules, os.path.realpath(sys.modules['firstassert'].__file__))
            """, {"FIRSTASSERT_VALUES": "check"}, path=[SITE, self.stand_ins.own_site, self.stand_ins.torch_dir])
        self.assertEqual(status, 0, err)
        self.assertEqual(out.splitlines(), [
            "ran True", "False",
            "True " + os.path.realpath(os.path.join(PACKAGE_ROOT, "firstassert", "__init__.py"))])
        self.assertIn("values checks need torch 2.0 or newer", err, "the stand-in torch is too old: one line")
        self.assertEqual(len(err.splitlines()), 1, err)

    def test_off_or_unset_it_only_runs_the_jobs_own(self):
        for env in ({}, {"FIRSTASSERT_VALUES": "off"}):
            with self.subTest(env):
                status, out, err = python("""
                    import os, sys
                    import torch
                    print(os.environ.get('OWN_SITECUSTOMIZE'), 'firstassert' in sys.modules)
                    """, env, path=[SITE, self.stand_ins.own_site, self.stand_ins.torch_dir])
                self.assertEqual((status, out, err), (0, "ran False\n", ""))

    def test_without_a_sitecustomize_of_the_jobs_own(self):
        # The job's own is then the Python installation's, where it has one (Debian's python3 does, from
        # /etc/python3.X): ours runs, then chains to that one as to any other; where it has none, ours stays.
        status, installation_own, err = python(
            "import sys; m = sys.modules.get('sitecustomize'); print(m.__file__ if m else '')")
        self.assertEqual(status, 0, err)
        expected = installation_own.strip() or os.path.join(SITE, "sitecustomize.py")
        status, out, err = python("""
            import sys
            print(sys.modules['sitecustomize'].__file__)
            print(any(type(f).__name__ == '_AfterImport' for f in sys.meta_path))
            """, {"FIRSTASSERT_VALUES": "check"}, path=[SITE])
        self.assertEqual((status, err), (0, ""))
        module_file, hooked = out.splitlines()
        self.assertEqual(os.path.realpath(module_file), os.path.realpath(expected))
        self.assertEqual(hooked, "True", "firstassert's sitecustomize ran: the torch import hook is in place")

    def test_an_error_in_the_jobs_own_sitecustomize_is_reported_as_python_reports_it(self):
        with open(os.path.join(self.stand_ins.own_site, "sitecustomize.py"), "w") as f:
            f.write("raise ValueError('broken on purpose')\n")
        status, out, err = python("print('job ran')", {"FIRSTASSERT_VALUES": "check"},
                                  path=[SITE, self.stand_ins.own_site])
        self.assertEqual((status, out), (0, "job ran\n"))
        self.assertIn("Error in sitecustomize", err)
        self.assertIn("broken on purpose", err)


if __name__ == "__main__":
    unittest.main(verbosity=2)
