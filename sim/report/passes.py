"""The per-round work of a report's chunk, compiled: one pass over the round rows.

Why compiled: a 10 million-game run has 75 million round rows, and numpy needs a dozen
temporary arrays per figure (each side's points and penalties with the rotation undone, the
score state at each round's start, a game's states seen once per cell); at numpy's pace on
two busy cores that was most of a report's time. One numba loop reads the columns as they
are (no copies) and adds straight into small count arrays: no array as long as the rows is
allocated (measured: fresh memory's page faults were most of an earlier version's time).
Cached on disk, as ``sim.kernels.gather`` is; self-contained (it imports nothing of ours),
so its cache cannot go stale.
"""

from __future__ import annotations

import numpy as np
from numba import njit

BAD_ORDER = 1  # the rows are not in game, then round order: sort them and pass again
BAD_GAME = 2  # a row's game is not among the chunk's games


@njit(cache=True, nogil=True)
def round_pass(ids, round_number, first_id, rotation, winner, points, scores, penalties,
               reason_index, reason_code, domino_seat, side_of, seat_team, bin_size,
               target_code, point_low, point_hist, penalty_low, penalty_hist, own_low,
               opp_low, cell_games, cell_wins, endings, domino, has_rows):
    """Add one chunk's round rows to the count arrays given (see ``RunFigures``).

    Row ``i`` belongs to the game ``ids[i] - first_id`` of the chunk's games (whose
    ``rotation`` and ``winner`` side are given); ``points``, ``scores`` (per team) and
    ``penalties`` (per seat) are tuples of columns; ``reason_code[reason_index[i]]`` is the
    row's end reason as an index of ``END_NAMES`` (-1: another). ``side_of[rotation, team]``
    is the side that played ``team``, ``seat_team[seat]`` the team a seat scores for
    (``sim.core.seating``, tabled). Adds, per side: the placement points of every round
    (``point_hist[side, points - point_low]``), the settlement penalty of every settled round,
    the rounds it went out of, and the score-state cells: each distinct ``(own bin,
    opponents' bin)`` a game started a round in, once per game (``cell_games``, and
    ``cell_wins`` if the side won the game). The state at a round's start is the score
    after the game's previous round, 0-0 for its first. Returns 0, or ``BAD_ORDER`` /
    ``BAD_GAME`` before adding anything when the rows are not what it needs.
    """
    rows = ids.size
    teams = len(points)
    players = len(penalties)
    games = rotation.size
    for i in range(rows):
        g = ids[i] - first_id
        if g < 0 or g >= games:
            return BAD_GAME
        if i and (ids[i] < ids[i - 1] or (ids[i] == ids[i - 1]
                                          and round_number[i] <= round_number[i - 1])):
            return BAD_ORDER
    by_side = np.zeros(teams, dtype=np.int64)
    team_penalty = np.zeros(teams, dtype=np.int64)
    seen_own = np.empty((teams, 256), dtype=np.int64)
    seen_opp = np.empty((teams, 256), dtype=np.int64)
    seen = np.zeros(teams, dtype=np.int64)
    for i in range(rows):
        g = ids[i] - first_id
        has_rows[g] = True
        r = rotation[g]
        first = i == 0 or ids[i - 1] != ids[i]
        code = reason_code[reason_index[i]]
        if code >= 0:
            endings[code] += 1
        team_penalty[:] = 0
        for s in range(players):
            team_penalty[seat_team[s]] += penalties[s][i]
        for t in range(teams):
            k = side_of[r, t]
            point_hist[k, points[t][i] - point_low] += 1
            if code != target_code:
                penalty_hist[k, team_penalty[t] - penalty_low] += 1
            by_side[k] = 0 if first else scores[t][i - 1] // bin_size
        if domino_seat[i] >= 0:
            domino[side_of[r, seat_team[domino_seat[i]]]] += 1
        if first:
            seen[:] = 0
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
            if seen[k] < 256:
                seen_own[k, seen[k]] = own
                seen_opp[k, seen[k]] = opp
                seen[k] += 1
            cell_games[k, own - own_low, opp - opp_low] += 1
            if winner[g] == k:
                cell_wins[k, own - own_low, opp - opp_low] += 1
    return 0
