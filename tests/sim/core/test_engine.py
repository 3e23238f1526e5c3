"""One unit case per rule of docs/rules.md, run on the compiled engine itself.

Replay games played by the compiled engine through the independent rules oracle.

The engine (``sim/``) and the oracle (``sim/reference/oracle.py``) are written separately from the
rule text; every event of every game here must agree with the oracle, and the games must
actually reach the rare corners (blocked rounds, passes, Sniff branches, later doubles,
wins in mid-round), or agreement would prove little. About 2,100 games per player count.
"""

from __future__ import annotations

import functools
import json
from collections import Counter

import numba
import numpy as np
import pytest

from sim.core import engine
from sim.core.layout import (
    ARM_NAMES,
    EMPTY_LAYOUT,
    count_ends,
    decode_ends,
    legal_moves,
    place_tile,
)
from sim.core.tiles import parse_tile, tiles_mask
from sim.kernels.runner import lineup_of, play_batch
from sim.kernels.trace import trace_games
from sim.reference.oracle import check_trace, split_games
from strategies import parse_spec
from tests.helpers.engine_harness import KIND, Setup, play_turns


def lay(plays: list[tuple[str, str | None]]) -> list[tuple[int, dict]]:
    """Place tiles one by one; the count and open ends after each placement."""
    layout = EMPTY_LAYOUT
    out = []
    for tile, arm in plays:
        layout = place_tile(layout, parse_tile(tile), 0 if arm is None else ARM_NAMES.index(arm))
        out.append((count_ends(layout), decode_ends(layout)))
    return out


def moves_of(plays: list[tuple[str, str | None]], hand: list[str]) -> set[tuple[str, str]]:
    layout = EMPTY_LAYOUT
    for tile, arm in plays:
        layout = place_tile(layout, parse_tile(tile), 0 if arm is None else ARM_NAMES.index(arm))
    moves = np.zeros(engine.MAX_MOVES, dtype=np.int64)
    n = legal_moves(layout, tiles_mask([parse_tile(t) for t in hand]), moves)
    from sim.core.tiles import tile_name

    return {(tile_name(int(m) >> 2), ARM_NAMES[int(m) & 3]) for m in moves[:n]}


def test_no_decision_has_more_legal_moves_than_a_batch_row_holds():
    """A batch's rows keep ``ROW_MOVES`` (28) moves: each arm fits only the 7 tiles that
    carry its open value. Every arm field fits at most 7 tiles, the empty table one move per
    tile, and four arms open at one value with every tile in hand reach exactly 28."""
    from sim.core.buffers import ROW_MOVES
    from sim.core.layout import ARM_FITS, ARM_OPEN
    from sim.core.tiles import ALL_TILES

    assert max(bin(int(fits)).count("1") for fits in ARM_FITS) == 7
    moves = np.zeros(engine.MAX_MOVES, dtype=np.int64)
    assert legal_moves(EMPTY_LAYOUT, ALL_TILES, moves) == 28
    for value in range(7):
        four_open = sum((value | ARM_OPEN) << (8 * arm) for arm in range(4))
        assert legal_moves(four_open, ALL_TILES, moves) == ROW_MOVES == 28


# --- the layout and the count (worked examples of docs/rules.md)


def test_worked_example_sniff_opening():
    steps = lay([("4-4", None), ("4-6", "L"), ("4-1", "R"), ("4-2", "U")])
    assert [count for count, _ in steps] == [8, 14, 15, 13]
    assert steps[0][1] == {"L": 4, "R": 4, "U": None, "D": None}
    assert steps[1][1] == {"L": 6, "R": 4, "U": None, "D": None}
    assert steps[2][1] == {"L": 6, "R": 1, "U": 4, "D": 4}
    assert steps[3][1] == {"L": 6, "R": 1, "U": 2, "D": 4}


def test_a_double_opening_is_counted_once_whichever_side_is_continued_first():
    # Continuing R first leaves the Sniff terminal on L: both halves plus R's new end.
    steps = lay([("4-4", None), ("4-6", "R"), ("4-1", "L")])
    assert [count for count, _ in steps] == [8, 14, 15]
    assert steps[1][1] == {"L": 4, "R": 6, "U": None, "D": None}
    assert steps[2][1] == {"L": 1, "R": 6, "U": 4, "D": 4}


def test_a_sniff_played_on_l_counts_both_halves_until_continued():
    steps = lay([("3-5", None), ("3-3", "L"), ("3-2", "L"), ("3-6", "D")])
    assert [count for count, _ in steps] == [8, 11, 13, 16]
    assert steps[2][1] == {"L": 2, "R": 5, "U": 3, "D": 3}


