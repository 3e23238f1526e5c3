"""``sniff replay`` refuses a trace the rules cannot produce.

A hand-edited trace (a tile the seat does not hold, a wrong seat or score, a deleted line)
used to replay with exit 0 as an impossible game. ``sim.table.check`` walks the game with
the engine's rules code; the oracle (``sim/reference/oracle.py``, an independent
restatement of the rules) must agree with it on every edit tried here.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from sim.errors import SniffError
from sim.kernels.runner import lineup_of
from sim.kernels.trace import game_events as traced
from sim.reference.oracle import check_trace
from sim.table.check import check_game
from strategies import parse_lineup_text
from tests.helpers.cli import error_lines, run_main

LINEUPS = {2: "greedy,random", 3: "greedy,random,heavy", 4: "greedy,random"}


def game_events(players: int, game: int, seed: int = 9) -> list[dict]:
    return traced(lineup_of(players, parse_lineup_text(LINEUPS[players])), seed, game)


def write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    return path


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_engine_game_passes(players) -> None:
    for game in range(25):
        events = game_events(players, game)
        check_trace(copy.deepcopy(events))  # the oracle agrees it is a real game
        check_game(events)


def first(events: list[dict], kind: str, after: int = 3) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == kind and i > after)


def edited(kind: str) -> tuple[list[dict], str]:
    events = game_events(2, 1)
    if kind == "tile not held":
        i = first(events, "play")
        seat = events[i]["seat"]
        start = max(j for j in range(i) if events[j]["event"] == "round_start")
        other = events[start]["hands"][1 - seat][0]
        events[i]["tile"] = other
        return events, f"event {i + 1} (play) is impossible: seat {seat} plays {other}, which "\
                       "it does not hold"
    if kind == "wrong seat":
        i = first(events, "play")
        events[i]["seat"] = 1 - events[i]["seat"]
        return events, f"event {i + 1} (play) is impossible: play by seat"
    if kind == "wrong score":
        i = first(events, "play")
        events[i]["scores"] = [s + 5 for s in events[i]["scores"]]
        return events, f"event {i + 1} (play) is impossible: scores is"
    if kind == "deleted line":
        i = first(events, "play")
        del events[i]
        return events, f"event {i + 1} (play) is impossible"
    if kind == "deleted draw":
        i = first(events, "draw")
        del events[i]
        return events, f"event {i + 1} ("
    if kind == "wrong penalty":
        i = first(events, "round_end")
        events[i]["penalties"][0] += 5
        return events, f"event {i + 1} (round_end) is impossible: penalties is"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["tile not held", "wrong seat", "wrong score", "deleted line",
                                  "deleted draw", "wrong penalty"])
def test_an_edited_trace_is_refused_naming_the_first_bad_event(kind, tmp_path, capsys) -> None:
    events, message = edited(kind)
    path = write(tmp_path / "edited.jsonl", events)
    code, out, err = run_main(["replay", str(path)], capsys)
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"sniff: error: {path}: "), err
    assert message in lines[0], lines[0]
    assert out == ""  # nothing of the impossible game was drawn
    code, _, err = run_main(["replay", str(path), "--analyze", "--budget", "10"], capsys)
    assert code == 2 and message in err, err


def test_the_unedited_trace_still_replays(tmp_path, capsys) -> None:
    events = game_events(2, 1)
    path = write(tmp_path / "game.jsonl", events)
    code, out, err = run_main(["replay", str(path)], capsys)
    assert code == 0, err
    end = events[-1]
    assert f"over: seat {end['winner']} wins (target) after {end['rounds']} rounds" in out


@pytest.mark.parametrize("players", [2, 4])
def test_the_check_and_the_oracle_agree_on_random_edits(players) -> None:
    """Single-value edits of every kind of field: both accept, or both refuse."""
    rng = random.Random(players)
    games = [game_events(players, game) for game in range(4)]
    refused = 0
    for _ in range(150):
        events = copy.deepcopy(rng.choice(games))
        index = rng.randrange(1, len(events))
        event = events[index]
        key = rng.choice([k for k in event if k != "event"])
        value = event[key]
        if isinstance(value, bool) or value is None:
            event[key] = 0
        elif isinstance(value, int):
            event[key] = value + rng.choice([-5, -1, 1, 5])
        elif isinstance(value, str):
            event[key] = rng.choice(["0-0", "3-4", "6-6", "L", "R", "U", "D", "blocked"])
        elif isinstance(value, list) and value and isinstance(value[0], int):
            value[rng.randrange(len(value))] += rng.choice([-5, 5])
        elif isinstance(value, dict):
            arm = rng.choice(list(value))
            value[arm] = None if value[arm] is not None else 3
        else:
            continue
        try:
            check_trace(copy.deepcopy(events))
            oracle_ok = True
        except AssertionError:
            oracle_ok = False
        try:
            check_game(events)
            ours_ok = True
        except SniffError:
            ours_ok = False
        assert ours_ok == oracle_ok, (index, key, event)
        refused += not ours_ok
    assert refused > 100  # the edits did break games


def test_hint_of_an_edited_trace_is_refused_too(tmp_path, capsys) -> None:
    events, message = edited("wrong score")
    path = write(tmp_path / "edited.jsonl", events)
    code, out, err = run_main(["hint", "--trace", str(path), "--round", "1", "--turn", "1",
                               "--budget", "10"], capsys)
    assert code == 2 and message in err and out == "", err
