"""The hint of the person's pending decision, exactly as ``sniff hint`` computes it.

Why it is built this way: the position comes from the events the page has been shown,
through ``sim.hint.tracker.PublicTracker`` (the other hands are sizes and lacks, never
tiles), and is analysed by ``sim.hint.estimate.analyse``, the function behind ``sniff hint``
and ``sniff play --hint``; this module only turns its result into JSON for the page.
"""

from __future__ import annotations

from typing import Any

from sim.errors import SniffError
from sim.hint.estimate import Estimate, Hint, analyse, check_budget
from sim.hint.position import Position, format_position, parse_position
from sim.hint.tracker import PublicTracker
from sim.serve.game import WebGame

__all__: list[str] = []  # nothing here is used outside sim.serve

DEFAULT_BUDGET = 500  # play-outs per move: about a second on two cores
POLICY = "greedy"


def _estimate(value: Estimate) -> dict[str, float]:
    return {"mean": value.mean, "low": value.low, "high": value.high}


def _loss(value: Estimate) -> dict[str, float]:
    """A loss interval clipped at 0: no move gives up less than nothing against the best
    (the paired interval's normal approximation can reach below 0)."""
    return {"mean": max(0.0, value.mean), "low": max(0.0, value.low),
            "high": max(0.0, value.high)}


def separated(hint: Hint) -> bool:
    """Whether the best move is told apart from the next: the next move's paired loss
    interval (win chance given up against the best on the same deals) lies above 0."""
    return len(hint.moves) == 1 or hint.moves[1].loss.low > 0


def game_hint(game: WebGame, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """Every legal move of the pending decision with its chance to win and round points."""
    check_budget(budget, "budget")
    if game.pending is None or game.settling() is not None:
        raise SniffError("there is no decision to hint now")
    tracker = PublicTracker(game.players, game.target)
    for event in game.events[1 : game.visible()]:
        tracker.apply(event)
    position = tracker.position(game.seat).check()
    if position.legal_moves() != game.pending.options:
        raise SniffError("the position rebuilt from the events does not offer these moves")
    return hint_view(position, budget, game.seed)


def position_hint(text: Any, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """The hint of a position's text (``sniff hint``'s parser, then its analysis)."""
    check_budget(budget, "budget")
    if not isinstance(text, str):
        raise SniffError("text must be the position's text")
    return hint_view(parse_position(text), budget, 0)


def hint_view(position: Position, budget: int, seed: int) -> dict[str, Any]:
    """``analyse``'s result as the page's JSON, best first."""
    hint = analyse(position, budget, POLICY, seed)
    return {
        "position": format_position(position),
        "budget": hint.budget,
        "policy": hint.policy,
        "seconds": round(hint.seconds, 3),
        "best": hint.best.move,
        "separated": separated(hint),
        "moves": [
            {"move": value.move, "name": value.name, "now": value.now,
             "win": _estimate(value.win), "points": _estimate(value.points),
             "loss": _loss(value.loss), "heuristics": value.heuristics}
            for value in hint.moves
        ],
    }
