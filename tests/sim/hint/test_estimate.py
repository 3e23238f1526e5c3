"""``sniff hint``, ``sniff replay --analyze`` and ``sniff play --hint`` (docs/hint.md).

- positions rebuilt from traces are exactly the view the engine hands a strategy (a plugin
  records it), and the text form reads back to the same position and legal moves;
- the hint's numbers agree with a straightforward simulation that shares none of its
  sampling code: deals drawn by rejection from uniform shuffles, full states built by hand,
  the rounds played out by the engine's turn loop;
- the same seed gives the same numbers; bad input is one line and exit 2;
- the commands work end to end, and ``play --hint`` shows the same analysis as ``sniff
  hint`` of the saved trace (so it used nothing but the public view).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import strategies
from sim.core import engine
from sim.core import observation as view
from sim.core.layout import ARM_NAMES
from sim.core.seating import team_of
from sim.core.tiles import N_TILES, PIP_MASK, TILE_PIPS
from sim.hint.estimate import analyse
from sim.hint.position import format_position, parse_position
from sim.hint.tracker import decisions, position_from_trace
from sim.kernels.runner import lineup_of, trace_events
from sim.kernels.trace import EventDecoder, start_event, trace_games
from strategies import parse_lineup_text
from tests.helpers import ROOT, TESTS
from tests.helpers.cli import POSITION_TEXT, error_lines, run_main, sniff

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")

PLUGINS = TESTS / "plugins"


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[int, Path]:
    """One traced file per player count (two games each), written once."""
    folder = tmp_path_factory.mktemp("hint")
    files = {}
    for players, names in ((2, ["greedy", "blocker"]), (3, ["greedy", "random", "heavy"]),
                           (4, ["partner", "greedy"])):
        path = folder / f"game{players}.jsonl"
        events = trace_games(players, 5, names, 2)
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        files[players] = path
    return files


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------ positions


@pytest.fixture(scope="module")
def observer():
    """The recording plugin (``tests/plugins/observer.py``), registered for this module."""
    with pytest.MonkeyPatch.context() as patch, strategies.kept_registry():
        patch.syspath_prepend(str(PLUGINS))
        strategies.load_plugin("observer")
        import observer as module

        yield module


@pytest.mark.parametrize("players", [2, 3, 4])
def test_positions_from_a_trace_are_the_engines_view(observer, players: int) -> None:
    """Every asked decision: the rebuilt observation and legal moves equal the engine's.

    A position does not carry the round's public record (docs/hint.md), so the view is
    compared up to it.
    """
    lineup = lineup_of(players, parse_lineup_text(",".join(["observer"] * players)))
    checked = 0
    for game_id in range(2):
        observer.SEEN.clear()
        rows, _ = trace_events(lineup, 11, game_id, round_cap=3)
        decoder = EventDecoder(players)
        events = [start_event(lineup, 11, game_id, 3)] + [decoder.decode(r) for r in rows]
        asked = [d for d in decisions(events) if len(d.position.legal_moves()) > 1]
        assert len(asked) == len(observer.SEEN) > 10
        for decision, (slots, moves) in zip(asked, observer.SEEN):
            position = decision.position.check()
            rebuilt = position.observation()[:view.RECORD]
            assert tuple(int(v) for v in rebuilt) == slots[:view.RECORD]
            assert tuple(position.legal_moves()) == moves
            assert decision.move == moves[0]  # the observer plays its first move
            checked += 1
    assert checked > 20


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_text_form_round_trips(traces, players: int) -> None:
    """Written from a trace, read back: the same position, view and legal moves, and the
    move played among them (every placement of both games, forced ones included)."""
    events = read(traces[players])
    seen_forced = seen_lacks = 0
    for game in range(2):
        for decision in decisions(events, game):
            position = decision.position.check()
            text = format_position(position)
            back = parse_position(text)
            assert back == position
            assert back.legal_moves() == position.legal_moves()
            assert decision.move in back.legal_moves()
            assert np.array_equal(back.observation(), position.observation())
            assert format_position(back) == text
            seen_forced += position.drawn >= 0
            seen_lacks += any(position.lacks)
    assert seen_forced > 0 and seen_lacks > 0


def test_position_at_a_round_and_turn(traces) -> None:
    events = read(traces[4])
    decision = position_from_trace(events, 1, 2, 3)
    assert (decision.round, decision.turn) == (2, 3)
    assert len(decision.position.table) == 2
    plays = [e for e in events if e["event"] == "play"]
    assert decision.seat in {e["seat"] for e in plays}


# ------------------------------------------------------------ the numbers


def direct_values(position, moves, deals: int, seed: int) -> np.ndarray:
    """Each move's (win value, points) on ``deals`` deals, the straightforward way: hidden
    tiles shuffled uniformly and dealt in seat order, deals that break a known lack
    rejected (so the accepted ones are uniform over the consistent deals), the move placed
    and the round played out in plain Python by the rules oracle's layout and the
    plain-Python greedy player (``sim.reference.python_model``, which ends every game exactly as
    the engine does), the end valued by expert's win model run as plain Python."""
    from sim.core import seating
    from strategies.value import round_value

    patch = pytest.MonkeyPatch()
    patch.setattr(round_value, "win_probability", round_value.win_probability.py_func)
    patch.setattr(round_value, "value_features", round_value.value_features.py_func)
    patch.setattr(view, "team_of", seating.team_of)
    patch.setattr(view, "team_count", seating.team_count)
    try:
        return _direct(position, moves, deals, seed, round_value.outcome.py_func)
    finally:
        patch.undo()


