"""Which modules register strategies: the built-ins, and plugins named by the user.

A strategy is found by importing the module that registers it. The built-ins are imported on
the first look-up (``available``, ``get``), then the plugins named in ``SNIFF_PLUGINS``; the
CLI's ``--plugin MODULE`` adds one (:func:`load_plugins`; a worker process imports the
modules its task names). A plugin that fails to import is one line naming the module and
where it failed.
"""

from __future__ import annotations

import importlib
import os
import traceback
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from strategies.registry.catalog import _REGISTRY, Strategy, StrategyError

__all__ = [
    "available", "BUILTIN_MODULES", "get", "kept_registry", "load_builtins", "load_plugin",
    "load_plugins", "PLUGINS_ENV"
]

# the modules of the built-in strategies, which load_builtins imports
BUILTIN_MODULES = (
    "strategies.heuristics.random",
    "strategies.heuristics.greedy",
    "strategies.heuristics.heavy",
    "strategies.heuristics.defensive",
    "strategies.heuristics.blocker",
    "strategies.heuristics.partner",
    "strategies.heuristics.weighted",
    "strategies.search.rollout",
    "strategies.search.expert",
    "strategies.learned.player",
    # learned:model=PATH: its spec parser, no compiled code (so in no kernel's code digest)
    "strategies.learned.model_files",
)
PLUGINS_ENV = "SNIFF_PLUGINS"
_builtins_loaded = False


def load_builtins() -> None:
    """Import the built-in strategy modules, then the plugins named in ``SNIFF_PLUGINS``."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
        for module in os.environ.get(PLUGINS_ENV, "").split(","):
            if module.strip():
                load_plugin(module.strip())


def load_plugin(module: str) -> None:
    """Import a module that registers strategies (e.g. ``mypackage.my_strategy``).

    The module must stay importable by that name (installed or on ``PYTHONPATH``): the
    generated kernel imports the strategy from it.
    """
    load_builtins()  # so that a plugin reusing a built-in name is the one refused
    try:
        importlib.import_module(module)
    except StrategyError as error:
        raise StrategyError(f"plugin {module!r}: {error}") from None
    except ModuleNotFoundError as error:
        if error.name is not None and module.startswith(error.name):
            raise StrategyError(
                f"cannot import strategy module {module!r}: {error} (a plugin module must "
                "be importable: install it or put its folder on PYTHONPATH)"
            ) from None
        raise StrategyError(f"plugin {module!r} failed to import: {_one_line(error)}") from None
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM while it imports: the command stops as always
        raise
    except SystemExit as error:  # the plugin's exit, not the command's
        raise StrategyError(f"plugin {module!r} called sys.exit({error.code!r}) while it "
                            "was imported") from None
    except BaseException as error:  # anything a module can raise at import (MemoryError too)
        raise StrategyError(f"plugin {module!r} failed to import: {_one_line(error)}") from None


def _one_line(error: BaseException) -> str:
    """``Type: message`` on one line, with the line of the module that raised it."""
    text = " ".join(str(error).split()) or "(no message)"
    where = ""
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if "importlib" not in f.filename
    ]
    if frames:
        where = f" (at {frames[-1].filename}:{frames[-1].lineno})"
    return f"{type(error).__name__}: {text}{where}"


def load_plugins(modules: Iterable[str]) -> None:
    """Load these plugin modules (``--plugin``), in order.

    Nothing is written to the environment: a Dask worker imports the modules its task names
    (a run's config records each strategy's module: ``sim.run.plan.require_plugins`` with
    ``import_plugins=True``), so a plugin given once reaches every process that plays it.
    """
    for module in modules:
        load_plugin(module.strip())


@contextmanager
def kept_registry() -> Iterator[None]:
    """The catalogue (the built-ins loaded) restored on leaving, the strategies registered
    inside forgotten: for tests and notebooks that load plugins for a while."""
    load_builtins()
    saved = dict(_REGISTRY)
    try:
        yield
    finally:
        _REGISTRY.clear()
        _REGISTRY.update(saved)


def available() -> dict[str, Strategy]:
    """Every registered strategy by name (the built-ins loaded first)."""
    load_builtins()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Strategy:
    """One registered strategy by name, or a StrategyError listing the names."""
    strategies = available()
    if name not in strategies:
        raise StrategyError(
            f"unknown strategy {name!r}; available: {', '.join(strategies)}"
        )
    return strategies[name]
