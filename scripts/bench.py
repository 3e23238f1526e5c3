"""Benchmark: the same as ``sniff bench`` (see ``sim/run/bench.py``); prints Markdown tables.

Its figures feed docs/speed.md.
"""

from sim.cli.main import main

if __name__ == "__main__":
    import sys

    main(["bench", *sys.argv[1:]])
