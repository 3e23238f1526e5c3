"""What a batch of games hands back, its rounds packed in game order, what a
:class:`sim.kernels.batch.GameBatch` shows of its games, and a strategy's exception as one
line naming it.

Shared by the two ways of playing a batch: whole games in one compiled call
(``sim.kernels.runner``) and resumable games (``sim.kernels.batch``).

Why the rounds are packed here: the kernel cannot write rounds contiguously (a game's
offset depends on every earlier game's length, and games run in parallel), so it writes
each game's rounds into that game's own slots, and :func:`gather_rounds` packs them. It
calls nothing of ours, so its numba cache cannot go stale through a callee in another file.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit, prange

from sim.cache import use_writable_numba_cache
from sim.core import engine, record
from sim.core.observation import OBSERVATION_SIZE
from sim.core.seating import team_count
from sim.errors import SniffError

use_writable_numba_cache(Path(__file__).parent)  # this module's cache is beside it

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
    (``sim.kernels.batch.raised_message``), or None."""
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


@njit(parallel=True, cache=True, nogil=True)
def gather_rounds(slotted, counts, offsets, columns):
    """``columns[f, offsets[g] + r] = slotted[g, r, f]`` for every round ``r < counts[g]``.

    Field-major output: the Parquet columns are then contiguous rows of ``columns``.
    """
    fields = slotted.shape[2]
    for game in prange(slotted.shape[0]):
        start = offsets[game]
        for number in range(counts[game]):
            for field in range(fields):
                columns[field, start + number] = slotted[game, number, field]


class BatchReadings:
    """What anyone may see of a ``GameBatch``'s games (its ``_state``, round and game rows,
    round slots and ids): who is over, the scores, the public view of a seat, the tables of
    its games and rounds. Apart from the batch's play (one job per module)."""

    _state: np.ndarray
    _round_rows: np.ndarray
    _games: np.ndarray
    _rounds: np.ndarray
    _seat_specs: np.ndarray
    _done: bool
    _kernel: Any
    players: int
    game_ids: np.ndarray
    deal_ids: np.ndarray
    rotations: np.ndarray

    @property
    def finished(self) -> np.ndarray:
        """(n,) bool: the games that are over."""
        return self._state[:, engine.WAITING] == engine.Wait.OVER

    @property
    def done(self) -> bool:
        """Whether every game is over (kept from the last step: asked every step)."""
        return self._done

    def observe(self, game: int, seat: int) -> np.ndarray:
        """The public view of ``seat`` in game ``game`` now (what a strategy would get)."""
        observation = np.zeros(OBSERVATION_SIZE, dtype=np.int64)
        self._kernel.observe(self._state[game], seat, observation)
        return observation

    def public_record(self, game: int) -> tuple[int, list[int]]:
        """The round game ``game`` plays (or last played) and that round's public record so
        far, as the ``sim.core.record`` words at base 0 (the event count, then the events):
        what every seat's view holds, read without making a view (OpenSpiel's histories
        read it at every step)."""
        row = self._state[game]
        used = 1 + (int(row[engine.RECORD]) + record.EVENTS_PER_WORD - 1) // record.EVENTS_PER_WORD
        return int(row[engine.ROUND]), row[engine.RECORD: engine.RECORD + used].tolist()

    @property
    def scores(self) -> np.ndarray:
        """(n, teams) scores now (after settlement at a round's end)."""
        return self._state[:, engine.SCORES: engine.SCORES + team_count(self.players)].copy()

    @property
    def round_numbers(self) -> np.ndarray:
        """(n,) the round being played (or the last one), from 1."""
        return self._state[:, engine.ROUND].copy()

    @property
    def hand_sizes(self) -> np.ndarray:
        """(n, players) tiles in each seat's hand."""
        hands = self._state[:, engine.HANDS: engine.HANDS + self.players]
        return np.array([[int(h).bit_count() for h in row] for row in hands], dtype=np.int64)

    @property
    def to_move(self) -> np.ndarray:
        """(n,) the seat each game waits for, -1 when none (over, or waiting for a deal)."""
        waiting = self._state[:, engine.WAITING]
        asking = (waiting >= engine.Wait.MOVE) & (waiting <= engine.Wait.DRAW)
        return np.where(asking, self._state[:, engine.TURN_SEAT], -1)

    @property
    def winners(self) -> np.ndarray:
        """(n,) the team that won each game, -1 while none has (or at the round cap)."""
        return self._state[:, engine.WINNER_TEAM].copy()

    def round_row(self, game: int) -> np.ndarray:
        """The current (or just finished) round's row of game ``game`` (``ROUND_*`` fields:
        points per team, penalties, end reason...)."""
        return self._round_rows[game].copy()

    def results(self) -> BatchResult:
        """Game and round tables of the batch, as ``runner.play_batch`` returns them (an
        unfinished game has the rounds it finished so far and a provisional game row)."""
        waiting = self._state[:, engine.WAITING]
        in_round = (waiting >= engine.Wait.MOVE) & (waiting <= engine.Wait.DRAW)
        counts = self._state[:, engine.ROUND] - in_round
        counts = np.where(self.finished, self._games[:, engine.GAME_ROUNDS], counts)
        n = counts.shape[0]
        offsets = np.zeros(n, dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        columns = np.empty((engine.ROUND_FIELDS, int(counts.sum())), dtype=np.int32)
        gather_rounds(self._rounds, counts, offsets, columns)
        round_game = np.repeat(np.arange(n, dtype=np.int64), counts)
        round_number = np.arange(columns.shape[1], dtype=np.int64) - offsets[round_game] + 1
        return BatchResult(self.game_ids.copy(), self.deal_ids.copy(), self.rotations.copy(),
                           self._seat_specs.copy(), self._games.copy(), round_game,
                           round_number, columns.T)

