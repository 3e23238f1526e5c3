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

It must be a plain ``@njit`` function (not ``cache=True``: ``sim.kernels.generate`` compiles
it alone into a cached wrapper named by a hash of its files) and must not keep state between
calls: the engine runs games on several threads at once. ``strategies.heuristics.features``
holds the public inferences (unseen tiles, what each opponent is known to lack, reply risk)
that the built-in heuristics use.

Strategies outside this package are loaded with :func:`load_plugin` (the CLI's
``--plugin MODULE`` or the ``SNIFF_PLUGINS`` environment variable, comma-separated). The
generated kernel imports each strategy by module name, so a plugin module must be
importable (installed, or its folder on ``PYTHONPATH``).

The package is in rooms (docs/design.md), bottom first: ``registry`` (the catalogue, the
spec parser, plugin loading; what this module re-exports), ``heuristics`` (the one-move
strategies and the public features they weigh), ``value`` (what a round's end is worth),
``learned`` (the learned player, its inputs, network and model files) and ``search``
(``rollout``, ``expert``: sampled deals, reading the opponents, play-outs). ``__all__`` lists
the registry's names and the five rooms.

The engine never imports this package: ``sim.kernels.generate`` compiles each strategy alone
into a wrapper whose address the game loop calls, so a strategy defined anywhere importable
runs inside the compiled loop without an edit to ``sim/``, and without compiling the loop
again.
"""

from __future__ import annotations

from strategies.registry.catalog import (
    MAX_PARAMS,
    Strategy,
    StrategyError,
    StrategySpec,
    register,
    register_python,
    register_spec_parser,
)
from strategies.registry.plugins import (
    BUILTIN_MODULES,
    PLUGINS_ENV,
    available,
    get,
    kept_registry,
    load_builtins,
    load_plugin,
    load_plugins,
)
from strategies.registry.specs import parse_lineup_text, parse_spec

__all__ = [
    "BUILTIN_MODULES", "MAX_PARAMS", "PLUGINS_ENV", "Strategy", "StrategyError",
    "StrategySpec", "available", "get", "kept_registry", "load_builtins", "load_plugin",
    "load_plugins",
    "parse_lineup_text", "parse_spec", "register", "register_python", "register_spec_parser",
    # the rooms, bottom first (docs/design.md)
    "registry", "heuristics", "value", "learned", "search",
]
