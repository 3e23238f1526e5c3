"""Run folders on disk: the Parquet tables and their schema, the manifest, folder names and
checks, the per-chunk summary, runs opened for analysis, their tables read chunk by chunk
(``scan``) and asked in SQL (``query``, ``answer``).

May import: the packages below it (``sim.core`` … ``sim.kernels``).
"""

__all__ = [
    "answer", "arrow", "folders", "footers", "integrity", "io", "lock", "query", "rundata", "scan",
    "shape", "summary", "tables", "verified",
]
