"""sniff: a compiled Monte Carlo simulator for the domino game American Sniff.

``sim.simulate(...)`` plays games and returns their tables; ``sim.load(path)`` opens a run
folder written by ``sniff simulate``. Both are imported on first use, so ``import sim``
stays cheap (no numba, numpy or pyarrow).
"""

from sim.version import __version__ as __version__

__all__ = ["load", "simulate"]


def __getattr__(name: str):
    if name == "simulate":
        from sim.simulation import simulate

        return simulate
    if name == "load":
        from sim.io import load

        return load
    raise AttributeError(f"module 'sim' has no attribute {name!r}")