def _play_round(position, hands: dict[int, set[int]], boneyard: list[int], move: int):
    """Place ``move`` and play the round out with greedy everywhere: the final scores,
    and the team that reached the target (-1 if none)."""
    from sim.reference.python_model import choose, moves_for, place
    from sim.reference.rules import Layout, penalty, points_for

    players, target = position.players, position.target
    layout = Layout()
    for tile, arm in position.table:
        place(layout, tile, ARM_NAMES[max(arm, 0)])
    scores = list(position.scores)
    seat, placed = position.seat, (move >> 2, ARM_NAMES[move & 3])
    while True:
        if placed is None:
            options = moves_for(layout, hands[seat])
            if options:
                placed = choose("greedy", layout, options, None)
            while placed is None and boneyard:
                tile = boneyard.pop(0)
                hands[seat].add(tile)
                fitting = moves_for(layout, {tile})
                if fitting:
                    placed = choose("greedy", layout, fitting, None)
        if placed is not None:
            place(layout, *placed)
            hands[seat].discard(placed[0])
            team = team_of(seat, players)
            scores[team] += points_for(layout.count())
            if scores[team] >= target:
                return scores, team
            if not hands[seat]:
                break
        elif not any(moves_for(layout, hand) for hand in hands.values()):
            break
        placed = None
        seat = (seat + 1) % players
    for other, hand in hands.items():
        scores[team_of(other, players)] -= penalty(sum(TILE_PIPS[t] for t in hand))
    return scores, -1


def _direct(position, moves, deals, seed, outcome) -> np.ndarray:
    from strategies.value.score_table import N_FEATURES

    rng = np.random.default_rng(seed)
    players, seat, team = position.players, position.seat, position.team()
    hidden = [t for t in range(N_TILES) if t not in position.hand
              and t not in {tile for tile, _ in position.table}]
    start = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    start[engine.PLAYERS], start[engine.TARGET] = players, position.target
    for index, score in enumerate(position.scores):
        start[engine.SCORES + index] = score
    out = np.zeros((len(moves), deals, 2))
    accepted = 0
    while accepted < deals:
        order = [int(t) for t in rng.permutation(hidden)]
        hands = {seat: set(position.hand)}
        for other in range(players):
            if other != seat:
                hands[other] = {order.pop() for _ in range(position.sizes[other])}
        if any(PIP_MASK[v] >> t & 1 for other, tiles in hands.items() if other != seat
               for t in tiles for v in range(7) if position.lacks[other] >> v & 1):
            continue
        for index, move in enumerate(moves):
            played = {s: set(tiles) for s, tiles in hands.items()}
            scores, winner = _play_round(position, played, list(order), move)
            end = start.copy()
            end[engine.WINNER_TEAM] = winner
            for index_team, score in enumerate(scores):
                end[engine.SCORES + index_team] = score
            for other, tiles in played.items():
                end[engine.HANDS + other] = sum(1 << t for t in tiles)
            out[index, accepted, 0] = outcome(end, start, team, 0, np.zeros(N_FEATURES))
            out[index, accepted, 1] = scores[team] - position.scores[team]
        accepted += 1
    return out


