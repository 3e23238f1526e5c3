"""The named groups of arrays the compiled game loop passes around, one argument each.

A game in progress lives in a handful of arrays (its state, the buffers a decision uses,
the round row and trace rows it writes, the tables its results go to) and a batch of games
in a few more (their ids, who plays which seat). Passed one by one they made functions of
18 positional arguments, in an order every caller had to repeat. Here each group is a
``NamedTuple`` of arrays and numbers: numba passes one as a struct of its fields (no copy,
no allocation, no cost measured in the engine's rows), and every field is read by name.

Numba does not apply a ``NamedTuple``'s defaults inside compiled code, so none has any:
build them with every field, or with the ``new_*`` functions below.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from sim.core.engine import MAX_MOVES, MAX_PLAYERS, NO_MOVE
from sim.core.observation import OBSERVATION_SIZE
from sim.core.tiles import N_TILES

__all__ = [
    "Dispatch", "GAME_ROW", "Games", "KIND_ROW", "Log", "N_MOVES_ROW", "new_rows", "new_seats",
    "POSITION_ROW", "ROW_MOVES", "SEAT_ROW", "Seats", "Tables"
]


class Seats(NamedTuple):
    """Who decides at each seat of the game being played, and what a decision uses.

    Attributes:
        functions: (MAX_PLAYERS,) int64: each seat's chooser (Chooser.OUTSIDE: the caller).
        params: (MAX_PLAYERS, n_params) float64: each seat's parameter row.
        moves: (MAX_MOVES,) int64: the legal moves asked about, NO_MOVE when unused.
        observation: (OBSERVATION_SIZE,) int64: the deciding seat's public view.
        rng: (1,) uint64: the deciding seat's own stream, swapped in and out.
    """

    functions: np.ndarray  # (MAX_PLAYERS,) int64: each seat's chooser (Chooser.OUTSIDE: the caller)
    params: np.ndarray  # (MAX_PLAYERS, n_params) float64: each seat's parameter row
    moves: np.ndarray  # (MAX_MOVES,) int64: the legal moves asked about, NO_MOVE when unused
    observation: np.ndarray  # (OBSERVATION_SIZE,) int64: the deciding seat's public view
    rng: np.ndarray  # (1,) uint64: the deciding seat's own stream, swapped in and out


class Log(NamedTuple):
    """Where the round being played is written as it goes.

    Attributes:
        round_row: (ROUND_FIELDS,) int64: the round's ROUND_* statistics.
        events: (rows, EVENT_WIDTH) int64: trace rows (no rows: none are kept).
    """

    round_row: np.ndarray  # (ROUND_FIELDS,) int64: the round's ROUND_* statistics
    events: np.ndarray  # (rows, EVENT_WIDTH) int64: trace rows (no rows: none are kept)


class Deal(NamedTuple):
    """How one game's rounds are dealt and how many it may play."""

    seed: np.uint64  # the run's seed word (``sim.core.rng.seed_word``)
    deal_id: int  # keys the deal streams (the game id, unless games share deals)
    forced_lead: int  # round 1's imposed opening tile, -1 none
    round_cap: int  # the game stops after this many rounds
    rng: np.ndarray  # (1,) uint64: the deal stream's scratch word


class Tables(NamedTuple):
    """Where a batch's results go, one row of each per game.

    Attributes:
        games: (n, GAME_FIELDS) int64: each game's GAME_* row.
        rounds: (n, slots, ROUND_FIELDS) int32: each game's rounds, as far as room goes.
    """

    games: np.ndarray  # (n, GAME_FIELDS) int64: each game's GAME_* row
    rounds: np.ndarray  # (n, slots, ROUND_FIELDS) int32: each game's rounds, as far as room goes


class Games(NamedTuple):
    """The games of a batch: what each game is made of.

    Attributes:
        seed: the run's seed word.
        deal_ids: (n,) int64.
        game_ids: (n,) int64: key each seat's strategy stream.
        forced_leads: (n,) int64: round 1's opening tile, -1 none.
        round_cap: the most rounds a game may play.
    """

    seed: np.uint64  # the run's seed word
    deal_ids: np.ndarray  # (n,) int64
    game_ids: np.ndarray  # (n,) int64: key each seat's strategy stream
    forced_leads: np.ndarray  # (n,) int64: round 1's opening tile, -1 none
    round_cap: int


class Dispatch(NamedTuple):
    """Who plays which seat of each game of a batch.

    Attributes:
        players: the player count.
        seat_specs: (n, MAX_PLAYERS) int64: each seat's index into the specs below.
        functions: (specs,) int64: each spec's dispatch id.
        params: (specs, n_params) float64: each spec's parameter row.
    """

    players: int
    seat_specs: np.ndarray  # (n, MAX_PLAYERS) int64: each seat's index into the specs below
    functions: np.ndarray  # (specs,) int64: each spec's dispatch id
    params: np.ndarray  # (specs, n_params) float64: each spec's parameter row


@njit
def new_seats(n_params: int) -> Seats:
    """Fresh :class:`Seats` with room for ``n_params`` parameters a seat (every seat 0)."""
    return Seats(
        np.zeros(MAX_PLAYERS, dtype=np.int64),
        np.zeros((MAX_PLAYERS, n_params), dtype=np.float64),
        np.full(MAX_MOVES, NO_MOVE, dtype=np.int64),
        np.zeros(OBSERVATION_SIZE, dtype=np.int64),
        np.zeros(1, dtype=np.uint64),
    )


# Rows of the (5, n) int64 block of a batch's waiting rows (``new_rows``): one per number a
# waiting game's row has, in the order of ``sim.kernels.decisions.Decisions``' fields.
GAME_ROW, SEAT_ROW, POSITION_ROW, KIND_ROW, N_MOVES_ROW = range(5)

# Legal moves one decision can have, the width of a waiting row's moves: a tile fits an arm
# only through the arm's open pip value, which 7 tiles carry, so the 4 arms take at most 28
# moves (the empty table takes one per tile in hand: at most 28 too). ``MAX_MOVES`` (64) is
# the engine's buffer; a row is filled for every waiting game at every step, and the 36
# slots that can never hold a move were a third of what a step wrote.
ROW_MOVES = 28


def new_rows(n: int) -> tuple[np.ndarray, ...]:
    """Room for the waiting rows of a batch of ``n`` games, filled by the compiled step from
    row 0: the (5, n) numbers (``*_ROW``), observations, moves, masks and streams. Every
    entry of a used row is written (the observations cleared first), so a batch may reuse a
    set that no caller holds any more: fresh arrays cost a page fault per 4 KiB touched,
    more than filling them."""
    return (
        np.empty((5, n), dtype=np.int64),
        np.empty((n, OBSERVATION_SIZE), dtype=np.int64),
        np.empty((n, ROW_MOVES), dtype=np.int64),
        np.empty((n, N_TILES * 4), dtype=np.bool_),
        np.empty(n, dtype=np.uint64),
    )
