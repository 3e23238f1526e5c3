"""The analysis board's server side: a game's move list, a position from any point of it
(for the set-up board), and the analysis of a finished game as ``sniff replay --analyze``,
with its accuracy and marks as ``sniff analyze`` counts them.

Why here and not in the page: each frame is the replay model's (``sim.table.render``), each
position ``sim.hint.position``'s tracker, each analysis ``sim.hint.analyze``'s, so the page
holds no rule. A game in play is seen from the person's seat only (the other hands as
sizes, their draws as "draws a tile"); a finished trace shows every hand.
"""

from __future__ import annotations

from typing import Any

from sim.analyze.settings import AnalyzeSettings, Mark, mark_of
from sim.errors import SniffError
from sim.hint.analyze import BLUNDER, MISTAKE, analyze_game
from sim.hint.estimate import check_budget
from sim.hint.position import PublicTracker, decisions, format_position
from sim.serve.frames import table_frames
from sim.serve.game import WebGame

__all__: list[str] = []  # nothing here is used outside sim.serve


def game_history(game: WebGame) -> dict[str, Any]:
    """The move list of a served game, as far as the person has seen it: one whole table
    per event (``sim.serve.frames``), from the person's seat."""
    events = game.events[: game.visible()]
    turn = game.seat if game.pending is not None and game.settling() is None else None
    return {"frames": table_frames(events, game.players, game.seat, 0, turn)}


def position_at(events: list[dict], index: int, seat: int | None) -> str:
    """The position before the next placement after ``events[:index + 1]`` (of ``seat``
    only, when given), in ``sniff hint``'s text: what the set-up board opens with. With no
    placement left (a game waiting for the person), ``seat``'s position now."""
    start = events[0]
    players = int(start["players"])
    if not 0 <= index < len(events) or len(events) < 2:
        raise SniffError(f"event must be 0..{len(events) - 1}")
    index = max(index, 1)  # the game's start: the position at the first deal
    played = sum(1 for event in events[: index + 1] if event["event"] == "play")
    for number, decision in enumerate(decisions(events)):
        if number >= played and (seat is None or decision.seat == seat):
            return format_position(decision.position)
    if seat is None:
        raise SniffError("no placement follows that point")
    tracker = PublicTracker(players, int(start.get("target", 0)))
    for event in events[1 : index + 1]:
        tracker.apply(event)
    if not tracker.round:
        raise SniffError("no round has been dealt yet at that point")
    return format_position(tracker.position(seat))


def game_position(game: WebGame, index: int) -> dict[str, Any]:
    """The person's position at event ``index`` of a served game (only what they have seen)."""
    return {"text": position_at(game.events[: game.visible()], index, game.seat)}


def _placements(events: list[dict]) -> dict[tuple[int, int], int]:
    """The event index of each placement, by (round, its number in the round from 1)."""
    where, round_number, turn = {}, 0, 0
    for index, event in enumerate(events):
        if event["event"] == "round_start":
            round_number, turn = int(event["round"]), 0
        elif event["event"] == "play":
            turn += 1
            where[(round_number, turn)] = index
    return where


def game_analysis(game: WebGame, budget: int) -> dict[str, Any]:
    """Every decision of the person with more than one move, analysed as ``sniff replay
    --analyze`` does; the costly ones marked ``?`` (mistake) and ``??`` (blunder). Each row
    names its placement's ``event`` (the move list's index), so the page can show the table
    there, and its ``grade`` as ``sniff analyze`` marks moves (inaccuracy, mistake, blunder
    at its default thresholds); ``accuracy`` is the share of the person's decisions with no
    grade, as ``sniff analyze`` counts it, and ``grades`` how many of each."""
    if not game.over:
        raise SniffError("the analysis is made once the game is over")
    check_budget(budget, "budget")
    rows, where = [], _placements(game.events)
    thresholds = AnalyzeSettings().thresholds
    for item in analyze_game(game.events, 0, game.seat, budget, "greedy", game.seed):
        loss = item.loss
        rows.append({"round": item.decision.round, "turn": item.decision.turn,
                     "event": where[(item.decision.round, item.decision.turn)],
                     "played": item.played.name, "best": item.best.name,
                     "win": item.played.win.mean, "best_win": item.best.win.mean,
                     "loss": {"mean": max(0.0, loss.mean), "low": max(0.0, loss.low),
                              "high": max(0.0, loss.high)},
                     "mark": item.mark, "moves": item.n_moves,
                     "grade": mark_of(loss.mean, loss.low, thresholds).value})
    grades = {grade.value: sum(row["grade"] == grade.value for row in rows)
              for grade in (Mark.INACCURACY, Mark.MISTAKE, Mark.BLUNDER)}
    accuracy = (1.0 - sum(grades.values()) / len(rows)) if rows else None
    return {"budget": budget, "mistake": MISTAKE, "blunder": BLUNDER, "decisions": rows,
            "accuracy": accuracy, "grades": grades, "thresholds": list(thresholds)}
