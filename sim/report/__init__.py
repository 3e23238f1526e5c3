"""``sniff report``: runs to counts in one pass over their parts (``aggregate``, ``passes``),
to numbers with intervals (``build``), their tables, effects, score states and placement
sample, and the self-contained HTML, Markdown and JSON.

May import: the packages below it (``sim.core`` … ``sim.openings``).
"""

__all__ = ["aggregate", "build", "effects", "html", "passes", "placements", "states", "tables"]
