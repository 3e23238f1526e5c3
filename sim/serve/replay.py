"""A trace (``sniff trace``, ``sniff play --trace``, a served game's download) as frames the
page steps through on the board.

Why it reuses what it does: the file is read by ``sim.table.replay.read_trace`` (bounded,
one-line errors) and its game checked against the rules (``check_trace_game``) before it is
shown, exactly as ``sniff replay`` does; each frame's text is ``sim.table.render``'s. A trace
is a finished game, so every hand in it may be shown.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from sim.errors import SniffError
from sim.serve.frames import board_of
from sim.serve.lines import event_line
from sim.serve.review import position_at
from sim.table.render import ReplayState, render_event
from sim.table.replay import check_trace_game, count_games, read_trace

__all__: list[str] = []  # nothing here is used outside sim.serve

MAX_TRACE = 4 * 2**20  # bytes of an uploaded trace: a few hundred games
MAX_FRAMES = 20_000  # events of one game shown (a real game has a few hundred)


def _game_events(data: bytes, game: int) -> tuple[list[dict], int]:
    """Game ``game``'s events of a trace's bytes, checked as ``sniff replay`` checks them,
    and how many games the trace holds."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.jsonl"
        path.write_bytes(data)
        try:
            events = read_trace(path)
        except SniffError as error:  # name the upload, not the temporary file
            raise SniffError(str(error).replace(str(path), "the trace")) from None
        games = count_games(events)
        if not 0 <= game < games:
            raise SniffError(f"game must be 0..{games - 1}: the trace holds {games} game(s)")
        check_trace_game(events, game, Path("the trace"))
    starts = [i for i, event in enumerate(events) if event["event"] == "game_start"]
    end = starts[game + 1] if game + 1 < len(starts) else len(events)
    chosen = events[starts[game] : end]
    if len(chosen) > MAX_FRAMES:
        raise SniffError(f"game {game} has over {MAX_FRAMES:,} events: not a game to step through")
    return chosen, games


def trace_position(data: bytes, game: int, index: int) -> dict[str, Any]:
    """The position before the next placement after event ``index`` of a traced game (a
    trace is a finished game: any seat's hand may be shown), as ``sniff hint``'s text."""
    chosen, _ = _game_events(data, game)
    if not 0 <= index < len(chosen):
        raise SniffError(f"event must be 0..{len(chosen) - 1}")
    return {"text": position_at(chosen, index, None)}


def trace_frames(data: bytes, game: int = 0) -> dict[str, Any]:
    """Game ``game`` of a trace's bytes: one frame per event (board, hands, scores, text)."""
    chosen, games = _game_events(data, game)
    players = int(chosen[0].get("players", 2))
    state, frames = ReplayState(), []
    for event in chosen:
        state.apply(event)
        frames.append({
            "event": event["event"], "round": state.round, "text": render_event(event, state),
            "line": event_line(event, players, None),
            "board": board_of(state),
            "hands": [list(hand) for hand in state.hands], "boneyard": state.boneyard,
            "scores": list(state.scores),
        })
    return {"games": games, "game": game, "players": chosen[0].get("players"),
            "strategies": chosen[0].get("strategies", []), "frames": frames}
