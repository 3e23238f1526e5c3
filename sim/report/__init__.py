"""``sniff report``: runs to counts in one pass over their parts (``aggregate``, ``passes``),
to numbers with intervals (``build``), their tables, effects, score states and placement
sample, the self-contained HTML, Markdown and JSON, and a tournament's result
(``tournament``: its matrix, ratings and ranking from the pairings' runs).

May import: the packages below it (``sim.core`` … ``sim.openings``).
"""

__all__ = ["aggregate", "build", "effects", "html", "passes", "placements", "states", "tables",
           "tournament", "write"]
