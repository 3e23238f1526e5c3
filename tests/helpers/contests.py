"""Contests drawn from known Bradley–Terry ratings, for the tests of ``sim.stats.ranking``
and ``sim.stats.ratings``."""

from __future__ import annotations

from itertools import combinations

from sim.stats.ratings import Contest


def bt_contests(ratings: dict[str, float], games: int, rng) -> list[Contest]:
    out = []
    for a, b in combinations(ratings, 2):
        p = 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
        wins = int(rng.binomial(games, p))
        out.append(Contest((a, b), (wins, games - wins)))
    return out
