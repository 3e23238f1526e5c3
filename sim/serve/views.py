"""A game's state as the JSON the page gets: only what the person's seat may know.

Why its own module: this is the one place that decides what leaves the server. It reads the
events of ``sim.serve.game`` up to what the page may show and keeps the person's hand, the
table, counts of the other hands and of the boneyard, scores and the person's own view of
each event (``PlayGame``'s text, which never names another seat's tiles or draws). Other
hands appear only as they are settled (``round_end``, where the rules count them in the
open); the boneyard is never sent. ``tests/test_serve_api.py`` checks every response of
whole games against the hidden tiles.
"""

from __future__ import annotations

from typing import Any

from sim.core.layout import EMPTY_LAYOUT, move_points
from sim.core.seating import team_count, team_name, team_of
from sim.core.tiles import tile_name
from sim.serve.game import WebGame
from sim.table.play import move_text
from sim.table.render import ReplayState, halves


def _sorted_tiles(tiles: list[str]) -> list[str]:
    return sorted(tiles, key=lambda t: sorted(halves(t)))


def _board(state: ReplayState) -> dict[str, Any]:
    sniff = None if state.sniff is None else {"arm": state.sniff.arm, "index": state.sniff.index}
    return {"opening": state.opening, "arms": state.arms, "sniff": sniff, "ends": state.ends}


def _sheet(events: list[dict], players: int) -> list[dict[str, Any]]:
    """The score sheet: each settled round's points per side, penalties and totals."""
    rows, before = [], [0] * team_count(players)
    for event in events:
        if event["event"] == "round_end":
            penalties = [0] * team_count(players)
            for seat, penalty in enumerate(event["penalties"]):
                penalties[team_of(seat, players)] += penalty
            gained = [after - was + pen for after, was, pen
                      in zip(event["scores"], before, penalties)]
            rows.append({"round": event["round"], "gained": gained, "penalties": penalties,
                         "scores": event["scores"], "reason": event["reason"]})
            before = list(event["scores"])
    return rows


def game_view(session: str, game: WebGame) -> dict[str, Any]:
    """The page's whole picture of ``game`` now."""
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
    view: dict[str, Any] = {
        "session": session,
        "version": game.version,
        "players": game.players,
        "seat": game.seat,
        "target": game.target,
        "strategies": game.events[0]["strategies"],
        "teams": [team_name(t, game.players) for t in range(team_count(game.players))],
        "my_team": team_of(game.seat, game.players),
        "phase": phase,
        "round": state.round,
        "board": _board(state),
        "count": next((e["count"] for e in reversed(events[round_start:])
                       if e["event"] == "play"), 0),
        "hand": _sorted_tiles(hand),
        "sizes": [len(h) for h in state.hands],
        "boneyard": state.boneyard,
        "scores": state.scores or [0] * team_count(game.players),
        "log": game.texts[round_start:shown] if round_start else game.texts[:shown],
        "sheet": _sheet(events, game.players),
        "options": [],
        "forced": False,
    }
    if phase == "settled":
        view["settlement"] = {"hands": [_sorted_tiles(h) for h in state.hands],
                              "hand_pips": last["hand_pips"], "penalties": last["penalties"],
                              "reason": last["reason"], "winner_seat": last["winner_seat"]}
    if phase == "over":
        view["winner"] = last["winner"]
    if phase == "move" and game.pending is not None:
        layout = game.pending.layout
        view["forced"] = game.pending.forced
        view["options"] = [
            {"move": move, "tile": tile_name(move >> 2),
             "end": None if layout == EMPTY_LAYOUT else "LRUD"[move & 3],
             "text": move_text(layout, move), "points": int(move_points(layout, move))}
            for move in game.pending.options
        ]
    return view

