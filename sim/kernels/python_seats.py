"""Lineups with Python players: their seats are outside seats of a ``GameBatch``.

``runner.play_batch`` sends a lineup here when one of its strategies was registered with
``strategies.register_python``: the compiled strategies play in the engine as always, and
each Python policy is called once per batch step with every game that waits for it. The
games are the ones ``play_batch`` would play (same ids, deals, rotations, streams), and the
result is the same ``BatchResult``, so ``simulate``, ``compare``, ``tournament`` and
``openings`` take Python players with no change. A policy that raises (anything but
Ctrl-C: ``MemoryError``, ``GeneratorExit``, ``sys.exit`` too), or returns the wrong shape or
an illegal move, ends the batch with one ``SniffError`` naming it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable

import numpy as np

from sim.core.rng import GOLDEN, MIX_1, MIX_2
from sim.errors import SniffError
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import N_ACTIONS, BatchSettings
from sim.kernels.result import BatchResult
from strategies import Strategy, StrategySpec

__all__: list[str] = []  # nothing here is used outside sim.kernels


def policy_of(strategy: Strategy) -> tuple[Callable, int]:
    """The Python policy of a strategy, and how many of ``(observations, masks, seeds,
    moves)`` it takes (2 to 4)."""
    function = getattr(importlib.import_module(strategy.module), strategy.attribute)
    try:
        takes = len(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        takes = 2
    return function, min(max(takes, 2), 4)


def _mix(words: np.ndarray) -> np.ndarray:
    """``sim.core.rng.mix64`` over an array (numpy's uint64 arithmetic wraps as numba's)."""
    with np.errstate(over="ignore"):
        words = (words ^ (words >> np.uint64(30))) * MIX_1
        words = (words ^ (words >> np.uint64(27))) * MIX_2
    return words ^ (words >> np.uint64(31))


def _who(strategy: Strategy) -> str:
    return f"strategy {strategy.name!r} (module {strategy.module}, Python)"


def _ask(spec: StrategySpec, policy: Callable, takes: int, observations, masks, seeds,
         moves) -> np.ndarray:
    """The policy's actions for these rows, or one SniffError line naming it."""
    try:
        actions = policy(*(observations, masks, seeds, moves)[:takes])
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the command stops as always
        raise
    except SystemExit as error:  # not the command's exit: the player's failure
        raise SniffError(f"{_who(spec.strategy)} called sys.exit({error.code!r}) instead "
                         "of returning its moves") from None
    except BaseException as error:  # MemoryError, GeneratorExit too: one line, no traceback
        what = f"{type(error).__name__}: {' '.join(str(error).split())}".rstrip(": ")
        raise SniffError(f"{_who(spec.strategy)} raised {what}") from None
    try:  # what it returned is the player's too: an object whose __array__ raises
        actions = np.asarray(actions)
    except KeyboardInterrupt:
        raise
    except BaseException as error:
        what = f"{type(error).__name__}: {' '.join(str(error).split())}".rstrip(": ")
        raise SniffError(f"{_who(spec.strategy)} returned {type(actions).__name__}, not "
                         f"integer action ids ({what})") from None
    k = observations.shape[0]
    if actions.shape != (k,) or (k and actions.dtype.kind not in "iu"):
        raise SniffError(f"{_who(spec.strategy)} returned {actions.dtype} of shape "
                         f"{actions.shape}: it must return {k} integer action ids")
    return actions.astype(np.int64)


def play_python_batch(
    lineup, seed: int, game_ids: np.ndarray, deal_ids: np.ndarray, rotations: np.ndarray,
    forced_leads: np.ndarray, round_cap: int,
) -> BatchResult:
    """``runner.play_batch`` for a lineup with Python players (same games, same result)."""
    python = [(spec, *policy_of(spec.strategy)) for spec in lineup.specs
              if spec.strategy.python]
    seats = [None if spec.strategy.python else spec for spec in lineup.seats]
    batch = GameBatch(lineup.players, seats, game_ids.shape[0], seed, BatchSettings(
        round_cap=round_cap, game_ids=game_ids, deal_ids=deal_ids, rotations=rotations,
        forced_leads=forced_leads,
    ))
    while not batch.done:
        decisions = batch.pending()
        counters = decisions.streams + GOLDEN  # each decision's fresh word of the stream
        seeds = _mix(counters)
        moves = np.zeros(len(decisions), dtype=np.int64)
        for spec, policy, takes in python:
            positions = [p for p, s in enumerate(lineup.seats) if s == spec]
            rows = np.flatnonzero(np.isin(decisions.positions, positions))
            if not rows.size:
                continue
            actions = _ask(spec, policy, takes, decisions.observations[rows],
                           decisions.masks[rows], seeds[rows], decisions.moves[rows])
            in_range = (actions >= 0) & (actions < N_ACTIONS)
            legal = in_range & decisions.masks[rows, np.where(in_range, actions, 0)]
            if not legal.all():
                row = rows[np.flatnonzero(~legal)[0]]
                game = int(decisions.games[row])
                raise SniffError(
                    f"{_who(spec.strategy)} returned the illegal move "
                    f"{int(actions[row == rows][0])} in game {int(batch.game_ids[game])}, seat "
                    f"{int(decisions.seats[row])} (legal: "
                    f"{decisions.moves[row, : decisions.n_moves[row]].tolist()})")
            moves[rows] = actions
        batch.advance(moves, counters)
    result = batch.results()
    seat_index = np.array([lineup.specs.index(spec) for spec in lineup.seats], dtype=np.int64)
    for seat in range(lineup.players):
        result.seat_specs[:, seat] = seat_index[(seat + result.rotations) % lineup.players]
    return result

