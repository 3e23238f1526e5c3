"""Single games at the table: rendering trace events, replay, the paper tally, and ``sniff
play`` with the person's seat as a strategy.

May import: the packages below it (``sim.core`` … ``sim.hint``).
"""

__all__ = ["check", "human", "moves", "play", "render", "replay", "tally"]
