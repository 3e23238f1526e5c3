"""The catalogue of strategies: what a registered strategy is, and how one is registered.

``register`` is the decorator every strategy module (built-in or plugin) puts on its compiled
``choose``; the catalogue keeps each one under its name with its parameters' defaults, the
options of a choice parameter and the bounds of a numeric one. Looking a name up (``available``,
``get``) loads the built-ins first, so it lives in ``strategies.registry.plugins``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from sim.core.seating import PLAYER_COUNTS
from sim.errors import SniffError

__all__ = [
    "MAX_PARAMS", "register", "register_python", "register_spec_parser", "Strategy",
    "StrategyError", "StrategySpec"
]

MAX_PARAMS = 10


class StrategyError(SniffError):
    """A strategy name or parameter the registry cannot accept (message is user-facing)."""


@dataclass(frozen=True)
class Strategy:
    """A registered strategy: where its ``choose`` lives and what parameters it takes.

    ``params`` maps each parameter to its default, in the order the function reads them.
    ``choices`` names the values of a parameter that selects among options (stored as the
    option's index, since the kernel passes every parameter as a float). ``bounds`` gives
    a parameter's inclusive range, checked where values are parsed, so a value the
    compiled function cannot use (a budget of 0) is refused in one line, not played.

    Attributes:
        name: its name, as a spec names it.
        description: one line on how it plays.
        module: the module its ``choose`` lives in.
        attribute: the name of its ``choose`` in that module.
        params: each parameter with its default, in the order the function reads them.
        choices: the named values of a parameter that selects among options.
        bounds: a parameter's inclusive range, checked where values are parsed.
        players: the player counts it can play (a learned model file is trained for one).
        python: A Python policy (register_python): decided outside the compiled engine, in batches.
    """

    name: str
    description: str
    module: str
    attribute: str
    params: dict[str, float] = field(default_factory=dict)
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    # The player counts it can play (a learned model file is trained for one).
    players: tuple[int, ...] = PLAYER_COUNTS
    # A Python policy (register_python): decided outside the compiled engine, in batches.
    python: bool = False

    def format_value(self, key: str, value: float) -> str:
        """A parameter value as a user writes it (an option's name, or a number)."""
        options = self.choices.get(key)
        if options and float(value).is_integer() and 0 <= int(value) < len(options):
            return options[int(value)]
        return f"{value:g}"

    def describe_params(self) -> str:
        """``key=default`` for every parameter (options listed), or ``(no parameters)``."""
        if not self.params:
            return "(no parameters)"
        parts = []
        for key, default in self.params.items():
            text = f"{key}={self.format_value(key, default)}"
            if key in self.choices:
                text += f" ({'|'.join(self.choices[key])})"
            parts.append(text)
        return ", ".join(parts)


@dataclass(frozen=True)
class StrategySpec:
    """A strategy with its parameter values, as one seat plays it.

    Attributes:
        strategy: the strategy.
        values: its parameter values, in ``strategy.params`` order.
    """

    strategy: Strategy
    values: tuple[float, ...]

    @property
    def label(self) -> str:
        changed = [
            f"{key}={self.strategy.format_value(key, value)}"
            for (key, default), value in zip(self.strategy.params.items(), self.values)
            if value != default
        ]
        return self.strategy.name + (":" + ",".join(changed) if changed else "")


_REGISTRY: dict[str, Strategy] = {}
# name -> function(strategy, text after the colon) -> StrategySpec, for a strategy whose
# parameters are not numbers (``learned:model=PATH``: strategies.learned.model_files).
_SPEC_PARSERS: dict[str, Callable[[Strategy, str], StrategySpec]] = {}
def register(
    name: str,
    description: str,
    params: Mapping[str, float | str] | None = None,
    choices: Mapping[str, tuple[str, ...]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> Callable:
    """Decorator that registers a jitted ``choose`` function under ``name``.

    ``description`` is the one line ``sniff strategies`` shows. ``params`` gives each
    parameter's default in the order ``choose`` reads them from its ``params`` array. A
    parameter listed in ``choices`` takes one of the named options (default given by name);
    ``choose`` receives the option's index. ``bounds`` maps a numeric parameter to its
    inclusive ``(low, high)`` range. The same module may register a name again (a re-import
    replaces it); a name registered by another module is refused, since one of the two
    strategies would silently stand in for the other.
    """
    params = dict(params or {})
    choices = {key: tuple(options) for key, options in (choices or {}).items()}
    bounds = {key: (float(low), float(high)) for key, (low, high) in (bounds or {}).items()}
    if len(params) > MAX_PARAMS:
        raise StrategyError(f"strategy {name!r} has more than {MAX_PARAMS} parameters")
    if not name or any(c in name for c in ":,= "):
        raise StrategyError(f"bad strategy name {name!r}: no ':', ',', '=' or spaces")
    for key, (low, high) in bounds.items():
        if key not in params or key in choices or not low <= float(params[key]) <= high:
            raise StrategyError(f"bounds of {name}.{key} must hold a numeric default")
    defaults: dict[str, float] = {}
    for key, default in params.items():
        if key in choices:
            if default not in choices[key]:
                raise StrategyError(f"default {default!r} of {name}.{key} is not an option")
            defaults[key] = float(choices[key].index(default))
        else:
            defaults[key] = float(default)

    def decorate(function):
        python_function = getattr(function, "py_func", function)
        module = python_function.__module__
        if not hasattr(function, "py_func"):
            raise StrategyError(
                f"strategy {name!r} in module {module}: choose must be compiled with numba's "
                "@njit (put @njit under @register)"
            )
        existing = _REGISTRY.get(name)
        if existing is not None and existing.module != module:
            raise StrategyError(
                f"strategy {name!r} in module {module} is already registered by module "
                f"{existing.module}: give it another name"
            )
        _REGISTRY[name] = Strategy(
            name=name,
            description=description,
            module=module,
            attribute=python_function.__name__,
            params=defaults,
            choices=choices,
            bounds=bounds,
        )
        return function

    return decorate


def register_spec_parser(name: str, parser: Callable[[Strategy, str], StrategySpec]) -> None:
    """Let ``parser`` read ``name:TEXT`` (with a non-empty TEXT) instead of the numeric
    parameters."""
    _SPEC_PARSERS[name] = parser


def register_python(
    name: str, description: str, players: tuple[int, ...] = PLAYER_COUNTS
) -> Callable:
    """Decorator that registers a Python policy under ``name`` (``sim.kernels.python_seats``).

    The policy decides for every game of a batch at once:
    ``policy(observations, masks) -> actions``, with ``observations`` the ``(k,
    OBSERVATION_SIZE)`` int64 public views (``sim.core.observation``), ``masks`` the ``(k,
    112)`` bool legal actions, and the result ``k`` action ids (``tile * 4 + arm``). A policy
    that takes a third argument gets ``seeds``, ``(k,)`` uint64 words from each deciding
    seat's own random stream (fresh at every decision), for reproducible randomness; one
    that takes a fourth gets ``moves``, ``(k, 28)`` int64: the legal moves in the engine's
    order, ``-1`` padded, the order in which a compiled strategy sees them (its ties go to
    the first). It takes no parameters; it is asked only when a seat has two or more legal
    moves.
    """
    if not name or any(c in name for c in ":,= "):
        raise StrategyError(f"bad strategy name {name!r}: no ':', ',', '=' or spaces")

    def decorate(function):
        module = getattr(function, "__module__", None) or "?"
        if hasattr(function, "py_func") or not callable(function):
            raise StrategyError(
                f"strategy {name!r} in module {module}: register_python takes a plain Python "
                "callable (a numba @njit choose is registered with register)")
        existing = _REGISTRY.get(name)
        if existing is not None and existing.module != module:
            raise StrategyError(
                f"strategy {name!r} in module {module} is already registered by module "
                f"{existing.module}: give it another name")
        _REGISTRY[name] = Strategy(
            name=name, description=description, module=module, attribute=function.__name__,
            players=tuple(players), python=True,
        )
        return function

    return decorate

