"""The per-round work of a report's chunk, compiled: one pass over the round rows.

Why compiled: a 10 million-game run has 75 million round rows, and numpy needs a dozen
temporary arrays per figure (each side's points and penalties with the rotation undone, the
score state at each round's start, a game's states seen once per cell); at numpy's pace on
two busy cores that was most of a report's time. One numba loop does it all in a pass over
the rows (cached on disk, as ``sim.kernels.gather`` is). Self-contained: it imports nothing
of ours, so its cache cannot go stale.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def round_pass(game, rotation, winner, points, score_bins, penalties, domino_seat, side_of,
               seat_team, bin_size):
    """Per round row ``i`` of a chunk (rows in game, then round order; ``game[i]`` the row
    of its game in the chunk's games): each side's placement points and settlement
    penalty (rotation undone), the side that went out (-1: none), and the score-state
    cells: for each side, each distinct ``(own bin, opponents' bin)`` a game started a
    round in, one entry ``(side, own_low, opponents_low, won)``.

    ``points`` and ``score_bins`` (each team's score after the round, floor-divided by
    ``bin_size``: numpy divides faster) are ``(rows, teams)``, ``penalties``
    ``(rows, players)``;
    ``side_of[rotation, team]`` is the side that played ``team`` in a game of that
    rotation and ``seat_team[seat]`` the team a seat scores for (``sim.core.seating``,
    tabled: a division per lookup was most of the pass). The state at a round's start is
    the score after the game's previous round, 0-0 for its first.
    """
    rows = game.size
    teams = points.shape[1]
    players = seat_team.size
    side_points = np.empty((rows, teams), dtype=np.int64)
    side_penalties = np.zeros((rows, teams), dtype=np.int64)
    domino_side = np.full(rows, -1, dtype=np.int64)
    cell_side = np.empty(rows * teams, dtype=np.int64)
    cell_own = np.empty(rows * teams, dtype=np.int64)
    cell_opp = np.empty(rows * teams, dtype=np.int64)
    cell_won = np.empty(rows * teams, dtype=np.int64)
    cells = 0
    by_side = np.zeros(teams, dtype=np.int64)
    seen_own = np.empty((teams, 256), dtype=np.int64)
    seen_opp = np.empty((teams, 256), dtype=np.int64)
    seen = np.zeros(teams, dtype=np.int64)
    for i in range(rows):
        g = game[i]
        r = rotation[g]
        first = i == 0 or game[i - 1] != g
        for t in range(teams):
            k = side_of[r, t]
            side_points[i, k] = points[i, t]
            by_side[k] = 0 if first else score_bins[i - 1, t]
        for s in range(players):
            side_penalties[i, side_of[r, seat_team[s]]] += penalties[i, s]
        if domino_seat[i] >= 0:
            domino_side[i] = side_of[r, seat_team[domino_seat[i]]]
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
            cell_side[cells] = k
            cell_own[cells] = own * bin_size
            cell_opp[cells] = opp * bin_size
            cell_won[cells] = 1 if winner[g] == k else 0
            cells += 1
    return (side_points, side_penalties, domino_side, cell_side[:cells], cell_own[:cells],
            cell_opp[:cells], cell_won[:cells])
