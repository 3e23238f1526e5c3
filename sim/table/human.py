"""The person's seat in ``sniff play``: a strategy whose decision is made in Python.

``choose_human`` has the signature of every strategy, so the person's moves go through the
same compiled engine as everyone else's (turns, drawing, passing, blocking, settlement are
never re-implemented). It leaves nopython mode with ``numba.objmode`` and calls
:func:`ask`, which hands the decision to the callback installed by :func:`attach` (the
terminal UI of ``sim.table.play``). Exceptions raised by the callback (end of input, Ctrl-C)
propagate out of the compiled game.

The strategy is deliberately not in the registry (``strategies``): it is not listed by
``sniff strategies`` and ``sniff simulate`` refuses it as an unknown name. ``sim.table.play``
passes :data:`HUMAN` to the runner itself.

The strategy is compiled into a cached kernel like any other (``sim.kernels.generate``): numba
caches functions with object-mode blocks, and the block looks :func:`ask` up in this
module at run time, so a kernel loaded from the cache calls the callback attached now.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import njit, objmode

from sim.core import observation as view
from strategies import Strategy

# The callback gets the layout word, the FORCED flag (the moves place a tile just drawn) and
# the legal moves (``tile * 4 + arm``), and returns the index of the chosen move.
Callback = Callable[[int, bool, list[int]], int]

_callback: Callback | None = None
_moves: list[int] = []


def attach(callback: Callback | None) -> None:
    """Install the function that decides for the person (``None`` detaches it)."""
    global _callback
    _callback = callback
    _moves.clear()


def receive_move(move: int) -> None:
    """Called from compiled code once per legal move, before :func:`ask`."""
    _moves.append(int(move))


def ask(layout: int, forced: int, n_moves: int) -> int:
    """Called from compiled code: the index of the chosen move among the moves received."""
    moves = _moves[:]
    _moves.clear()
    if _callback is None:
        raise RuntimeError("the human strategy was asked for a move with no player attached")
    if len(moves) != n_moves:
        raise RuntimeError(f"the human strategy received {len(moves)} of {n_moves} moves")
    return int(_callback(int(layout), bool(forced), moves))


@njit
def choose_human(observation, moves, n_moves, params, rng):
    # Only scalars cross into object mode: the engine's turn loop is compiled without
    # reference counting (_nrt=False), and numba then cannot box its arrays as Python
    # objects (the object-mode block would be called with no arguments at all).
    layout = observation[view.LAYOUT]
    forced = observation[view.FORCED]
    for index in range(n_moves):
        move = moves[index]
        with objmode():
            receive_move(move)
    with objmode(choice="int64"):
        choice = ask(layout, forced, n_moves)
    return choice


HUMAN = Strategy(
    name="human",
    description="a person at the terminal (sniff play only)",
    module="sim.table.human",
    attribute="choose_human",
)
