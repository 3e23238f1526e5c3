"""``sniff learn``: training ``learned``'s value network by Monte-Carlo self-play: the
compiled self-play games (``selfplay``), whose seats (``seat``: a heuristic or the network,
and the records it keeps of each decision) are compiled alone, and the iterations of
play, fit and measurement with their folder and learning curve (``training``); an
iteration's games in chunks, here or on Dask (``tasks``).

May import: the rooms below it (``sim.core`` … ``sim.run``); scikit-learn only inside
``training``'s fit (the ``learn`` extra).
"""

__all__ = ["config", "curve", "kernel", "measure", "seat", "selfplay", "state", "tasks", "training"]
