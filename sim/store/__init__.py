"""Run folders on disk: the Parquet tables and their schema, the manifest, folder names and
paths, the writer's lock, the per-chunk summary, runs opened for analysis, their tables
read chunk by chunk (``scan``) and asked in SQL (``query``, ``answer``). Whether a folder's
parts may be believed (the ledger, footers, the manifest's shape) is ``sim.checks``'s.

May import: the packages below it (``sim.core`` … ``sim.checks``).
"""

__all__ = [
    "answer", "arrow", "folders", "io", "lock", "query", "rundata", "scan", "summary", "tables",
]
