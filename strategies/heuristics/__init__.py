"""The one-move heuristics and the public features they weigh.

- ``features``: the public inferences (unseen tiles, what a seat can hold, expected best
  reply, chance of being blocked) and the move features, scored by ``choose_by_features``;
- ``random``, ``greedy``, ``heavy``: the plain players; ``defensive``, ``blocker``,
  ``partner``, ``weighted``: weightings of the features.

May import: ``sim.core`` and ``strategies`` (the registry).
"""

__all__ = ["blocker", "defensive", "features", "greedy", "heavy", "partner", "random", "weighted"]