def test_worked_example_sniff_not_opening_and_later_double_on_branch():
    steps = lay([("3-5", None), ("5-5", "R"), ("5-0", "R"), ("5-6", "U"), ("6-6", "U")])
    assert [count for count, _ in steps] == [8, 13, 13, 14, 20]
    assert steps[2][1] == {"L": 3, "R": 0, "U": 5, "D": 5}
    assert steps[4][1] == {"L": 3, "R": 0, "U": 6, "D": 5}


def test_later_double_on_the_line_counts_twice_then_nothing_once_covered():
    steps = lay([("3-5", None), ("5-5", "R"), ("3-3", "L"), ("3-1", "L")])
    # Sniff terminal (10) + a terminal later double 3-3 (6); then 3-3 is inside: 10 + 1.
    assert [count for count, _ in steps] == [8, 13, 16, 11]


def test_only_the_first_double_is_the_sniff():
    steps = lay([("2-2", None), ("2-6", "L"), ("6-6", "L"), ("2-5", "R")])
    # 6-6 is a later double: it never opens branches, even with both Sniff sides continued.
    assert steps[2][0] == 4 + 12
    assert steps[3][1] == {"L": 6, "R": 5, "U": 2, "D": 2}
    assert steps[3][0] == 12 + 5 + 2 + 2


def test_branches_are_not_playable_before_both_line_sides_are_continued():
    assert moves_of([("4-4", None), ("4-6", "L")], ["4-2"]) == {("2-4", "R")}
    assert moves_of([("4-4", None), ("4-6", "L"), ("4-1", "R")], ["4-2"]) == {
        ("2-4", "U"),
        ("2-4", "D"),
    }


def test_opening_may_be_any_tile_of_the_hand():
    assert moves_of([], ["0-1", "5-5", "2-6"]) == {("0-1", "L"), ("5-5", "L"), ("2-6", "L")}


@pytest.mark.parametrize(("pips", "penalty"), [(0, 0), (2, 0), (3, 5), (7, 5), (8, 10),
                                               (12, 10), (13, 15), (41, 40)])
def test_settlement_rounds_each_hand_to_the_nearest_five(pips, penalty):
    assert engine.round_to_five(pips) == penalty


# --- turns, drawing, passing, blocking, settlement, winning


def test_a_drawn_playable_tile_is_played_at_once():
    setup = Setup(
        players=2,
        hands=[["3-4", "5-5", "0-6"], ["1-3", "2-2"]],
        boneyard=["3-3", "0-4", "2-6", "1-1", "1-5"],
        plays=[("1-2", None)],
    )
    _, _, _, events = play_turns(setup, seat=0)
    first = [(e["kind"], e["seat"], e.get("tile"), e.get("arm")) for e in events[:4]]
    assert first == [
        (KIND["draw"], 0, "3-3", None),
        (KIND["draw"], 0, "0-4", None),
        (KIND["draw"], 0, "2-6", None),
        (KIND["play"], 0, "2-6", "R"),
    ]


def test_a_player_with_a_legal_tile_never_draws():
    setup = Setup(players=2, hands=[["2-4", "0-0"], ["0-5"]], boneyard=["3-3"],
                  plays=[("1-2", None)])
    _, _, _, events = play_turns(setup, seat=0)
    assert events[0]["kind"] == KIND["play"] and events[0]["tile"] == "2-4"


def test_pass_only_with_an_empty_boneyard_then_domino_settles():
    setup = Setup(players=2, hands=[["3-4"], ["2-5"]], plays=[("1-2", None)])
    reason, state, row, events = play_turns(setup, seat=0)
    assert [e["kind"] for e in events] == [KIND["pass"], KIND["play"], KIND["round_end"]]
    assert reason == engine.End.DOMINO and row[engine.ROUND_DOMINO_SEAT] == 1
    assert events[-1]["penalties"][:2] == [5, 0]
    assert list(state[engine.SCORES : engine.SCORES + 2]) == [-5, 0]
    # A pass is public: the passer is known to lack the open values 1 and 2.
    assert state[engine.LACKS + 0] == (1 << 1) | (1 << 2)


def test_block_when_nobody_can_place_and_the_boneyard_is_empty():
    setup = Setup(players=2, hands=[["3-4"], ["5-6", "0-0"]], plays=[("1-2", None)],
                  scores=[30, 40, 0, 0])
    reason, state, row, events = play_turns(setup, seat=0)
    assert reason == engine.End.BLOCKED
    assert [e["kind"] for e in events] == [KIND["pass"], KIND["round_end"]]
    assert row[engine.ROUND_DOMINO_SEAT] == -1
    assert events[-1]["pips"][:2] == [7, 11]
    assert events[-1]["penalties"][:2] == [5, 10]
    assert list(state[engine.SCORES : engine.SCORES + 2]) == [25, 30]


