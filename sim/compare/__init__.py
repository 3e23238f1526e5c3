"""``sniff compare``: is A better than B? A sequential test on duplicate deals.

- ``play``: :func:`compare` plays a run of A against B chunk by chunk (a normal run folder,
  whose plan carries the test, so report, verify and resume work as for any run) and writes
  ``compare.json``; the decision and its lines.

The statistics are in ``sim.stats.sprt``. May import: the rooms below it in docs/design.md
(``sim.core`` ... ``sim.run``, ``sim.store``).
"""

__all__ = [
    "H0", "H1", "ALPHA", "BETA", "CHUNK_DEALS", "DEFAULT_MAX_GAMES", "RESULT", "bound", "play",
]

# The defaults of a comparison: no advantage against 5 points of win rate (about 17 Elo, a
# difference players notice), each error at most 5% of the time.
H0, H1 = 0.0, 0.05
ALPHA, BETA = 0.05, 0.05
CHUNK_DEALS = 50  # deals between checks: the overshoot past a bound stays small
DEFAULT_MAX_GAMES = 100_000
RESULT = "compare.json"
