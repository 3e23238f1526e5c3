"""``sniff replay --analyze``: which placements of a traced game cost the most win probability.

Every decision of the game (a placement with more than one legal move), or of one seat, is
analysed as ``sniff hint`` analyses a position, from the public view of the seat that made
it: the win probability of the move played is compared with the best move's on the same
deals (a paired difference, so its interval is narrow), and the costly ones are marked the
way chess programs annotate mistakes (docs/hint.md):

- ``??`` a blunder: the move played gives up at least :data:`BLUNDER` of win probability;
- ``?`` a mistake: at least :data:`MISTAKE`;

and in both cases only when the paired 95% interval of the loss lies above zero, so that
the noise of the play-outs alone never marks a move.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sim.errors import SettingError, SniffError
from sim.hint.estimate import (
    DEFAULT_BUDGET,
    Estimate,
    MoveValue,
    analyse,
    check_budget,
    check_policy,
)
from sim.hint.tracker import Decision, decisions, game_slice

__all__ = ["analysis_text", "analyze_game", "DEFAULT_ANALYZE_BUDGET"]

MISTAKE = 0.03  # three points of win probability
BLUNDER = 0.10  # ten points
DEFAULT_ANALYZE_BUDGET = DEFAULT_BUDGET // 4


@dataclass
class Annotated:
    """One decision of the game with the value of the move played and of the best one."""

    decision: Decision
    n_moves: int
    played: MoveValue
    best: MoveValue

    @property
    def loss(self) -> Estimate:
        return self.played.loss

    @property
    def mark(self) -> str:
        loss = self.loss
        if loss.low <= 0.0:
            return ""
        if loss.mean >= BLUNDER:
            return "??"
        if loss.mean >= MISTAKE:
            return "?"
        return ""


def analyze_game(events: list[dict], game: int = 0, seat: int | None = None,
                 budget: int = DEFAULT_ANALYZE_BUDGET, policy: str = "greedy", seed: int = 0,
                 progress: Callable[[int, int], None] | None = None) -> list[Annotated]:
    """Analyse every decision of game ``game`` (of ``seat`` only, when given)."""
    check_budget(budget)
    check_policy(policy)
    players = int(game_slice(events, game)[0]["players"])
    if seat is not None and not 0 <= seat < players:
        raise SettingError(f"{{seat}} must be 0..{players - 1} with {players} players, got {seat}")
    chosen = []
    for decision in decisions(events, game):
        if seat is not None and decision.seat != seat:
            continue
        if len(decision.position.legal_moves()) > 1:
            chosen.append(decision)
    annotated = []
    for done, decision in enumerate(chosen):
        hint = analyse(decision.position.check(), budget, policy, seed)
        if decision.move not in hint.position.legal_moves():
            raise SniffError(f"round {decision.round} placement {decision.turn}: the move "
                             "played is not legal in the position rebuilt from the trace")
        annotated.append(Annotated(decision, len(hint.moves), hint.value_of(decision.move),
                                   hint.best))
        if progress is not None:
            progress(done + 1, len(chosen))
    return annotated


def _pct(value: float) -> str:
    return f"{100 * value:5.1f}%"


def analysis_text(annotated: list[Annotated], budget: int, policy: str, seed: int,
                  worst: int = 5) -> str:
    """One line per decision, then the biggest losses and each seat's total."""
    lines = [
        f"{len(annotated)} decisions analysed, {budget:,} play-outs per move (policy "
        f"{policy}, seed {seed}); win = estimated P(the mover's side wins the game); "
        f"? loss >= {100 * MISTAKE:g} points, ?? >= {100 * BLUNDER:g} (interval above 0)",
        "round  turn  seat  moves  played          win     best            win     loss "
        "[95% CI]          mark",
    ]
    for item in annotated:
        d = item.decision
        same = item.played.move == item.best.move
        best = "=" if same else item.best.name
        loss = item.loss
        lines.append(
            f"{d.round:>5}  {d.turn:>4}  {d.seat:>4}  {item.n_moves:>5}  {item.played.name:<14}"
            f"  {_pct(item.played.win.mean)}  {best:<14}  {_pct(item.best.win.mean)}  "
            f"{100 * loss.mean:5.1f} [{100 * loss.low:5.1f}, {100 * loss.high:5.1f}]  "
            f"{item.mark}"
        )
    costly = sorted((a for a in annotated if a.mark), key=lambda a: -a.loss.mean)[:worst]
    lines.append("")
    if costly:
        lines.append("biggest losses:")
        for item in costly:
            d = item.decision
            lines.append(
                f"  {item.mark:<2} round {d.round} turn {d.turn}, seat {d.seat}: played "
                f"{item.played.name} ({_pct(item.played.win.mean).strip()}), best "
                f"{item.best.name} ({_pct(item.best.win.mean).strip()}): "
                f"-{100 * item.loss.mean:.1f} points"
            )
    else:
        lines.append("no move marked: every move played is within the noise of the best, or "
                     f"less than {100 * MISTAKE:g} points below it")
    seats = sorted({a.decision.seat for a in annotated})
    for seat in seats:
        mine = [a for a in annotated if a.decision.seat == seat]
        total = sum(a.loss.mean for a in mine)
        marks = sum(1 for a in mine if a.mark == "?"), sum(1 for a in mine if a.mark == "??")
        played_best = sum(1 for a in mine if a.played.move == a.best.move)
        lines.append(
            f"seat {seat}: {len(mine)} decisions, best move played {played_best}, "
            f"{marks[0]} ?, {marks[1]} ??, summed loss {100 * total:.1f} points"
        )
    return "\n".join(lines) + "\n"
