"""How numbers are shown: number formatting, document blocks (one HTML/Markdown renderer)
and one matplotlib function per chart.

May import: ``sim.errors``, ``sim.core``, ``sim.stats``.
"""

__all__ = ["analysis", "blocks", "charts", "formatting"]
