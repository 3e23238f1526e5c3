"""Playing many games: the plan of a run, its chunks (ahead, interruption, resume), the
precision rule, the Dask cluster, and ``sniff bench``.

May import: the packages below it (``sim.core`` … ``sim.store``).
"""
