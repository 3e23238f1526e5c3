"""The ``sniff`` command line: click options (``main``, ``hint``) and what each command does
around its library call (``commands``). ``python -m sim.cli`` runs it.

May import: anything in ``sim`` and ``strategies``; nothing imports it.
"""

__all__ = ["analyze", "commands", "compare", "hint", "learn", "main", "options", "query", "serve",
           "tune",
           "verify"]
