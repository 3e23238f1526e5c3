"""Who sits where in the environments' games, and the batches that play them.

The interfaces open ``sim.kernels.batch.GameBatch`` games in one place: here. A learner
is lineup position 0 (an outside seat); its opponents are strategy specs, named as
``sniff simulate --strategies`` names them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numba
import numpy as np

from sim.errors import SniffError
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import OUTSIDE, BatchSettings, Decisions
from sim.kernels.result import ROUND_CAP
from strategies import StrategySpec, parse_lineup_text

__all__: list[str] = []  # nothing here is used outside sim.env

# Batches this small start on one thread: waking the pool costs more than it gains (their
# steps never wake it: GameBatch advances fewer than sim.kernels.sharing.PARALLEL_FROM
# games on one thread).
FEW_GAMES = 64


def learner_lineup(players: int, opponents: str | Sequence[str | StrategySpec]
                   ) -> list[StrategySpec | None]:
    """Position 0 the learner (``OUTSIDE``), the others ``opponents``: one name for every
    other seat (``"greedy"``), or one per other position in order (``"blocker,greedy"``
    with 3 players; with 4, positions 1, 2 (the learner's partner) and 3)."""
    specs = (parse_lineup_text(opponents) if isinstance(opponents, str)
             else [parse_lineup_text(o)[0] if isinstance(o, str) else o for o in opponents])
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise SniffError(f"{players} players need 1 or {players - 1} opponent strategies, "
                         f"got {len(specs)}")
    return [OUTSIDE, *specs]


def open_batch(players: int, lineup: Sequence, n_games: int, seed: int, *,
               first_game: int = 0, round_cap: int = ROUND_CAP,
               external_chance: bool = False) -> tuple[GameBatch, Decisions]:
    """``n_games`` games from ``first_game`` of ``seed``, played on to the first decisions."""
    with _threads_for(n_games):
        batch = GameBatch(players, lineup, n_games, seed, BatchSettings(
            first_game=first_game, round_cap=round_cap, external_chance=external_chance))
    return batch, batch.pending()


@contextmanager
def _threads_for(n_games: int) -> Iterator[None]:
    if n_games >= FEW_GAMES:
        yield
        return
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def fresh_seed(generator: np.random.Generator | None = None) -> int:
    """A seed for a reset without one: from ``generator`` (Gymnasium's ``np_random``), else
    from the operating system's entropy."""
    generator = generator if generator is not None else np.random.default_rng()
    return int(generator.integers(0, 2**62))
