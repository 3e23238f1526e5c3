"""The game itself, compiled by numba: tiles, random streams, seating, the public record,
a strategy's view, the layout and the engine (every rule).

May import: ``sim.errors`` only. Nothing here imports a strategy or anything above; a
plugin strategy reads its view through this package (``sim.core.observation``,
``sim.core.layout``, ``sim.core.tiles``, ``sim.core.rng``).
"""

__all__ = [
    "buffers", "calls", "checks", "engine", "identity", "layout", "loop", "observation",
    "record", "rng", "seating", "tiles",
]
