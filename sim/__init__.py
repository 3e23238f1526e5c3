"""sniff: a compiled Monte Carlo simulator for the domino game American Sniff."""

__version__ = "0.1.0"
