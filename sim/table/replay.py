"""``sniff replay``: a trace file shown event by event (the text comes from
``sim.table.render``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sim.display.formatting import printable
from sim.errors import SettingError, SniffError
from sim.store.folders import read_user_text
from sim.table.render import replay_lines

__all__ = ["check_trace_game", "count_games", "read_trace", "replay"]

STEP_PROMPT = "[Enter: next event · q: stop] "
MAX_LINE = 1_000_000  # characters of one event (the longest real ones are a few hundred)


def read_trace(path: Path) -> list[dict]:
    """The events of a JSON Lines trace file; a bad file is one SniffError line."""
    text = read_user_text(path, "trace", "JSON Lines trace")
    events = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise SniffError(f"{path} line {number} is longer than {MAX_LINE:,} characters: "
                             "not a trace event")
        try:
            event = json.loads(line)
        except ValueError as error:  # not JSON, or an integer of thousands of digits
            why = getattr(error, "msg", None) or str(error).split(":")[0]
            raise SniffError(
                f"{path} line {number} is not JSON sniff writes ({why}): not a JSON Lines "
                "trace") from None
        except RecursionError:
            raise SniffError(f"{path} line {number} is nested too deeply: not a trace "
                             "event") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise SniffError(f"{path} line {number} is not a trace event (no \"event\" field)")
        events.append(event)
    if not events:
        raise SniffError(f"{path} holds no events")
    return events


def check_trace_game(events: list[dict], game: int, path: Path) -> None:
    """Game ``game`` of the trace checked against the rules (``sim.table.check``)."""
    from sim.table.check import check_game

    starts = [i for i, event in enumerate(events) if event["event"] == "game_start"]
    if events[0]["event"] != "game_start":
        raise SniffError(f"{path}: event 1 ({events[0]['event']}) comes before any game_start")
    end = starts[game + 1] if game + 1 < len(starts) else len(events)
    check_game(events[starts[game]:end], first=starts[game] + 1, what=str(path))


def count_games(events: list[dict]) -> int:
    """How many games a trace's events hold."""
    return sum(1 for event in events if event["event"] == "game_start")


def replay(
    path: Path,
    game: int,
    write: Callable[[str], None],
    step: bool = False,
    read_line: Callable[[], str] | None = None,
    ascii: bool = False,
    echo_input: bool = False,
) -> None:
    """Write game ``game`` (0-based position in the file) of the trace, one event per block;
    with ``step``, wait for a line of input after each block (end of input or ``q`` stops
    the replay quietly). ``echo_input`` ends the prompt line after each answer (for input
    that is piped, so not echoed by a terminal)."""
    events = read_trace(path)
    games = count_games(events)
    if games == 0:
        raise SniffError(f"{path} holds no game (no game_start event)")
    if not 0 <= game < games:
        raise SettingError(
            f"{{game={game}}} is out of range: {path} holds {games} game"
            f"{'s' * (games != 1)} (0..{games - 1})"
        )
    check_trace_game(events, game, path)  # an impossible (edited) game is refused, not drawn
    blocks = replay_lines(events, game=game, ascii=ascii, hands=True)
    number = 0
    while True:
        try:
            block = next(blocks)
        except StopIteration:
            return
        except (KeyError, TypeError, ValueError, IndexError) as error:
            raise SniffError(
                f"{path}: game {game} event {number} is not a valid trace event "
                f"({type(error).__name__}: {error})"
            ) from None
        number += 1
        write(printable(block) + "\n")  # a trace's names are data, not terminal commands
        if step and read_line is not None:
            write(STEP_PROMPT)
            answer = read_line()
            if answer == "":
                write("\n(end of input: replay stopped)\n")
                return
            if echo_input:
                write("\n")
            if answer.strip().lower() in ("q", "quit"):
                write("(replay stopped)\n")
                return
