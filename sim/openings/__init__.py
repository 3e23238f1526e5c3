"""``sniff openings``: forced leads on common deals, the per-tile figures, tile against tile,
the ranked table, heat maps and files; a study part by part (a ledger, ``--resume``, Dask).

May import: the packages below it (``sim.core`` … ``sim.table``).
"""

__all__ = ["bound", "folder", "output", "pairs", "parts", "play", "reproduce", "study",
           "tally"]
