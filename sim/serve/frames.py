"""One whole table per event, as one seat may see it: what the page draws, event by event,
while the bots play (a move's answer), while you step through the move list (review), and
after a reload or a move made in another tab (a view asked ``since`` an event).

Why one builder for all three: the page must never show two moments at once. Each frame
holds everything the table shows at that event (board, count, scores, the hand sizes and
the boneyard, your own hand, whose turn it is, the event's line), so the page draws a frame
whole and nothing stale is left beside it. A frame names only what ``viewer`` may know: its
own hand, the others as sizes (``sim.serve.lines`` already words their draws "draws a tile");
a round's settlement shows every hand, as the rules count them in the open. ``viewer``
None (a finished trace) shows every hand.
"""

from __future__ import annotations

from typing import Any

from sim.core.seating import team_count, team_of
from sim.serve.lines import event_line
from sim.table.render import ReplayState, halves

__all__: list[str] = []  # nothing here is used outside its room

ACTIONS = ("play", "draw", "pass")
MAX_FRAMES = 600  # frames of one answer: more than a round's events (at most 174 and a deal)


def sorted_tiles(tiles: list[str]) -> list[str]:
    return sorted(tiles, key=lambda t: sorted(halves(t)))


def board_of(state: ReplayState) -> dict[str, Any]:
    """The board in the page's form: opening, arms, where the Sniff lies, the open ends."""
    sniff = None if state.sniff is None else {"arm": state.sniff.arm, "index": state.sniff.index}
    return {"opening": state.opening, "arms": {arm: list(tiles) for arm, tiles in
                                               state.arms.items()},
            "sniff": sniff, "ends": dict(state.ends)}


def turns(events: list[dict], last: int | None) -> list[int | None]:
    """For each event, the seat that acts next within its round (None after a round's end
    or before a deal); ``last`` is the seat to act after the final event (the person when a
    decision waits), known only to the caller. Turn order is public: this names no tile."""
    out: list[int | None] = [None] * len(events)
    following = last
    for index in range(len(events) - 1, -1, -1):
        out[index] = following
        event = events[index]
        if event["event"] in ACTIONS:
            following = int(event["seat"])
        elif event["event"] != "game_end":
            following = None  # a deal, a settlement or the game's start: no one acts before
    return out


def sheet_row(event: dict, before: list[int], players: int) -> dict[str, Any]:
    """The score sheet's row of a round_end: each side's gain, penalty and total."""
    penalties = [0] * team_count(players)
    for seat, penalty in enumerate(event["penalties"]):
        penalties[team_of(seat, players)] += penalty
    gained = [after - was + pen for after, was, pen in zip(event["scores"], before, penalties)]
    return {"round": event["round"], "gained": gained, "penalties": penalties,
            "scores": list(event["scores"]), "reason": event["reason"]}


def settlement_of(event: dict, state: ReplayState) -> dict[str, Any]:
    """A round_end's settlement: every hand left (counted in the open), pips, penalties."""
    return {"round": event.get("round"), "hands": [sorted_tiles(h) for h in state.hands],
            "hand_pips": event["hand_pips"], "penalties": event["penalties"],
            "reason": event["reason"], "winner_seat": event["winner_seat"]}


def table_frames(events: list[dict], players: int, viewer: int | None, start: int = 0,
                 last_turn: int | None = None) -> list[dict[str, Any]]:
    """The frames of ``events[start:]`` (the state replayed from the first event)."""
    state, out, count = ReplayState(), [], 0
    following = turns(events, last_turn)
    scores_before = [0] * team_count(players)
    for index, event in enumerate(events):
        state.apply(event)
        kind = event["event"]
        if kind == "round_start":
            count = 0
        elif kind == "play":
            count = int(event.get("count", 0))
        row = None
        if kind == "round_end":
            row = sheet_row(event, scores_before, players)
            scores_before = list(event["scores"])
        if index < start:
            continue
        hands = state.hands or [[] for _ in range(players)]
        frame: dict[str, Any] = {
            "index": index, "kind": kind, "line": event_line(event, players, viewer),
            "round": state.round, "board": board_of(state), "count": count,
            "marked": [event["tile"]] if kind == "play" else [],
            "sizes": [len(h) for h in hands], "boneyard": state.boneyard,
            "scores": list(state.scores or [0] * team_count(players)),
            "seat": event.get("seat"), "turn": following[index],
            "hand": sorted_tiles(hands[viewer]) if viewer is not None and hands else [],
        }
        if viewer is None:
            frame["hands"] = [list(h) for h in hands]
        if row is not None:
            frame["sheet_row"] = row
            frame["settlement"] = settlement_of(event, state)
        out.append(frame)
    return out
