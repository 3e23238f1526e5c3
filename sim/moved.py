"""Old module names served as the modules at their new paths, for one release.

``sim/`` and then ``strategies/`` moved their modules into rooms (docs/design.md); code
written against the flat names (``sim.io``, ``strategies.features``) still imports them, as
the same module objects, with a DeprecationWarning. Each package names its moves and calls
:func:`serve_moved_names` once.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Mapping


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``<package>.<old name>`` as the module at its new path (the same object)."""

    def __init__(self, package: str, moved: Mapping[str, str]):
        self.package, self.moved = package, moved

    def find_spec(self, fullname, path=None, target=None):
        old = fullname.removeprefix(self.package + ".")
        if fullname.startswith(self.package + ".") and old in self.moved:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        new = f"{self.package}.{self.moved[spec.name.removeprefix(self.package + '.')]}"
        warnings.warn(f"{spec.name} is now {new}; the old name goes in the next release",
                      DeprecationWarning, stacklevel=3)
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__  # the import system overwrites __spec__ next
        return module

    def exec_module(self, module):
        module.__spec__ = module.__spec__.loader_state


def serve_moved_names(package: str, moved: Mapping[str, str]) -> None:
    """Let ``package.<old>`` import as ``package.<moved[old]>`` (once per package)."""
    if not any(isinstance(finder, MovedModules) and finder.package == package
               for finder in sys.meta_path):
        sys.meta_path.append(MovedModules(package, moved))
