"""``sniff simulate``: play many games with seat rotation and summarise who wins."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from sim import engine
from sim.runner import Lineup, play_batch, winning_side
from sim.stats import wilson_interval


@dataclass
class Summary:
    lineup: Lineup
    games: int
    wins: list[int]
    unfinished: int
    seconds: float

    def lines(self) -> list[str]:
        sides = side_labels(self.lineup)
        out = [f"{self.games:,} games, {self.lineup.players} players, {self.seconds:.1f} s "
               f"({self.games / max(self.seconds, 1e-9):,.0f} games/s)"]
        for label, wins in zip(sides, self.wins):
            low, high = wilson_interval(wins, self.games)
            rate = wins / self.games
            out.append(f"  {label:<28} wins {rate:7.2%}  95% CI [{low:.2%}, {high:.2%}]")
        if self.unfinished:
            out.append(f"  unfinished at the round cap: {self.unfinished}")
        return out


def side_labels(lineup: Lineup) -> list[str]:
    if lineup.players == 4:
        return [f"seats {k}+{k + 2}: {lineup.seats[k].label}" for k in range(2)]
    return [f"seat {k}: {spec.label}" for k, spec in enumerate(lineup.seats)]


def rotation_for(game_ids: np.ndarray, players: int) -> np.ndarray:
    """Game g shifts the lineup by g % players seats, so every side sits everywhere equally."""
    return game_ids % players


def quick_simulate(lineup: Lineup, games: int, seed: int) -> Summary:
    start = time.perf_counter()
    game_ids = np.arange(games, dtype=np.int64)
    result = play_batch(lineup, seed, game_ids, rotations=rotation_for(game_ids, lineup.players))
    side = winning_side(result, lineup.players)
    n_sides = 2 if lineup.players == 4 else lineup.players
    wins = [int((side == k).sum()) for k in range(n_sides)]
    unfinished = int(result.games[:, engine.GAME_CAP_HIT].sum())
    return Summary(lineup, games, wins, unfinished, time.perf_counter() - start)
