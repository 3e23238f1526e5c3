"""Playing many games: the plan of a run, its chunks (ahead, interruption, resume), the
precision rule, a run's chunks as tasks of the Dask cluster (``cluster_chunks``, on
``sim.cluster``), and ``sniff bench``.

May import: the packages below it (``sim.core`` … ``sim.store``, ``sim.cluster``).
"""

__all__ = [
    "bench", "chunks", "cluster_chunks", "plan", "precision", "sequential", "session",
    "settings", "simulation", "space", "state",
]
