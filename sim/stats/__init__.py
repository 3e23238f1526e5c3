"""Statistics with their uncertainty: intervals, adjusted p-values, sample sizes, ratings
and rankings, leader and seat effects, win chances from score states.

May import: ``sim.errors``, ``sim.core`` (seating).
"""

__all__ = [
    "effects", "intervals", "multiple", "planning", "ranking", "ratings", "score_states",
    "sprt", "tally",
]
