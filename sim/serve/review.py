"""The analysis board's server side: a game's move list, a position from any point of it
(for the set-up board), and the analysis of a finished game as ``sniff analyze`` makes it
on the game's downloaded trace: the same figures, marks and accuracy.

Why here and not in the page: each frame is the replay model's (``sim.table.render``), each
position ``sim.hint.position``'s tracker, each analysis ``sim.analyze``'s own valuation
(``sim.analyze.study.analyse_trace_game``), so the page holds no rule and the browser's
figures never drift from the command's. A game in play is seen from the person's seat
only (the other hands as sizes, their draws as "draws a tile"); a finished trace shows
every hand.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.analyze.settings import DEFAULT_BUDGET, AnalyzeSettings, Mark
from sim.analyze.sources import GameRef
from sim.analyze.study import analyse_trace_game
from sim.errors import SniffError
from sim.hint.estimate import check_budget
from sim.hint.position import format_position
from sim.hint.tracker import PublicTracker, decisions
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


SYMBOLS = {Mark.INACCURACY.value: "?!", Mark.MISTAKE.value: "?", Mark.BLUNDER.value: "??"}
ROW_COLUMNS = ("decision", "round", "turn", "seat", "phase", "kind", "moves", "played", "best",
               "win_played", "win_best", "loss", "loss_full", "loss_low", "loss_high",
               "separated", "best_separated", "deals", "exact")
SUMMARY_COLUMNS = ("decisions", "loss", "loss_full", "accuracy", "error_rate", "inaccuracies",
                   "mistakes", "blunders", "separated", "noise_share", "best_played")


def trace_name(game: WebGame) -> str:
    """The file name *Download trace* gives the game: ``sniff analyze`` draws each
    decision's deals from the source's name, so the browser's analysis uses it too."""
    return f"serve-seed{game.seed}.jsonl"


def _plain(value: Any) -> Any:
    """A table's cell as a JSON value (a numpy number as Python's)."""
    return value.item() if isinstance(value, np.generic) else value


def analysis_command(game: WebGame, settings: AnalyzeSettings) -> str:
    """The ``sniff analyze`` line that gives the same figures on the downloaded trace."""
    seed = f" --seed {settings.seed}" if settings.seed else ""
    return (f"sniff analyze {trace_name(game)} --strategy human --budget "
            f"{settings.budget}{seed}")


def game_analysis(game: WebGame, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """Every decision of the person with more than one move, valued by ``sniff analyze``'s
    own call (``sim.analyze.study.analyse_trace_game``: its two searches of ``budget``
    play-outs per move, its policy, exact endgames and seed) on the game as its downloaded
    trace, so each figure is the one ``sniff analyze`` gives on that file. Each row holds
    the decisions table's figures, names its placement's ``event`` (the move list's index),
    so the page can show the table there, its ``grade`` (``sniff analyze``'s mark:
    inaccuracy, mistake, blunder) and that grade's ``mark`` (?!, ?, ??); ``accuracy`` and
    the other ``summary`` figures are the ``strategies`` table's."""
    if not game.over:
        raise SniffError("the analysis is made once the game is over")
    check_budget(budget, "budget")
    settings = AnalyzeSettings(budget=budget).check()
    tables = analyse_trace_game(game.events, GameRef(trace_name(game), 0), settings,
                                (game.seat,))
    where = _placements(game.events)
    rows = []
    for record in tables["decisions"].to_dict("records"):
        row = {column: _plain(record[column]) for column in ROW_COLUMNS}
        row["event"] = where[(row["round"], row["turn"])]
        row["grade"], row["mark"] = record["mark"], SYMBOLS.get(record["mark"], "")
        rows.append(row)
    strategies = tables["strategies"]
    summary = ({column: _plain(strategies[column].iloc[0]) for column in SUMMARY_COLUMNS}
               if len(strategies) else None)
    grades = {grade.value: sum(row["grade"] == grade.value for row in rows)
              for grade in (Mark.INACCURACY, Mark.MISTAKE, Mark.BLUNDER)}
    return {"budget": settings.budget, "policy": settings.policy, "seed": settings.seed,
            "endgame": settings.endgame.value, "source": trace_name(game), "game_id": 0,
            "command": analysis_command(game, settings), "decisions": rows,
            "accuracy": summary["accuracy"] if summary else None, "summary": summary,
            "grades": grades, "symbols": SYMBOLS, "thresholds": list(settings.thresholds)}
