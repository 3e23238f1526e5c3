"""A run stopped by a sequential test (``sniff compare``): the test's state, chunk by chunk.

A run whose plan carries a sequential test (``Plan.sequential``) adds each finished chunk's
games to :class:`SequentialStop` in game-id order, resumed chunks included, and stops after
the first chunk whose log-likelihood ratio crosses a bound (``sim.stats.sprt``). Its chunks
are whole duplicate deals, so the decision, and the games played, are the same for any
thread count or cluster; a resumed run rebuilds the state from its parts and goes on (a run
that decided plays nothing more).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.core.seating import team_count
from sim.stats.sprt import DealOutcomes, Sprt
from sim.store.arrow import to_numpy

__all__ = ["SequentialStop"]

# Justified: type-only, never run (plan imports nothing of this module).
if TYPE_CHECKING:
    from sim.run.plan import Plan


class SequentialStop:
    """The test of a run: its settings, the deals' outcomes so far, a line per chunk."""

    def __init__(self, plan: Plan) -> None:
        assert plan.sequential is not None  # a plan with a sequential test
        self.sprt = Sprt(*plan.sequential)
        self.outcomes = DealOutcomes(team_count(plan.players), plan.group)
        self.games = 0
        self.history: list[dict] = []  # one row per chunk: games, llr, estimate

    def add(self, games_table) -> None:
        """Add one chunk's games table (``winner_side``, ``deal_id``, in id order)."""
        self.outcomes.add(to_numpy(games_table["winner_side"]), to_numpy(games_table["deal_id"]))
        self.games += len(games_table["winner_side"])
        self.history.append({"games": self.games, "llr": self.llr,
                             "estimate": self.outcomes.mean})

    @property
    def llr(self) -> float:
        return self.sprt.llr(self.outcomes.deals, self.outcomes.mean, self.outcomes.variance)

    @property
    def decision(self) -> str | None:
        return self.sprt.decision(self.llr)

    def stop_record(self, reason: str, chunks: int) -> dict:
        """The manifest's ``stopped`` of a sequential run: ``reason`` "sprt" (a bound was
        crossed) or "max_games"; the decision, the LLR and its bounds."""
        return {"reason": reason, "games": int(self.games), "chunks": int(chunks),
                "decision": self.decision or "undecided", "llr": self.llr,
                "lower": self.sprt.lower, "upper": self.sprt.upper}
