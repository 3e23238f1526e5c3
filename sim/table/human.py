"""The person's seat in ``sniff play``: a lineup entry that no compiled strategy plays.

``sim.table.play`` plays the game as a one-game ``sim.kernels.batch.GameBatch`` whose
person's seat is an outside seat: the engine plays every other seat and stops at each of the
person's decisions, so turns, drawing, passing, blocking and settlement are never
re-implemented, and nothing leaves compiled code through a callback.

:data:`HUMAN` only names the seat (the trace's ``strategies`` list says ``human``). It is
deliberately not in the registry (``strategies``): it is not listed by ``sniff strategies``
and ``sniff simulate`` refuses it as an unknown name.
"""

from __future__ import annotations

from strategies import Strategy

__all__: list[str] = []  # nothing here is used outside sim.table

HUMAN = Strategy(
    name="human",
    description="a person at the terminal (sniff play only)",
    module="sim.table.human",
    attribute="",
)
