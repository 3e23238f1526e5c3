"""Child Python processes that never import code from the working folder.

``python -c CODE`` and ``python -m MODULE`` put the current folder first on ``sys.path``: a
``multiprocessing.py`` or ``dask.py`` in the folder a command is started from would run in
every child that imports that name (multiprocessing's spawn and resource tracker start with
``-c``, and so do Dask's local workers). Every Python child of sniff starts with
``PYTHONSAFEPATH=1`` (Python 3.11's ``-P``), which leaves that folder off ``sys.path``; sniff
itself is found where it is installed, or, run from a source tree, through ``PYTHONPATH``.
"""

from __future__ import annotations

import os
import site
from collections.abc import Mapping
from pathlib import Path

__all__ = ["child_env", "protect_children", "ROOT"]

SAFE_PATH = "PYTHONSAFEPATH"
ROOT = str(Path(__file__).resolve().parents[1])  # the folder holding sim/ and strategies/


def _installed() -> bool:
    """Whether ``sim`` lies in a site-packages folder (found there by any child)."""
    sites = [*site.getsitepackages(), site.getusersitepackages()]
    return any(os.path.abspath(s) == ROOT for s in sites)


def _safe_settings(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that keep a child off the working folder and still find sniff."""
    settings = {SAFE_PATH: "1"}
    if not _installed():
        paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        if ROOT not in paths:
            settings["PYTHONPATH"] = os.pathsep.join([ROOT, *paths])
    return settings


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) for a Python child of sniff."""
    env = dict(os.environ if env is None else env)
    env.update(_safe_settings(env))
    return env


def protect_children() -> None:
    """Set :func:`child_env`'s variables in this process's environment, for the children
    that libraries start with it (multiprocessing's spawn and resource tracker, Dask's
    nannies, also when they restart a worker later)."""
    os.environ.update(_safe_settings(os.environ))

