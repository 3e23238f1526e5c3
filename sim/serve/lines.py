"""One readable line per event for the page's log and move list, with the tiles it names.

Why not ``sim.table.render``'s text: that is for a terminal (ASCII boards, aligned columns)
and wraps into garbage in a narrow panel. A line here is a short sentence and the list of
tiles it shows, which the page draws as small dominoes. ``viewer`` is the seat whose view
the line is for: another seat's draw is then "draws a tile" and a deal shows only the
viewer's hand (``None``: a finished trace, where every tile may be shown).
"""

from __future__ import annotations

from typing import Any

from sim.core.seating import team_name, team_of

__all__: list[str] = []  # nothing here is used outside sim.serve


def seat_name(seat: int, viewer: int | None) -> str:
    return "you" if seat == viewer else f"seat {seat}"


def _points(event: dict, players: int) -> str:
    points = int(event.get("points", 0) or 0)
    if not points:
        return f"count {event.get('count', 0)}"
    return (f"count {event.get('count', 0)}: +{points} for "
            f"{team_name(team_of(int(event['seat']), players), players)}")


def event_line(event: dict, players: int, viewer: int | None) -> dict[str, Any]:
    """``{"kind", "seat", "text", "tiles"}`` for one event as ``viewer`` may see it."""
    kind = event["event"]
    seat = event.get("seat")
    who = None if seat is None else seat_name(int(seat), viewer)
    tiles: list[str] = []
    if kind == "game_start":
        text = f"game of {players} · target {event.get('target', '?')}"
    elif kind == "round_start":
        leader = seat_name(int(event.get("leader", 0)), viewer)
        text = (f"round {event.get('round', '?')} dealt · {leader} lead"
                f"{'' if leader == 'you' else 's'} · boneyard {len(event.get('boneyard', []))}")
        if viewer is not None and event.get("hands"):
            tiles = list(event["hands"][viewer])
            text += " · your hand"
    elif kind == "play":
        verb = "open" if event.get("end") is None else "play"
        if who != "you":
            verb += "s"
        where = "" if event.get("end") is None else f" on {event['end']}"
        tiles = [event["tile"]]
        text = f"{who} {verb} {event['tile']}{where} · {_points(event, players)}"
    elif kind == "draw":
        if viewer is None or (seat is not None and int(seat) == viewer):
            tiles = [event["tile"]]
            text = f"{who} draw{'' if who == 'you' else 's'} {event['tile']}"
        else:
            text = f"{who} draws a tile"
    elif kind == "pass":
        text = f"{who} pass{'' if who == 'you' else 'es'}"
    elif kind == "round_end":
        winner = event.get("winner_seat")
        how = (f"{seat_name(int(winner), viewer)} went out" if winner is not None
               else f"{event.get('reason', 'blocked')}, no one went out")
        text = f"round {event.get('round', '?')} ends: {how}"
    elif kind == "game_end":
        winner = event.get("winner")
        text = ("game over: no winner" if winner is None else
                f"game over: {team_name(int(winner), players)} win"
                f"{'' if players == 4 else 's'}")
    else:
        text = kind
    return {"kind": kind, "seat": seat, "text": text, "tiles": tiles}
