"""The engine as an environment for the field's libraries: PettingZoo, Gymnasium, OpenSpiel.

Every interface stands on ``sim.kernels.batch.GameBatch`` (the game pauses at an outside
seat's decision) and shows a seat only its public view, encoded by ``sim.env.encoding``.
The libraries are optional extras (``pip install 'sniff[env]'``, ``'sniff[openspiel]'``), so
the classes are imported on first use: ``import sim.env`` needs none of them.

May import: the packages below it (``sim.core`` … ``sim.kernels``).
"""

from __future__ import annotations

import importlib

__all__ = [
    "BLOCKS", "ENCODING_SIZE", "SniffAEC", "SniffEnv", "SniffVectorEnv", "encode", "raw_env",
    "env", "register_openspiel",
    # the modules
    "aec", "encoding", "lineups", "openspiel", "outcome", "single", "vector",
]

_HOMES = {
    "BLOCKS": "sim.env.encoding", "ENCODING_SIZE": "sim.env.encoding",
    "encode": "sim.env.encoding",
    "SniffAEC": "sim.env.aec", "raw_env": "sim.env.aec", "env": "sim.env.aec",
    "SniffEnv": "sim.env.single", "SniffVectorEnv": "sim.env.vector",
    "register_openspiel": "sim.env.openspiel",
}


def __getattr__(name: str):
    """Import an interface's module (and its library) only when it is asked for."""
    if name not in _HOMES:
        raise AttributeError(f"module 'sim.env' has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)
