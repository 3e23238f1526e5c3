"""Strategy names as users write them: ``name``, ``name:key=value,...``, ``name:@best.json``.

A spec names a strategy with every parameter filled (its defaults, then the user's values,
each checked against the parameter's options or bounds); a lineup is the comma-separated
specs of ``--strategies``. A strategy whose parameters are not numbers (``learned:model=PATH``)
reads its own text through the parser it registered (``register_spec_parser``).
"""

from __future__ import annotations

import math

from strategies.registry.catalog import _SPEC_PARSERS, Strategy, StrategyError, StrategySpec
from strategies.registry.plugins import get

__all__ = ["parse_lineup_text", "parse_spec"]

MAX_BEST = 16 * 2**20  # a best.json of sniff tune is a few kilobytes
MAX_MAGNITUDE = 1e100  # of a parameter value: far past any weight, far below an overflow


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
    from pathlib import Path

    from sim.files import read_regular

    try:  # bounded and never blocking: a FIFO or /dev/zero is one line, not a hang
        best = json.loads(read_regular(Path(path), MAX_BEST, "best.json"))
        recorded, params = best["strategy"], best["params"]
        if not isinstance(params, dict):
            raise TypeError
    except OSError as error:
        raise StrategyError(f"cannot read {path!r} for {strategy.name}:@: "
                            f"{error.strerror or error}") from None
    except (ValueError, KeyError, TypeError, RecursionError):
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
    if abs(number) > MAX_MAGNITUDE:  # 1e308: a weight times a feature is infinite, and the
        # moves it should order tie at infinity
        raise StrategyError(
            f"parameter {key!r} of strategy {strategy.name!r} must be at most "
            f"{MAX_MAGNITUDE:g} in size (a larger weight overflows when a strategy multiplies "
            f"it), got {value}"
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
