"""What a batch of games hands back, and a strategy's exception as one line naming it.

Shared by the two ways of playing a batch: whole games in one compiled call
(``sim.kernels.runner``) and resumable games (``sim.kernels.batch``).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from sim.errors import SniffError

__all__ = ["BatchResult", "ROUND_CAP"]

ROUND_CAP = 200


@dataclass
class BatchResult:
    """What both ways of playing a batch return (``runner.play_batch``, the batch's ``result``):
    each game's ids, seats and result row, and every round's row.

    Attributes:
        game_ids: (n,) int64: each game's id.
        deal_ids: (n,) int64: each game's deal id.
        rotations: (n,) int64: seat s played lineup seat (s + rotation) % players.
        seat_specs: (n, 4) int64: index into Lineup.specs for each seat.
        games: (n, engine.GAME_FIELDS) int64: each game's GAME_* result row.
        round_game: (R,) int64: index in the batch of each round's game.
        round_number: (R,) int64: each round's number in its game, from 1.
        round_rows: (R, engine.ROUND_FIELDS) int32: ordered by game, then round (a transposed view:
            each field is contiguous, as the Parquet columns want it).
    """

    game_ids: np.ndarray  # (n,) int64
    deal_ids: np.ndarray  # (n,) int64
    rotations: np.ndarray  # (n,) int64: seat s played lineup seat (s + rotation) % players
    seat_specs: np.ndarray  # (n, 4) int64: index into Lineup.specs for each seat
    games: np.ndarray  # (n, engine.GAME_FIELDS) int64
    round_game: np.ndarray  # (R,) int64: index in the batch of each round's game
    round_number: np.ndarray  # (R,) int64: from 1
    round_rows: np.ndarray  # (R, engine.ROUND_FIELDS) int32: ordered by game, then round
    # (a transposed view: each field is contiguous, as the Parquet columns want it)

    def flat_rounds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every round of every game: ``(game index in batch, round number from 1, rows)``."""
        return self.round_game, self.round_number, self.round_rows

    def first_rounds(self) -> np.ndarray:
        """Round 1 of every game, in game order (every game has one)."""
        return self.round_rows[self.round_number == 1]


def bad_choice_error(code: int, game_id: int, spec_of_seat, explain=None) -> SniffError:
    """The one line that stops a run whose game ``game_id`` recorded ``code`` in
    ``GAME_BAD_CHOICE`` (``engine.BAD_CHOICE``): 1 + the seat whose strategy returned an index
    out of range, or its negative when that strategy raised (``sim.core.calls.RAISED``).
    ``spec_of_seat(seat)``: the spec that played the seat; ``explain(spec)``: what it raised
    (``sim.kernels.python_seats.raised_message``), or None."""
    seat = abs(int(code)) - 1
    spec = spec_of_seat(seat)
    strategy = spec.strategy
    who = f"strategy {strategy.name!r} (module {strategy.module})"
    if code < 0:
        what = explain(spec) if explain is not None else None
        return SniffError(
            f"{who} raised {what or 'an exception'} inside the compiled engine (game "
            f"{int(game_id)}, seat {seat}); its choose() must return a legal move's index, "
            "never raise")
    return SniffError(
        f"{who} returned a move index out of range in game {int(game_id)}, seat {seat}: "
        "choose must return an index in 0..n_moves-1")


@contextmanager
def strategy_errors(lineup):
    """An exception raised inside the compiled engine (a plugin's ``choose`` that raises)
    as one ``SniffError`` line naming the strategy and the message, not numba's
    "SystemError: CPUDispatcher(...) returned a result with an exception set" (a parallel
    kernel) or a bare traceback. ``lineup``: anything with the playing specs as ``seats``."""
    try:
        yield
    except (SniffError, KeyboardInterrupt, MemoryError):
        raise
    except Exception as error:
        cause = error.__cause__ if isinstance(error, SystemError) and error.__cause__ else error
        if isinstance(cause, SniffError | KeyboardInterrupt):  # asked for (sniff play's q)
            raise cause from None
        what = f"{type(cause).__name__}: {' '.join(str(cause).split())}".rstrip(": ")
        strategies = {spec.strategy.name: spec.strategy for spec in lineup.seats}
        plugins = [s for s in strategies.values() if not s.module.startswith("strategies.")]
        if len(plugins) == 1:
            who = f"strategy {plugins[0].name!r} (module {plugins[0].module})"
        elif plugins:
            who = "one of the strategies " + ", ".join(
                f"{s.name!r} (module {s.module})" for s in plugins)
        else:
            who = "the engine, playing " + ", ".join(strategies)
        raise SniffError(f"{who} raised {what} inside the compiled engine; its choose() must "
                         "return a legal move's index, never raise") from None
