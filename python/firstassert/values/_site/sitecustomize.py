"""firstassert's sitecustomize: the model's lines of compiled kernels and values checks in a Python job without a
change to its code.

`firstassert run` puts this file's directory first on the job's PYTHONPATH (and `--values=MODE` sets
FIRSTASSERT_VALUES), so every Python the job starts (torchrun's workers too) runs this at start-up. It only asks to
be called back once Inductor's modules are imported, to keep each compiled graph's node stack traces beside its
generated code (firstassert/compiled_nodes.py), and, with a values mode, once torch is imported: then it imports the
firstassert package this file belongs to, which reads FIRSTASSERT_VALUES and installs the checks. A job that never
imports them pays for nothing else. Then it runs the sitecustomize the job would have run without it, if any, as
`sitecustomize`.

Not reached by `python -S`, `-I` or `-E` (no site, or no PYTHONPATH).
"""

import importlib.machinery
import os
import sys

# Nothing heavier than importlib.machinery here: every Python the job starts runs this (importlib.util alone would
# add milliseconds to each start).


# .../firstassert: this file is firstassert/values/_site/sitecustomize.py.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _module(spec):
    """A module for spec, as importlib.util.module_from_spec makes it."""
    module = spec.loader.create_module(spec) if hasattr(spec.loader, "create_module") else None
    if module is None:
        module = type(sys)(spec.name)
    module.__spec__, module.__loader__ = spec, spec.loader
    if spec.origin and spec.has_location:
        module.__file__ = spec.origin
    if spec.submodule_search_locations is not None:
        module.__path__ = spec.submodule_search_locations
    return module


def _firstassert_values():
    mode = os.environ.get("FIRSTASSERT_VALUES", "").strip().lower()
    if mode in ("", "off"):
        return
    hook = _load("_firstassert_values_hook", os.path.join(_PACKAGE, "values", "_hook.py"))
    hook.when_imported("torch", lambda torch: _import_firstassert(os.path.dirname(_PACKAGE)))


def _compiled_nodes():
    """Keeps the model's lines of torch.compile graphs beside their generated code (firstassert/compiled_nodes.py)."""
    hook = _load("_firstassert_values_hook", os.path.join(_PACKAGE, "values", "_hook.py"))
    nodes = _load("_firstassert_compiled_nodes", os.path.join(_PACKAGE, "compiled_nodes.py"))
    nodes.install(hook.when_imported)


def _load(name, path):
    """The module of the file at path, executed once (sys.modules keeps it for a second caller)."""
    if name in sys.modules:
        return sys.modules[name]
    loader = importlib.machinery.SourceFileLoader(name, path)
    spec = importlib.machinery.ModuleSpec(name, loader, origin=path)
    spec.has_location = True
    module = _module(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


def _import_firstassert(root):
    """Imports the firstassert package under root (this installation's), which turns the checks on."""
    if "firstassert" in sys.modules:
        return  # imported earlier, it read FIRSTASSERT_VALUES then and waits for torch itself
    sys.path.insert(0, root)
    try:
        import firstassert  # noqa: F401
    except Exception as error:  # never break the job's `import torch`
        sys.stderr.write("firstassert: values checks are off: cannot import firstassert from %s: %s: %s\n" % (
            root, type(error).__name__, error))
    finally:
        sys.path.remove(root)


def _chain():
    """Runs the job's own sitecustomize (the next one on sys.path), as `sitecustomize`."""
    here = os.path.realpath(os.path.dirname(os.path.abspath(__file__)))
    rest = [entry for entry in sys.path if os.path.realpath(entry or os.getcwd()) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = _module(spec)
    sys.modules["sitecustomize"] = module  # what `import sitecustomize` gives from now on, as set before it runs
    spec.loader.exec_module(module)


try:
    _firstassert_values()
except Exception as _error:  # the job runs whatever happens here
    sys.stderr.write("firstassert: values checks are off: %s: %s\n" % (type(_error).__name__, _error))
try:
    _compiled_nodes()
except Exception as _error:
    sys.stderr.write("firstassert: the model's lines of compiled kernels are not kept: %s: %s\n" % (
        type(_error).__name__, _error))
_chain()