@pytest.mark.parametrize("players", [2, 4])
def test_hint_agrees_with_a_direct_simulation(traces, players: int) -> None:
    """On a position where another seat has known lacks and there are three tiles to
    choose from (or the first decision, if the traces have none)."""
    events = read(traces[players])
    asked = [d.position.check() for game in range(2) for d in decisions(events, game)
             if len(d.position.legal_moves()) > 1]
    position = next((p for p in asked if any(m for s, m in enumerate(p.lacks) if s != p.seat)
                     and len({m >> 2 for m in p.legal_moves()}) > 2),
                    asked[0])
    hint = analyse(position, budget=400, policy="greedy", seed=3)
    moves = [value.move for value in hint.moves]
    assert len(moves) >= 2
    direct = direct_values(position, moves, 400, seed=4)
    for index, value in enumerate(hint.moves):
        for kind, estimate in ((0, value.win), (1, value.points)):
            sample = direct[index, :, kind]
            error = (estimate.high - estimate.low) / (2 * 1.96)
            combined = np.hypot(error, sample.std(ddof=1) / np.sqrt(len(sample)))
            assert abs(estimate.mean - sample.mean()) <= 4 * combined + 1e-9, (value.name, kind)
        assert value.win.low <= value.win.mean <= value.win.high
    # best first; each move's loss is the best's win value minus its own, deal by deal
    wins = [value.win.mean for value in hint.moves]
    assert wins == sorted(wins, reverse=True)
    for value in hint.moves:
        assert value.loss.mean == pytest.approx(wins[0] - value.win.mean, abs=1e-12)
        assert value.loss.low <= value.loss.mean <= value.loss.high


def test_the_same_seed_gives_the_same_numbers(traces, tmp_path, capsys) -> None:
    position = position_from_trace(read(traces[2]), 0, 1, 4).position
    path = tmp_path / "p.txt"
    path.write_text(format_position(position))
    documents = []
    for seed in ("5", "5", "6"):
        code, out, err = run_main(["hint", str(path), "--budget", "100", "--seed", seed,
                                   "--format", "json"], capsys)
        assert code == 0, err
        documents.append(json.loads(out))
        documents[-1].pop("seconds")
    first, again, other = documents
    assert first == again
    assert first["moves"] != other["moves"]
    assert len(first["moves"]) == len(position.legal_moves())
    assert set(first["heuristics"]) == {"greedy", "heavy", "defensive", "blocker", "partner",
                                        "weighted", "learned"}


# ------------------------------------------------------------ bad input

GOOD = POSITION_TEXT


@pytest.mark.parametrize("text,message", [
    ("hello world\n", "is not a position line"),
    ("players: 2\nseat: 0\n", "missing scores, hand, table, sizes, boneyard"),
    ("players: 5\n" + GOOD.split("\n", 1)[1], "players must be 2, 3 or 4"),
    (GOOD.replace("hand: 1-2 3-4", "hand: 1-2 1-2"), "twice in the hand"),
    (GOOD.replace("hand: 1-2", "hand: 2-6"), "both in the hand and on the table"),
    (GOOD.replace("boneyard: 14", "boneyard: 13"), "not 28"),
    (GOOD.replace("sizes: 5 6", "sizes: 5 12"), "cannot hold 12 tiles"),
    (GOOD.replace("sizes: 5 6", "sizes: 6 6"), "the hand holds 5"),
    (GOOD.replace("6-1 R", "5-1 L"), "not legal there"),
    (GOOD.replace("hand: 1-2", "hand: 1-9"), "not a tile"),
    (GOOD.replace("scores: 10 20", "scores: 10 250"), "the game is over"),
    (GOOD.replace("scores: 10 20", "scores: 11 20"), "not a multiple of 5"),
    (GOOD.replace("lacks: 1=3,4", "lacks: 1=0,1,2,3,4,5,6"), "no deal of the hidden tiles"),
    (GOOD.replace("lacks: 1=3,4", "lacks: 0=5"), "is said to lack 5 but holds 5-5"),
    (GOOD.replace("table: 2-6,", "table: 2-6 L,"), "the table's first placement is the opening"),
    (GOOD + "drawn: 3-4\n", "the drawn tile 3-4 fits no open end"),
])
def test_a_bad_position_is_one_line(tmp_path, capsys, text: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    code, out, err = run_main(["hint", str(path), "--budget", "10"], capsys)
    lines = error_lines(err)
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), err
    assert message in lines[0]


def test_the_good_position_is_analysed(tmp_path, capsys) -> None:
    path = tmp_path / "good.txt"
    path.write_text(GOOD)
    code, out, err = run_main(["hint", str(path), "--budget", "50"], capsys)
    assert code == 0, err
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\S+ on [LRUD]", line)]
    assert len(rows) == len(parse_position(GOOD).legal_moves()) == 4


@pytest.mark.parametrize("args,message", [
    (["--budget", "1"], "--budget must be 2..100,000"),
    (["--budget", "1000000"], "--budget must be 2..100,000"),
    (["--policy", "clever"], "--policy must be one of"),
    (["--round", "99", "--turn", "1"], "--round 99 is not in game 0"),
    (["--round", "1", "--turn", "999"], "--turn 999 is not in round 1"),
    (["--game", "7", "--round", "1", "--turn", "1"], "--game 7 is out of range"),
    (["--round", "1"], "--trace needs --round and --turn"),
])
def test_bad_trace_options_are_one_line(traces, capsys, args, message) -> None:
    code, out, err = run_main(["hint", "--trace", str(traces[2]), *args], capsys)
    lines = error_lines(err)
    assert code == 2 and len(lines) == 1 and message in lines[0], err


