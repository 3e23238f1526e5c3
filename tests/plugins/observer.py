"""Test plugin for ``tests/sim/hint/test_estimate.py``: records the whole view the engine hands it.

Each decision appends ``(observation slots, legal moves)`` to :data:`SEEN`, so the test can
check that ``sim.hint.position`` rebuilds, from a trace alone, exactly the view the engine gave.
Only scalars cross into object mode (the engine's turn loop runs without reference
counting, see ``sim.core.loop``). It plays the first legal move.
"""

from __future__ import annotations

from numba import njit, objmode

from sim.core import observation as view
from strategies import register

SEEN: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
_slots: list[int] = []
_moves: list[int] = []


def push_slot(value: int) -> None:
    _slots.append(int(value))


def push_move(value: int) -> None:
    _moves.append(int(value))


def done() -> None:
    SEEN.append((tuple(_slots), tuple(_moves)))
    _slots.clear()
    _moves.clear()


@register("observer", "test plugin: records its whole view, plays the first move")
@njit
def choose_observer(observation, moves, n_moves, params, rng):
    for slot in range(view.OBSERVATION_SIZE):
        value = observation[slot]
        with objmode():
            push_slot(value)
    for index in range(n_moves):
        move = moves[index]
        with objmode():
            push_move(move)
    with objmode():
        done()
    return 0
