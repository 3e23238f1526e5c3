"""Run folders on disk: the Parquet tables and their schema, the manifest, folder names and
checks, the per-chunk summary, and runs opened for analysis.

May import: the packages below it (``sim.core`` … ``sim.kernels``).
"""