def test_hint_refuses_a_position_and_a_trace_together(traces, capsys) -> None:
    code, _, err = run_main(["hint", str(traces[2]), "--trace", str(traces[2])], capsys)
    assert code == 2 and "not both" in error_lines(err)[0]


# ------------------------------------------------------------ end to end


def test_replay_analyze_marks_the_costly_moves(traces, capsys) -> None:
    path = traces[2]
    code, out, err = run_main(["replay", str(path), "--analyze", "--budget", "60", "--game",
                               "1"], capsys)
    assert code == 0, err
    asked = [d for d in decisions(read(path), 1) if len(d.position.legal_moves()) > 1]
    rows = [line for line in out.splitlines() if re.match(r"\s+\d+\s+\d+\s+\d\s", line)]
    assert len(rows) == len(asked)
    for row, decision in zip(rows, asked):
        assert row.split()[:3] == [str(decision.round), str(decision.turn), str(decision.seat)]
        loss, low = map(float, re.search(r"(-?[\d.]+) \[\s*(-?[\d.]+),", row).groups())
        mark = row.split()[-1]
        if mark in ("?", "??"):  # (the row rounds to 0.1: an interval above 0 shows >= 0.0)
            assert low >= 0 and loss >= (10 if mark == "??" else 3), row
        elif loss >= 3.05 and low >= 0.05:
            raise AssertionError(f"a costly move is not marked: {row}")
    assert re.search(r"^seat 0: \d+ decisions", out, re.M)
    code, out, err = run_main(["replay", str(path), "--analyze", "--budget", "20", "--game",
                               "1", "--seat", "1"], capsys)
    assert code == 0, err
    seats = {line.split()[2] for line in out.splitlines()
             if re.match(r"\s+\d+\s+\d+\s+\d\s", line)}
    assert seats == {"1"}
    code, _, err = run_main(["replay", str(path), "--analyze", "--budget", "0"], capsys)
    assert code == 2 and len(error_lines(err)) == 1


def hint_rows(text: str) -> list[list[str]]:
    """(move, win%) of each row of a hint table."""
    return re.findall(r"^\s+(?:\d+\s+)?\d+\s+(.+? on [LRUD]|open with \S+)\s+\d+\s+([\d.]+%)",
                      text, re.M)


def test_play_hint_shows_the_analysis_of_the_public_view(tmp_path, capsys) -> None:
    trace = tmp_path / "played.jsonl"
    run = sniff("play", "--players", "4", "--seat", "0", "--seed", "11", "--hint",
                "--hint-budget", "200", "--trace", str(trace), stdin="h\n" + "1\n" * 3000)
    assert run.returncode == 0, run.stderr
    assert "h for a hint, q to quit" in run.stdout
    block = run.stdout.split("hint: ", 1)[1].split("your move", 1)[0]
    shown = hint_rows(block)
    assert len(shown) >= 2
    # The same position taken from the saved trace, analysed by sniff hint with the same
    # seed and budget, gives the same table: play --hint saw only the public view.
    events = read(trace)
    first = next(d for d in decisions(events) if d.seat == 0
                 and len(d.position.legal_moves()) > 1)
    code, out, err = run_main(["hint", "--trace", str(trace), "--round", str(first.round),
                               "--turn", str(first.turn), "--budget", "200", "--seed", "11"],
                              capsys)
    assert code == 0, err
    assert hint_rows(out) == shown


def test_the_documented_example_is_consistent() -> None:
    """docs/hint.md: its position reads back, and its output table lists exactly that
    position's legal moves (the example is a real run's output)."""
    page = (ROOT / "docs" / "hint.md").read_text()
    blocks = re.findall(r"```text\n(.*?)```", page, re.S)
    position = parse_position(next(b for b in blocks if b.startswith("# sniff position")))
    output = next(b for b in blocks if "play-outs per move on the same deals" in b)
    names = [name for name, _ in hint_rows(output)]
    assert sorted(names) == sorted(position.move_name(m) for m in position.legal_moves())


def test_each_heuristic_is_dispatched_by_its_name() -> None:
    """A hint's heuristic is asked by its name (``GREEDY`` ... ``LEARNED``), never by its
    place alone: each name is its place in ``HEURISTICS`` and calls that strategy."""
    import ast
    import inspect

    from sim.hint import search

    calls = {}
    tree = ast.parse(inspect.getsource(search.choose_heuristic.py_func))
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            name = node.test.comparators[0].id
            calls[name] = node.body[0].value.func.id
    assert calls == {name.upper(): f"choose_{name}" for name in search.HEURISTICS}
    for place, name in enumerate(search.HEURISTICS):
        assert getattr(search, name.upper()) == place
