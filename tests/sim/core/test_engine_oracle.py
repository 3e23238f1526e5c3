"""Replay games played by the compiled engine through the independent rules oracle.

The engine (``sim/``) and the oracle (``sim/reference/oracle.py``) are written separately from the
rule text; every event of every game here must agree with the oracle, and the games must
actually reach the rare corners (blocked rounds, passes, Sniff branches, later doubles,
wins in mid-round), or agreement would prove little. About 2,100 games per player count.
"""

from __future__ import annotations

import functools
import json
from collections import Counter

import pytest

from sim.kernels.trace import trace_games
from sim.reference.oracle import check_trace, split_games

PLAYERS = (2, 3, 4)
MIXES = ("random", "greedy", "mixed")
GAMES_PER_MIX = 400  # x 3 mixes = 1,200 games per player count, 3,600 in all


def strategies_for(mix: str, players: int) -> list[str]:
    """One strategy name per seat; "mixed" alternates greedy and random seats."""
    if mix == "mixed":
        return ["greedy" if seat % 2 == 0 else "random" for seat in range(players)]
    return [mix] * players


def seed_for(players: int, mix: str) -> int:
    return 1000 * players + MIXES.index(mix)


@functools.cache
def checked(players: int, mix: str) -> Counter:
    """Play one batch with the engine, check every game; return what the games exercised.

    Cached so the aggregate test reuses the batches the per-batch tests already checked.
    """
    seed = seed_for(players, mix)
    strategies = strategies_for(mix, players)
    events = trace_games(players, seed, strategies, GAMES_PER_MIX)
    json.dumps(events)  # plain JSON types only (no numpy ints), as the trace file needs
    games = split_games(events)
    assert len(games) == GAMES_PER_MIX, f"{len(games)} games, asked for {GAMES_PER_MIX}"
    stats: Counter = Counter()
    first_deals = set()
    for number, game in enumerate(games):
        start = game[0]
        where = f"players={players} mix={mix} seed={seed} game={number}"
        assert start.get("game") == number, f"{where}: game_start has game={start.get('game')}"
        assert start.get("strategies") == strategies, f"{where}: strategies {start}"
        try:
            check_trace(game, stats)
        except AssertionError as error:
            raise AssertionError(f"{where}: {error}") from None
        first_deals.add(json.dumps(game[1]["hands"]))
    assert len(first_deals) == GAMES_PER_MIX, "games repeat the same first deal"
    return stats


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize("players", PLAYERS)
def test_engine_games_obey_the_rules(players: int, mix: str) -> None:
    stats = checked(players, mix)
    assert stats["games"] == GAMES_PER_MIX


@pytest.mark.parametrize("players", PLAYERS)
def test_engine_games_reach_every_rule(players: int) -> None:
    """Agreement only counts if the games went through each special case at least once."""
    total: Counter = Counter()
    for mix in MIXES:
        total += checked(players, mix)
    needed = {
        "domino": "rounds won by going out",
        "blocked": "blocked rounds",
        "draw": "draws",
        "pass": "passes",
        "branch_play": "plays on the Sniff's branches U/D",
        "later_double_counted": "counts with a later double outer (counted twice)",
        "mid_round_win": "games won in mid-round (winner still holding tiles)",
        "target_win": "games won by reaching the target",
    }
    missing = [what for key, what in needed.items() if total[key] == 0]
    assert not missing, f"{players} players: no {', '.join(missing)} in {dict(total)}"


def test_engine_is_reproducible_from_its_seed() -> None:
    strategies = ["greedy", "random", "greedy"]
    first = trace_games(3, 99, strategies, 5)
    assert trace_games(3, 99, strategies, 5) == first
    assert trace_games(3, 100, strategies, 5) != first
