"""A game's state as the JSON the page gets: only what the person's seat may know.

Why its own module: this is the one place that decides what leaves the server. It reads the
events of ``sim.serve.game`` up to what the page may show and keeps the person's hand, the
table, counts of the other hands and of the boneyard, scores and the person's own view of
each event (``sim.serve.lines``, which never names another seat's tiles or draws). Other
hands appear only as they are settled (``round_end``, where the rules count them in the
open); the boneyard is never sent. ``tests/sim/serve/test_app.py`` checks every response of
whole games against the hidden tiles.
"""

from __future__ import annotations

from typing import Any

from sim.core.layout import EMPTY_LAYOUT
from sim.core.seating import team_count, team_name, team_of
from sim.core.tiles import tile_name
from sim.serve.frames import (
    MAX_FRAMES,
    board_of,
    settlement_of,
    sheet_row,
    sorted_tiles,
    table_frames,
)
from sim.serve.game import WebGame
from sim.serve.lines import event_line
from sim.serve.table import MOVE_POINTS, layout_rule
from sim.table.moves import move_text
from sim.table.render import ReplayState, halves

__all__: list[str] = []  # nothing here is used outside sim.serve


def _sheet(events: list[dict], players: int) -> list[dict[str, Any]]:
    """The score sheet: each settled round's points per side, penalties and totals."""
    rows, before = [], [0] * team_count(players)
    for event in events:
        if event["event"] == "round_end":
            rows.append(sheet_row(event, before, players))
            before = list(event["scores"])
    return rows


def _seats(game: WebGame, state: ReplayState, turn: int | None) -> list[dict[str, Any]]:
    """Each seat around the table: who plays it, its team, its tile count, whose turn."""
    names = game.events[0]["strategies"]
    return [{"seat": seat, "name": "you" if seat == game.seat else f"seat {seat}",
             "strategy": names[seat], "team": team_of(seat, game.players),
             "tiles": len(hand), "you": seat == game.seat, "turn": seat == turn}
            for seat, hand in enumerate(state.hands or [[]] * game.players)]


def _marked(game: WebGame, events: list[dict]) -> list[str]:
    """The tiles placed this round since the person last acted (outlined on the board)."""
    marked: list[str] = []
    for event in events:
        mine = event.get("seat") == game.seat and event["event"] in ("play", "draw", "pass")
        if mine or event["event"] in ("round_start", "round_end"):
            marked = []
        if event["event"] == "play" and event.get("seat") != game.seat:
            marked.append(event["tile"])
    return marked


def _recent(game: WebGame, events: list[dict], since: int | None,
            turn: int | None) -> list[dict[str, Any]]:
    """One frame per event the page has not drawn yet (``since`` events drawn), in order:
    the person's own move, every bot's and every forced one (at most ``MAX_FRAMES``)."""
    if since is None or since >= len(events):
        return []
    start = max(since, 1, len(events) - MAX_FRAMES)
    return table_frames(events, game.players, game.seat, start, turn)


def _settlement(events: list[dict], state: ReplayState) -> dict[str, Any] | None:
    """The last round's settlement when it is the latest thing shown (every hand revealed,
    the last round of the game included)."""
    tail = events[-2:] if events[-1]["event"] == "game_end" else events[-1:]
    if tail[0]["event"] == "play" and events[-1]["event"] == "game_end":
        # The game ended at a placement (the target reached mid-round): no penalties, but
        # every hand is shown as it stands.
        return {"round": state.round, "hands": [sorted_tiles(h) for h in state.hands],
                "hand_pips": [sum(sum(halves(t)) for t in h) for h in state.hands],
                "penalties": None, "reason": "target", "winner_seat": tail[0]["seat"]}
    return settlement_of(tail[0], state) if tail[0]["event"] == "round_end" else None


def _banner(game: WebGame, scores: list[int], winner: int | None) -> str:
    """The result in one line, the winner's score first: ``You win 250 to 180``."""
    if winner is None:
        return f"Game over: no winner ({' to '.join(str(s) for s in scores)})"
    others = " and ".join(str(s) for team, s in enumerate(scores) if team != winner)
    if winner == team_of(game.seat, game.players):
        return f"You win {scores[winner]} to {others}"
    name = team_name(winner, game.players).capitalize()
    return f"{name} win{'' if game.players == 4 else 's'} {scores[winner]} to {others}"


def game_view(session: str, game: WebGame, since: int | None = None) -> dict[str, Any]:
    """The page's whole picture of ``game`` now, with a frame per event from event
    ``since`` on (what happened since the page last drew the table; None: no frames)."""
    shown = game.visible()
    events = game.events[:shown]
    state = ReplayState()
    for event in events:
        state.apply(event)
    round_start = max((i for i, e in enumerate(events) if e["event"] == "round_start"),
                      default=0)
    last = events[-1]
    over = game.over and shown == len(game.events)
    phase = "over" if over else "settled" if last["event"] == "round_end" else "move"
    hand = state.hands[game.seat] if state.hands else []
    turn = game.seat if phase == "move" and game.pending is not None else None
    scores = state.scores or [0] * team_count(game.players)
    view: dict[str, Any] = {
        "session": session,
        "version": game.version,
        "players": game.players,
        "seat": game.seat,
        "target": game.target,
        "seed": game.seed,
        "strategies": game.events[0]["strategies"],
        "teams": [team_name(t, game.players) for t in range(team_count(game.players))],
        "my_team": team_of(game.seat, game.players),
        "phase": phase,
        "round": state.round,
        "board": board_of(state),
        "marked": _marked(game, events),
        "count": next((e["count"] for e in reversed(events[round_start:])
                       if e["event"] == "play"), 0),
        "hand": sorted_tiles(hand),
        "seats": _seats(game, state, turn),
        "sizes": [len(h) for h in state.hands],
        "boneyard": state.boneyard,
        "scores": scores,
        "log": [event_line(e, game.players, game.seat) for e in events[round_start:]],
        "recent": _recent(game, events, since, turn),
        "sheet": _sheet(events, game.players),
        "events": shown,
        "can_take_back": game.can_take_back(),
        "options": [],
        "forced": False,
        "settlement": _settlement(events, state),
    }
    if phase == "over":
        view["winner"] = last["winner"]
        view["banner"] = _banner(game, scores, last["winner"])
    if phase == "move" and game.pending is not None:
        layout = game.pending.layout
        view["forced"] = game.pending.forced
        view["options"] = [
            {"move": move, "tile": tile_name(move >> 2),
             "end": None if layout == EMPTY_LAYOUT else "LRUD"[move & 3],
             "text": move_text(layout, move), "points": layout_rule(MOVE_POINTS, layout, move)}
            for move in game.pending.options
        ]
    return view
