"""``learned``: one ply with a learned value network, at the engine's speed.

For each legal move it encodes the afterstate as the mover sees it
(``strategies.learned.features``: own hand, table, hand sizes, known lacks, scores and the
heuristics' move features; only observation slots; a model of feature version 3 also reads
the round's record, ``strategies.learned.record_inputs``, encoded once per decision with its
share of the first layer) and values it with a small multi-layer
perceptron (``strategies.learned.net``) trained to predict the mover side's chance to win
the game (``sniff learn``, docs/learned.md: every shipped model distils ``expert``'s
values of the moves of self-play games); it plays the move of highest value. A move
that reaches the target wins on the spot and is taken; ties go to the first move. The
forward pass is compiled into the kernel: no Python runs per decision.

The trained models for 2, 3 and 4 players ship in ``strategies/learned/models/learned-Np.npz``
(plain arrays, read with numpy only); ``learned:model=PATH`` plays one's own model file
(``strategies.learned.model_files``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from sim.core import observation as view
from sim.core.layout import move_points
from strategies import register
from strategies.learned.features import N_BASE_INPUTS, encode
from strategies.learned.net import MAX_WIDTH, first_layer_partial, forward_from, load_model
from strategies.learned.record_inputs import MAX_INPUTS, encode_record

__all__ = [
    "choose_learned", "learned_choice", "shipped_path", "SIZES_2", "SIZES_4", "WEIGHTS_2",
    "WEIGHTS_4"
]

MODELS = Path(__file__).parent / "models"


def shipped_path(players: int) -> Path:
    """The model file shipped for a player count."""
    return MODELS / f"learned-{players}p.npz"


def _shipped(players: int) -> tuple[np.ndarray, np.ndarray]:
    """The shipped model's arrays (a network that values every move alike if it is missing:
    the strategy then plays the first move, as ``sniff strategies`` says)."""
    path = shipped_path(players)
    if path.exists():
        return load_model(path, players)
    return (np.zeros(N_BASE_INPUTS + 1, dtype=np.float64),
            np.array([N_BASE_INPUTS, 1], dtype=np.int64))


# Global arrays: numba compiles them into the kernel as constants. The files are part of the
# code digest of every lineup that plays learned (``sim.kernels.generate.DATA_FILES``), so
# a new model compiles a new kernel and a run started with the old one does not resume.
COMPILED_DATA_FILES = tuple(str(shipped_path(p)) for p in (2, 3, 4) if shipped_path(p).exists())
WEIGHTS_2, SIZES_2 = _shipped(2)
WEIGHTS_3, SIZES_3 = _shipped(3)
WEIGHTS_4, SIZES_4 = _shipped(4)


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def learned_choice(observation, moves, n_moves, weights, sizes) -> int:
    """Index of the move whose afterstate the network values highest (a winning move
    first; ties: the first move)."""
    team = view.team_of(observation[view.SEAT], observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    x = np.zeros(MAX_INPUTS, dtype=np.float64)
    scratch = np.empty((2, MAX_WIDTH), dtype=np.float64)
    partial = np.empty(MAX_WIDTH, dtype=np.float64)
    if sizes[0] > N_BASE_INPUTS:  # the record block: the same for every move
        encode_record(observation, x)
    first_layer_partial(x, weights, sizes, partial)
    best = 0
    best_value = -np.inf
    for index in range(n_moves):
        if move_points(observation[view.LAYOUT], moves[index]) >= needed:
            return index
        encode(observation, moves[index], x)
        value = forward_from(x, weights, sizes, scratch, partial)
        if value > best_value:
            best = index
            best_value = value
    return best


@register(
    "learned",
    "one ply valued by a small neural network trained by self-play (sniff learn)",
)
@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def choose_learned(observation, moves, n_moves, params, rng):
    players = observation[view.PLAYERS]
    if players == 2:
        return learned_choice(observation, moves, n_moves, WEIGHTS_2, SIZES_2)
    if players == 3:
        return learned_choice(observation, moves, n_moves, WEIGHTS_3, SIZES_3)
    return learned_choice(observation, moves, n_moves, WEIGHTS_4, SIZES_4)
