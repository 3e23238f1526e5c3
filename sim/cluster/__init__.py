"""Where long work runs: the Dask cluster of every command's ``--scheduler`` (``dask``):
connected or started, its threads sized, the compiled engine and strategies loaded on
every worker, tasks handed back in the order they were asked for, a lost scheduler as one
line. What a task is belongs to each command (a run's chunks: ``sim.run.cluster_chunks``;
an openings part, a tuning match, a batch of self-play games), so nothing here knows a run.

May import: ``sim.errors``, ``sim.children`` (Dask itself only inside ``dask``, when
``--scheduler`` is given).
"""

__all__ = ["dask"]
