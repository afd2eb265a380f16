"""Runs a callback once a module has been imported, without importing it: a job that never imports torch pays
nothing for checks it would never use.

Standard library only, and its cheapest part: firstassert's sitecustomize loads this file by its path at interpreter
start, before any of firstassert is imported. So no importlib.abc base classes (they import importlib.resources,
tempfile, typing: tens of milliseconds) and importlib.util only once the module is being imported.
"""

import sys


class _AfterImport:
    """First on sys.meta_path: hands out the module's real spec with a loader that calls back after executing it."""

    def __init__(self, name, callback):
        self.name, self.callback, self.finding = name, callback, False

    def find_spec(self, fullname, path=None, target=None):
        if fullname != self.name or self.finding:
            return None
        import importlib.util

        self.finding = True  # the search below goes through sys.meta_path, this finder included
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self.finding = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _CallingBack(spec.loader, self)
        return spec


class _CallingBack:
    def __init__(self, loader, finder):
        self.loader, self.finder = loader, finder

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        # The module keeps its own loader (importlib.resources and friends read it).
        module.__loader__ = self.loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        if self.finder in sys.meta_path:
            sys.meta_path.remove(self.finder)
        self.finder.callback(module)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def when_imported(name, callback):
    """callback(module) once `name` is imported: now if it already is, else right after its import completes."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    sys.meta_path.insert(0, _AfterImport(name, callback))
