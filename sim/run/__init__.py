"""Playing many games: the plan of a run, its chunks (ahead, interruption, resume), the
precision rule, a run's chunks as tasks of the Dask cluster (``cluster_chunks``, on
``sim.cluster``), what a run records as the code that played it (``signature``: the
engine's version and each strategy's behaviour signature), and ``sniff bench``.

May import: the packages below it (``sim.core`` … ``sim.store``, ``sim.cluster``).
"""

__all__ = [
    "bench", "chunks", "cluster_chunks", "plan", "precision", "sequential", "session",
    "settings", "signature", "simulation", "space", "state",
]
