"""How things are shown: number formatting, document blocks (one HTML/Markdown renderer),
one matplotlib function per chart, and the one progress bar of every command (``progress``).

May import: ``sim.errors``, ``sim.core``, ``sim.stats``.
"""

__all__ = ["analysis", "blocks", "charts", "formatting", "progress"]
