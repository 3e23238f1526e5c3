"""``sniff tune``: CMA-ES over a strategy's parameters on duplicate deals; its setup,
generations, folder and learning curve; its matches, here or on Dask.

May import: the packages below it (``sim.core`` … ``sim.report``).
"""

__all__ = ["accept", "chart", "folder", "generations", "player", "setup", "study"]