def test_drawing_the_last_tile_without_a_fit_ends_in_a_pass():
    setup = Setup(players=2, hands=[["3-4"], ["5-6"]], boneyard=["0-0"], plays=[("1-2", None)])
    reason, _, _, events = play_turns(setup, seat=0)
    kinds = [e["kind"] for e in events]
    assert kinds == [KIND["draw"], KIND["pass"], KIND["round_end"]]
    assert reason == engine.End.BLOCKED
    assert events[-1]["pips"][:2] == [7, 11]


def test_partners_are_settled_hand_by_hand_never_combined():
    setup = Setup(players=4, hands=[["0-2"], ["3-3"], ["1-1"], ["5-6"]],
                  plays=[("4-4", None)], scores=[50, 50, 0, 0])
    reason, state, _, events = play_turns(setup, seat=0)
    assert reason == engine.End.BLOCKED
    assert events[-1]["pips"] == [2, 6, 2, 11]
    # 2 and 2 round to 0 each (combined, 4 would have cost 5).
    assert events[-1]["penalties"] == [0, 5, 0, 10]
    assert list(state[engine.SCORES : engine.SCORES + 2]) == [50, 35]


def test_scores_may_go_below_zero():
    setup = Setup(players=3, hands=[["3-4"], ["6-6", "5-5"], ["1-0"]], plays=[("1-2", None)])
    reason, state, _, _ = play_turns(setup, seat=0)
    assert reason == engine.End.DOMINO
    assert list(state[engine.SCORES : engine.SCORES + 3]) == [-5, -20, 0]


@pytest.mark.parametrize("hand", [["2-4", "6-6"], ["2-4"]])
def test_reaching_the_target_wins_at_once_without_settlement(hand):
    setup = Setup(players=4, hands=[hand, ["0-0"], ["0-1"], ["0-3"]],
                  plays=[("1-2", None)], scores=[195, 190, 0, 0])
    reason, state, row, events = play_turns(setup, seat=0)
    assert reason == engine.End.TARGET
    assert events[-1]["kind"] == KIND["play"] and events[-1]["points"] == 5
    assert list(state[engine.SCORES : engine.SCORES + 2]) == [200, 190]
    assert state[engine.WINNER_TEAM] == 0
    assert not any(row[engine.ROUND_PENALTY : engine.ROUND_PENALTY + 4])


def test_points_after_every_placement_including_opening_and_last_tile():
    setup = Setup(players=2, hands=[["5-0", "6-6"], ["0-0"]])
    reason, state, _, events = play_turns(setup, seat=0)
    # Opening 0-5 counts 5; the last tile of seat 1 (0-0, the Sniff on L) counts 0+0+5 = 5.
    assert [(e["tile"], e["count"], e["points"]) for e in events if e["kind"] == KIND["play"]] \
        == [("0-5", 5, 5), ("0-0", 5, 5)]
    assert reason == engine.End.DOMINO


# --- leaders, whole games, round cap, reproducibility


def test_leader_after_domino_is_the_domino_player_and_random_after_a_block():
    events = trace_games(2, 11, ["random", "random"], 60)
    previous = None
    leaders_after_block = []
    first_leaders = set()
    for event in events:
        if event["event"] == "round_start":
            if event["round"] == 1:
                first_leaders.add(event["leader"])
            elif previous["reason"] == "domino":
                assert event["leader"] == previous["winner_seat"]
            else:
                leaders_after_block.append(event["leader"])
        if event["event"] == "round_end":
            previous = event
    assert first_leaders == {0, 1}
    assert len(leaders_after_block) > 5 and set(leaders_after_block) == {0, 1}


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deal_sizes_and_targets(players):
    events = trace_games(players, 3, ["greedy"] * players, 1)
    start = events[1]
    assert [len(h) for h in start["hands"]] == [{2: 7, 3: 6, 4: 5}[players]] * players
    assert len(start["boneyard"]) == 28 - players * {2: 7, 3: 6, 4: 5}[players]
    assert events[0]["target"] == {2: 250, 3: 200, 4: 200}[players]
    end = events[-1]
    assert end["event"] == "game_end" and max(end["scores"]) >= events[0]["target"]


def test_an_undecided_game_at_the_round_cap_is_recorded_unfinished():
    lineup = lineup_of(2, [parse_spec("random"), parse_spec("random")])
    result = play_batch(lineup, 1, np.arange(50), round_cap=2)
    games = result.games
    assert (games[:, engine.GAME_ROUNDS] == 2).all()
    assert (games[:, engine.GAME_CAP_HIT] == 1).all()
    assert (games[:, engine.GAME_WINNER_TEAM] == -1).all()


