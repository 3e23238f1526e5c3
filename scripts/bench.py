"""Benchmark: the same as ``sniff bench`` (see ``sim/bench.py``); prints Markdown tables."""

from sim.cli import main

if __name__ == "__main__":
    import sys

    sys.argv[1:1] = ["bench"]
    main()
