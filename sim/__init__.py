"""sniff: a compiled Monte Carlo simulator for the domino game American Sniff.

``sim.simulate(...)`` plays games and returns their tables; ``sim.load(path)`` opens a run
folder written by ``sniff simulate``. Both are imported on first use, so ``import sim``
stays cheap (no numba, numpy or pyarrow); ``SniffError`` is the one-line error they raise
for bad input.

The modules live in sub-packages that follow docs/design.md (``sim.core``, ``sim.run``, …);
each package lists its public names and modules in ``__all__`` (the rule is in
docs/design.md, "Public names").
"""

from sim.errors import SniffError
from sim.version import __version__ as __version__

__all__ = [
    "SniffError", "load", "simulate",
    # the sub-packages and modules, bottom first (docs/design.md)
    "errors", "version", "files", "cache", "children", "reference", "core", "stats", "display",
    "kernels", "env", "checks", "store", "cluster", "run", "audit", "hint", "table", "openings",
    "analyze", "report", "compare", "tune", "learn", "tournament", "precompile", "serve", "cli",
]


def __getattr__(name: str):
    if name == "simulate":
        from sim.run.simulation import simulate

        return simulate
    if name == "load":
        from sim.store.io import load

        return load
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