def test_games_past_the_round_slots_keep_every_round():
    lineup = lineup_of(4, [parse_spec("random"), parse_spec("random")])
    ids = np.arange(200)
    full = play_batch(lineup, 5, ids, round_slots=300)
    short = play_batch(lineup, 5, ids, round_slots=3)
    assert (full.games == short.games).all()
    assert (full.games[:, engine.GAME_ROUNDS] > 3).any()
    for got, expected in zip(short.flat_rounds(), full.flat_rounds()):
        assert (got == expected).all()
    index, number, _ = full.flat_rounds()
    assert len(index) == full.games[:, engine.GAME_ROUNDS].sum()
    assert (np.bincount(index, minlength=200) == full.games[:, engine.GAME_ROUNDS]).all()


def test_same_seed_same_games_for_any_thread_count_and_chunking():
    lineup = lineup_of(4, [parse_spec("greedy"), parse_spec("random")])
    ids = np.arange(3000)
    rotations = ids % 4
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = play_batch(lineup, 42, ids, rotations=rotations)
    finally:
        numba.set_num_threads(threads)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    two = play_batch(lineup, 42, ids, rotations=rotations)
    first = play_batch(lineup, 42, ids[:1234], rotations=rotations[:1234])
    second = play_batch(lineup, 42, ids[1234:], rotations=rotations[1234:])
    assert (one.games == two.games).all()
    assert (np.concatenate([first.games, second.games]) == one.games).all()
    rows_one = one.flat_rounds()[2]
    rows_split = np.concatenate([first.flat_rounds()[2], second.flat_rounds()[2]])
    assert (rows_one == rows_split).all()
    other_seed = play_batch(lineup, 43, ids[:200], rotations=rotations[:200])
    assert not (other_seed.games == one.games[:200]).all()


PLAYERS = (2, 3, 4)
MIXES = ("random", "greedy", "mixed")
GAMES_PER_MIX = 400  # x 3 mixes = 1,200 games per player count, 3,600 in all


def strategies_for(mix: str, players: int) -> list[str]:
    """One strategy name per seat; "mixed" alternates greedy and random seats."""
    if mix == "mixed":
        return ["greedy" if seat % 2 == 0 else "random" for seat in range(players)]
    return [mix] * players


def seed_for(players: int, mix: str) -> int:
    return 1000 * players + MIXES.index(mix)


@functools.cache
def checked(players: int, mix: str) -> Counter:
    """Play one batch with the engine, check every game; return what the games exercised.

    Cached so the aggregate test reuses the batches the per-batch tests already checked.
    """
    seed = seed_for(players, mix)
    strategies = strategies_for(mix, players)
    events = trace_games(players, seed, strategies, GAMES_PER_MIX)
    json.dumps(events)  # plain JSON types only (no numpy ints), as the trace file needs
    games = split_games(events)
    assert len(games) == GAMES_PER_MIX, f"{len(games)} games, asked for {GAMES_PER_MIX}"
    stats: Counter = Counter()
    first_deals = set()
    for number, game in enumerate(games):
        start = game[0]
        where = f"players={players} mix={mix} seed={seed} game={number}"
        assert start.get("game") == number, f"{where}: game_start has game={start.get('game')}"
        assert start.get("strategies") == strategies, f"{where}: strategies {start}"
        try:
            check_trace(game, stats)
        except AssertionError as error:
            raise AssertionError(f"{where}: {error}") from None
        first_deals.add(json.dumps(game[1]["hands"]))
    assert len(first_deals) == GAMES_PER_MIX, "games repeat the same first deal"
    return stats


@pytest.mark.parametrize("mix", MIXES)
@pytest.mark.parametrize("players", PLAYERS)
def test_engine_games_obey_the_rules(players: int, mix: str) -> None:
    stats = checked(players, mix)
    assert stats["games"] == GAMES_PER_MIX


@pytest.mark.parametrize("players", PLAYERS)
def test_engine_games_reach_every_rule(players: int) -> None:
    """Agreement only counts if the games went through each special case at least once."""
    total: Counter = Counter()
    for mix in MIXES:
        total += checked(players, mix)
    needed = {
        "domino": "rounds won by going out",
        "blocked": "blocked rounds",
        "draw": "draws",
        "pass": "passes",
        "branch_play": "plays on the Sniff's branches U/D",
        "later_double_counted": "counts with a later double outer (counted twice)",
        "mid_round_win": "games won in mid-round (winner still holding tiles)",
        "target_win": "games won by reaching the target",
    }
    missing = [what for key, what in needed.items() if total[key] == 0]
    assert not missing, f"{players} players: no {', '.join(missing)} in {dict(total)}"


def test_engine_is_reproducible_from_its_seed() -> None:
    strategies = ["greedy", "random", "greedy"]
    first = trace_games(3, 99, strategies, 5)
    assert trace_games(3, 99, strategies, 5) == first
    assert trace_games(3, 100, strategies, 5) != first
