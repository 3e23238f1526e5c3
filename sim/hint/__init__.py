"""One position analysed: the position as its player sees it (rebuilt from a trace by
``tracker``), the compiled search of every legal move on determinized deals and its cached
module, ``sniff hint`` and ``sniff replay --analyze``.

May import: the packages below it (``sim.core`` … ``sim.run``).
"""

__all__ = ["analyze", "estimate", "kernel", "position", "search", "tracker"]
