"""``sniff analyze``: the decisions of many games valued by the hint search, per strategy:
the win chance each move gave up against the best one, error rates with game-clustered
intervals, splits by phase, decision kind and player count, the costliest positions, the
decisions as Parquet and a report section.

May import: the packages below it (``sim.core`` … ``sim.openings``).
"""

__all__ = ["decisions", "endgame", "folder", "kernel", "output", "section", "settings", "sources",
           "stats", "study", "table", "valuation"]
