"""A finished run proven beyond its ledger: some of its games played again and compared
with its parts field by field (``reproduce``, ``sniff verify --replay N``), and the stop its
manifest records recomputed from its parts' games (``stops``: ``sniff verify``, and the
readers of a ``sniff compare`` run). The ledger's own checks, the hashes and footers, are
``sim.store``'s.

May import: the packages below it (``sim.core`` … ``sim.run``).
"""

__all__ = ["reproduce", "stops"]
