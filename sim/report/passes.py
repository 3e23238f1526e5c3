"""The per-round work of a report's chunk, compiled: one pass over the round rows.

Why compiled: a 10 million-game run has 75 million round rows, and numpy needs a dozen
temporary arrays per figure (each side's points and penalties with the rotation undone, the
score state at each round's start, a game's states seen once per cell); at numpy's pace on
two busy cores that was most of a report's time. One numba loop reads the columns as they
are (no copies) and adds straight into small count arrays: no array as long as the rows is
allocated (fresh memory's page faults were most of an earlier version's time).
Cached on disk, as ``sim.kernels.result.gather_rounds`` is; self-contained (it imports
nothing of ours), so its cache cannot go stale.

The pass reads and writes four named records (named tuples, which numba compiles as
structs: a field is read by name, never by its place in a list of arguments):
:class:`RoundRows` (the chunk's round columns), :class:`ChunkGames` (its games),
:class:`Seating` (the run's fixed tables) and :class:`Counts` (what the pass adds to).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__: list[str] = []  # nothing here is used outside sim.report

BAD_ORDER = 1  # the rows are not in game, then round order: sort them and pass again
BAD_GAME = 2  # a row's game is not among the chunk's games
SEEN_CAP = 256  # distinct score-state cells remembered per side within one game


class RoundRows(NamedTuple):
    """The chunk's round rows, one entry per row (the columns' own integer types).

    ``game``: the row's game id (or its game's place in the chunk, with ``first_id`` 0);
    ``points`` and ``scores``: one column per team; ``penalties``: one column per seat;
    ``reason``: the row's end reason as an index into :attr:`Seating.reason_code`;
    ``domino_seat``: the seat that went out (-1: none)."""

    game: np.ndarray
    round_number: np.ndarray
    points: tuple
    scores: tuple
    penalties: tuple
    reason: np.ndarray
    domino_seat: np.ndarray


class ChunkGames(NamedTuple):
    """The chunk's games in game id order: row ``i``'s game is ``game[i] - first_id``."""

    first_id: int
    rotation: np.ndarray
    winner: np.ndarray  # the winning side (-1: unfinished)


class Seating(NamedTuple):
    """The run's tables (``sim.core.seating``, tabled) and its constants.

    ``side_of[rotation, team]``: the side that played ``team``; ``seat_team[seat]``: the team
    a seat scores for; ``reason_code[index]``: an end reason's index in ``END_NAMES`` (-1:
    another); ``target_code``: that of a round ended by the target (no settlement);
    ``bin_size``: the points of a score-state bin."""

    side_of: np.ndarray
    seat_team: np.ndarray
    reason_code: np.ndarray
    target_code: int
    bin_size: int


class Counts(NamedTuple):
    """What the pass adds to (see ``sim.report.aggregate.RunFigures``).

    ``point_hist[side, points - point_low]``: placement points of every round;
    ``penalty_hist[side, penalty - penalty_low]``: settlement penalty of every settled round;
    ``cell_games`` / ``cell_wins[side, own bin - bin_low, opponents' bin - bin_low]``: games
    that started a round in the cell (and that the side won); ``endings[reason]``: rounds
    by end reason; ``domino[side]``: rounds the side went out of; ``has_rows[game]``: the
    chunk's games that had a round row."""

    point_low: int
    point_hist: np.ndarray
    penalty_low: int
    penalty_hist: np.ndarray
    bin_low: int
    cell_games: np.ndarray
    cell_wins: np.ndarray
    endings: np.ndarray
    domino: np.ndarray
    has_rows: np.ndarray


@njit(cache=True, nogil=True)
def check_rows(rows, games) -> int:
    """0 if every row's game is among the chunk's and the rows are in game, then round
    order; else ``BAD_GAME`` or ``BAD_ORDER`` (what :func:`round_pass` needs first)."""
    ids, numbers = rows.game, rows.round_number
    count = games.rotation.size
    for i in range(ids.size):
        g = ids[i] - games.first_id
        if g < 0 or g >= count:
            return BAD_GAME
        if i and (ids[i] < ids[i - 1] or (ids[i] == ids[i - 1]
                                          and numbers[i] <= numbers[i - 1])):
            return BAD_ORDER
    return 0


@njit(cache=True, nogil=True)
def add_cells(by_side, won, seen, seen_own, seen_opp, counts) -> None:
    """Count each side's score-state cell ``(own bin, best other side's bin)`` of one round
    start, once per game (``seen`` the cells the game already counted); ``won`` is the side
    that won the game."""
    teams = by_side.size
    low = counts.bin_low
    for k in range(teams):
        own = by_side[k]
        opp = np.int64(-(1 << 62))  # the best other side's (the bin of the max)
        for j in range(teams):
            if j != k and by_side[j] > opp:
                opp = by_side[j]
        known = False
        for m in range(seen[k]):
            if seen_own[k, m] == own and seen_opp[k, m] == opp:
                known = True
                break
        if known:
            continue
        if seen[k] < SEEN_CAP:
            seen_own[k, seen[k]] = own
            seen_opp[k, seen[k]] = opp
            seen[k] += 1
        counts.cell_games[k, own - low, opp - low] += 1
        if won == k:
            counts.cell_wins[k, own - low, opp - low] += 1


@njit(cache=True, nogil=True)
def round_pass(rows, games, seating, counts) -> int:
    """Add one chunk's round rows (:class:`RoundRows`) to ``counts`` (:class:`Counts`).

    Adds, per side: the placement points of every round, the settlement penalty of every
    settled round, the rounds it went out of, and the score-state cells: each distinct
    ``(own bin, opponents' bin)`` a game started a round in, once per game (``cell_wins``
    too if the side won the game). The state at a round's start is the score after the
    game's previous round, 0-0 for its first. Returns 0, or ``BAD_ORDER`` / ``BAD_GAME``
    (:func:`check_rows`) before adding anything when the rows are not what it needs.
    """
    status = check_rows(rows, games)
    if status:
        return status
    ids, points, scores, penalties = rows.game, rows.points, rows.scores, rows.penalties
    side_of, seat_team = seating.side_of, seating.seat_team
    teams = len(points)
    by_side = np.zeros(teams, dtype=np.int64)
    team_penalty = np.zeros(teams, dtype=np.int64)
    seen_own = np.empty((teams, SEEN_CAP), dtype=np.int64)
    seen_opp = np.empty((teams, SEEN_CAP), dtype=np.int64)
    seen = np.zeros(teams, dtype=np.int64)
    for i in range(ids.size):
        g = ids[i] - games.first_id
        counts.has_rows[g] = True
        r = games.rotation[g]
        first = i == 0 or ids[i - 1] != ids[i]
        code = seating.reason_code[rows.reason[i]]
        if code >= 0:
            counts.endings[code] += 1
        team_penalty[:] = 0
        for s in range(len(penalties)):
            team_penalty[seat_team[s]] += penalties[s][i]
        for t in range(teams):
            k = side_of[r, t]
            counts.point_hist[k, points[t][i] - counts.point_low] += 1
            if code != seating.target_code:
                counts.penalty_hist[k, team_penalty[t] - counts.penalty_low] += 1
            by_side[k] = 0 if first else scores[t][i - 1] // seating.bin_size
        if rows.domino_seat[i] >= 0:
            counts.domino[side_of[r, seat_team[rows.domino_seat[i]]]] += 1
        if first:
            seen[:] = 0
        add_cells(by_side, games.winner[g], seen, seen_own, seen_opp, counts)
    return 0
