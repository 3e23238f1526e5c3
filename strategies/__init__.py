"""The strategy registry: every strategy is a compiled decision function under a name.

A strategy module defines ``choose(observation, moves, n_moves, params, rng) -> int`` as a
numba ``@njit`` function and registers it with :func:`register`:

- ``observation``: int64 array, the deciding player's public view (slots in
  ``sim.core.observation``); never another hand or the boneyard order.
- ``moves[:n_moves]``: the legal moves, each ``tile * 4 + arm`` (``sim.core.layout``).
- ``params``: float64 array, the strategy's parameters in the order they were registered.
- ``rng``: one-element uint64 array, the deciding seat's own random stream in this game
  (``sim.core.rng``; every seat has its own, so one seat's draws never shift another's).
- returns the index in ``moves`` of the chosen move; an index out of range stops the run
  with an error naming the strategy (``sim.kernels.runner.refuse_bad_choices``).

It must be a plain ``@njit`` function (not ``cache=True``: only the generated kernels are
cached, see ``sim.kernels.generate``) and must not keep state between calls: the kernel runs games
on several threads at once. The engine's turn loop is compiled without reference counting
(``_nrt=False``) and callees inherit that unless they say otherwise, so a strategy that
allocates arrays must be ``@njit(_nrt=True)`` (as ``strategies.rollout``); the others
allocate nothing. ``strategies.features`` holds the public inferences (unseen
tiles, what each opponent is known to lack, reply risk) that the built-in heuristics use.

Strategies outside this package are loaded with :func:`load_plugin` (the CLI's
``--plugin MODULE`` or the ``SNIFF_PLUGINS`` environment variable, comma-separated). The
generated kernel imports each strategy by module name, so a plugin module must be
importable (installed, or its folder on ``PYTHONPATH``).

The engine never imports this package: ``sim.kernels.generate`` generates, per set of strategies,
a small module whose dispatcher calls these functions, so a strategy defined anywhere
importable runs inside the compiled loop without an edit to ``sim/``.
"""

from __future__ import annotations

import importlib
import math
import os
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from sim.errors import SniffError

MAX_PARAMS = 10
BUILTIN_MODULES = (
    "strategies.random",
    "strategies.greedy",
    "strategies.heavy",
    "strategies.defensive",
    "strategies.blocker",
    "strategies.partner",
    "strategies.weighted",
    "strategies.rollout",
    "strategies.expert",
    "strategies.learned",
)
PLUGINS_ENV = "SNIFF_PLUGINS"


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
    """

    name: str
    description: str
    module: str
    attribute: str
    params: dict[str, float] = field(default_factory=dict)
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    # The player counts it can play (a learned model file is trained for one).
    players: tuple[int, ...] = (2, 3, 4)

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
    """A strategy with its parameter values, as one seat plays it."""

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
# parameters are not numbers (``learned:model=PATH``: strategies.learned_models).
_SPEC_PARSERS: dict[str, Callable[[Strategy, str], StrategySpec]] = {}
_builtins_loaded = False


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
    except Exception as error:  # anything a module can raise at import
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
    """Load plugin modules and name them in ``SNIFF_PLUGINS`` for child processes.

    Worker processes (parallel or distributed runs) rebuild the registry from the
    environment, so a plugin named once on the command line reaches them too.
    """
    named = [m.strip() for m in os.environ.get(PLUGINS_ENV, "").split(",") if m.strip()]
    for module in modules:
        load_plugin(module)
        if module not in named:
            named.append(module)
    if named:
        os.environ[PLUGINS_ENV] = ",".join(named)


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
    """``name`` or ``name:key=value,key=value`` into a spec with every parameter filled.

    ``name:@PATH`` takes the values from a ``sniff tune`` result (``PATH`` = its
    ``best.json``), so a tuned strategy is named without copying numbers;
    ``name:@PATH,key=value`` then changes some of them.
    """
    name, _, rest = text.strip().partition(":")
    strategy = get(name.strip())
    name = strategy.name
    if rest.strip() and name in _SPEC_PARSERS:
        return _SPEC_PARSERS[name](strategy, rest.strip())
    values = dict(strategy.params)
    items = rest.split(",") if rest else []
    if items and items[0].strip().startswith("@"):
        values.update(_tuned_values(strategy, items.pop(0).strip()[1:]))
    if items:
        for item in items:
            key, equals, value = item.partition("=")
            key, value = key.strip(), value.strip()
            if not equals or key not in values:
                accepted = (
                    f"accepted (with defaults): {strategy.describe_params()}"
                    if strategy.params
                    else "it takes no parameters"
                )
                raise StrategyError(f"bad parameter {item!r} for strategy {name!r}; {accepted}")
            values[key] = _parse_value(strategy, key, value)
    return StrategySpec(strategy, tuple(values.values()))


def _tuned_values(strategy: Strategy, path: str) -> dict[str, float]:
    """The parameter values in a ``best.json`` of ``sniff tune``, checked against ``strategy``."""
    import json

    try:
        with open(path) as handle:
            best = json.load(handle)
        recorded, params = best["strategy"], best["params"]
        if not isinstance(params, dict):
            raise TypeError
    except OSError as error:
        raise StrategyError(f"cannot read {path!r} for {strategy.name}:@: "
                            f"{error.strerror or error}") from None
    except (ValueError, KeyError, TypeError):
        raise StrategyError(f"{path!r} is not a best.json of sniff tune "
                            "(needs 'strategy' and 'params')") from None
    if recorded != strategy.name:
        raise StrategyError(f"{path!r} holds parameters of {recorded!r}, not {strategy.name!r}")
    values = {}
    for key, value in params.items():
        if key not in strategy.params:
            raise StrategyError(f"{path!r} sets {key!r}, which {strategy.name!r} does not take")
        if isinstance(value, str):
            values[key] = _parse_value(strategy, key, value)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            values[key] = _parse_value(strategy, key, repr(float(value)))
        else:
            raise StrategyError(f"{path!r}: parameter {key!r} is not a number: {value!r}")
    return values


def _parse_value(strategy: Strategy, key: str, value: str) -> float:
    options = strategy.choices.get(key)
    if options:
        if value in options:
            return float(options.index(value))
        raise StrategyError(
            f"parameter {key!r} of strategy {strategy.name!r} must be one of "
            f"{', '.join(options)}, got {value!r}"
        )
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise StrategyError(
            f"parameter {key!r} of strategy {strategy.name!r} must be a finite number, "
            f"got {value!r}"
        )
    if key in strategy.bounds:
        low, high = strategy.bounds[key]
        if not low <= number <= high:
            raise StrategyError(
                f"parameter {key!r} of strategy {strategy.name!r} must be between "
                f"{low:g} and {high:g}, got {value}"
            )
    return number


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
