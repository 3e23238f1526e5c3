"""Playing many games: the plan of a run, its chunks (ahead, interruption, resume), the
precision rule, the Dask cluster every command's ``--scheduler`` plays on (``cluster``) and a
run's chunks as its tasks (``cluster_chunks``), and ``sniff bench``.

May import: the packages below it (``sim.core`` … ``sim.store``).
"""

__all__ = [
    "bench", "chunks", "cluster", "cluster_chunks", "plan", "precision", "reproduce",
    "sequential", "session", "settings", "simulation", "space", "state", "stops",
]
