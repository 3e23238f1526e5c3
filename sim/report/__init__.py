"""``sniff report``: runs to numbers with intervals (``build``), their tables, effects and
placement sample, and the self-contained HTML, Markdown and JSON.

May import: the packages below it (``sim.core`` … ``sim.openings``).
"""
