"""The strategy registry: every strategy is a compiled decision function under a name.

A strategy module defines ``choose(observation, moves, n_moves, params, rng) -> int`` as a
numba ``@njit`` function and registers it with :func:`register`:

- ``observation``: int64 array, the deciding player's public view (slots in
  ``sim.observation``); never another hand or the boneyard order.
- ``moves[:n_moves]``: the legal moves, each ``tile * 4 + arm`` (``sim.layout``).
- ``params``: float64 array, the strategy's parameters in the order they were registered.
- ``rng``: one-element uint64 array, the game's strategy random stream (``sim.rng``).
- returns the index in ``moves`` of the chosen move.

The engine never imports this package: ``sim.kernels`` generates, per set of strategies,
a small module whose dispatcher calls these functions, so a strategy defined anywhere
importable runs inside the compiled loop without an edit to ``sim/``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from sim.errors import SniffError

MAX_PARAMS = 8
BUILTIN_MODULES = ("strategies.random", "strategies.greedy")


class StrategyError(SniffError):
    """A strategy name or parameter the registry cannot accept (message is user-facing)."""


@dataclass(frozen=True)
class Strategy:
    name: str
    description: str
    module: str
    attribute: str
    params: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class StrategySpec:
    """A strategy with its parameter values, as one seat plays it."""

    strategy: Strategy
    values: tuple[float, ...]

    @property
    def label(self) -> str:
        changed = [
            f"{key}={value:g}"
            for (key, default), value in zip(self.strategy.params.items(), self.values)
            if value != default
        ]
        return self.strategy.name + (":" + ",".join(changed) if changed else "")


_REGISTRY: dict[str, Strategy] = {}
_builtins_loaded = False


def register(
    name: str, description: str, params: dict[str, float] | None = None
) -> Callable:
    """Decorator for a strategy's jitted ``choose`` function."""
    params = dict(params or {})
    if len(params) > MAX_PARAMS:
        raise StrategyError(f"strategy {name!r} has more than {MAX_PARAMS} parameters")

    def decorate(function):
        python_function = getattr(function, "py_func", function)
        _REGISTRY[name] = Strategy(
            name=name,
            description=description,
            module=python_function.__module__,
            attribute=python_function.__name__,
            params=params,
        )
        return function

    return decorate


def load_builtins() -> None:
    global _builtins_loaded
    if not _builtins_loaded:
        for module in BUILTIN_MODULES:
            importlib.import_module(module)
        _builtins_loaded = True


def load_plugin(module: str) -> None:
    """Import a module that registers strategies (e.g. ``mypackage.my_strategy``)."""
    try:
        importlib.import_module(module)
    except ImportError as error:
        raise StrategyError(f"cannot import strategy module {module!r}: {error}") from None


def available() -> dict[str, Strategy]:
    load_builtins()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Strategy:
    strategies = available()
    if name not in strategies:
        raise StrategyError(
            f"unknown strategy {name!r}; available: {', '.join(strategies)}"
        )
    return strategies[name]


def parse_spec(text: str) -> StrategySpec:
    """``name`` or ``name:key=value,key=value`` into a spec with every parameter filled."""
    name, _, rest = text.strip().partition(":")
    strategy = get(name)
    values = dict(strategy.params)
    if rest:
        for item in rest.split(","):
            key, equals, value = item.partition("=")
            key = key.strip()
            if not equals or key not in values:
                accepted = ", ".join(strategy.params) or "none"
                raise StrategyError(
                    f"bad parameter {item!r} for strategy {name!r}; accepted: {accepted}"
                )
            try:
                values[key] = float(value)
            except ValueError:
                raise StrategyError(
                    f"parameter {key!r} of strategy {name!r} must be a number, got {value!r}"
                ) from None
    return StrategySpec(strategy, tuple(values.values()))


def parse_lineup_text(text: str) -> list[StrategySpec]:
    """``"greedy,weighted:points=1,shed=0.3,random"`` into specs.

    Commas separate strategies and also parameters; a piece with ``=`` and no ``:``
    continues the parameters of the strategy before it.
    """
    pieces: list[str] = []
    for piece in text.split(","):
        piece = piece.strip()
        if "=" in piece and ":" not in piece and pieces:
            pieces[-1] += "," + piece
        elif piece:
            pieces.append(piece)
    if not pieces:
        raise StrategyError("no strategy names given")
    return [parse_spec(piece) for piece in pieces]
