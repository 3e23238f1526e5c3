"""Unit tests of the rules oracle (sim/reference/oracle.py) on small hand-written games.

The oracle is what the engine is judged by, so it needs its own evidence: the worked
examples of docs/rules.md, complete short games whose every count was worked out by hand (the
arithmetic is in the comments), and traces that break one rule each and must be rejected
for that reason. Games are written in a compact move notation and expanded by ``Game``;
the helper only adds up scores, it knows no rule.

Move notation, one line per event::

    <seat> <tile> <end or -> <count> <points> <open ends>   a play ("-" = the opening)
    <seat> draw <tile>
    <seat> pass
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from sim.reference.oracle import check_trace, check_trace_file, split_games
from sim.reference.rules import Layout, penalty
from tests.helpers.oracle_games import (
    ALL_GAMES,
    G1_BONEYARD,
    G1_HANDS,
    G1_MOVES,
    W_BONEYARD,
    W_HANDS,
    W_MOVES,
    Game,
    find,
    game_g1,
    game_g2,
    game_g3,
    game_g4,
    rejected,
)

# --------------------------------------------------------------------------- accepted


@pytest.mark.parametrize("name", sorted(ALL_GAMES))
def test_hand_written_games_pass(name: str) -> None:
    check_trace(ALL_GAMES[name]())


def test_worked_example_one_counts() -> None:
    """Open 4-4, 4-6 on L, 4-1 on R (15 points), 4-2 on U, straight from docs/rules.md."""
    layout = Layout()
    layout.open_with((4, 4))
    counts = [layout.count()]
    for tile, arm in (((4, 6), "L"), ((4, 1), "R"), ((4, 2), "U")):
        assert layout.place(tile, arm) is None
        counts.append(layout.count())
    assert counts == [8, 14, 15, 13]
    assert layout.ends == {"L": 6, "R": 1, "U": 2, "D": 4}
    events = game_g1()
    assert events[find(events, event="play", tile="4-1")]["points"] == 15


def test_worked_example_two_counts() -> None:
    """Open 3-5, 5-5 on R, 5-0 on R, 5-6 on U, 6-6 on U scoring 20, from docs/rules.md."""
    layout = Layout()
    layout.open_with((3, 5))
    counts = [layout.count()]
    for tile, arm in (((5, 5), "R"), ((5, 0), "R"), ((5, 6), "U"), ((6, 6), "U")):
        assert layout.place(tile, arm) is None
        counts.append(layout.count())
    assert counts == [8, 13, 13, 14, 20]
    events = game_g2()
    six_six = events[find(events, event="play", tile="6-6")]
    assert (six_six["count"], six_six["points"], six_six["scores"]) == (20, 20, [0, 20, 0])


def test_later_double_on_a_branch_counts_twice_then_nothing() -> None:
    events = game_g1()
    on_branch = find(events, event="play", tile="2-2")
    assert events[on_branch]["end"] == "U"
    assert events[on_branch]["count"] == 15  # 6 + 1 + 2x2 + 4
    for wrong in (13, 17):  # the double once, or the Sniff's half still showing too
        bad = copy.deepcopy(events)
        bad[on_branch]["count"] = wrong
        rejected(bad, rf"event {on_branch}: count is {wrong}, expected 15")
    # G1: 1-3 on R covers the later double 1-1: 6+3+4+3, not 6+2x1+... nor 6+2x3+...
    covered = find(events, event="play", tile="1-3")
    assert events[covered]["count"] == 16
    bad = copy.deepcopy(events)
    bad[covered]["count"] = 19  # 3 doubled as if 1-3 were still a double
    rejected(bad, rf"event {covered}: count is 19, expected 16")
    # G2: 6-4 on U covers the later double 6-6 on that branch: 3+0+4+5.
    events = game_g2()
    covered = find(events, event="play", tile="6-4")
    assert events[covered]["count"] == 12
    bad = copy.deepcopy(events)
    bad[covered]["count"] = 16  # 4 counted twice as though the double were outer
    rejected(bad, rf"event {covered}: count is 16, expected 12")


def test_tile_may_be_written_either_way_round() -> None:
    events = game_g1()
    index = find(events, event="play", tile="4-6")
    events[index]["tile"] = "6-4"
    check_trace(events)
    events[index]["tile"] = "6-5"
    rejected(events, "6-5, which is not in its hand")


@pytest.mark.parametrize(("pips", "cut"), [(0, 0), (1, 0), (2, 0), (3, 5), (4, 5),
                                           (5, 5), (7, 5), (8, 10), (12, 10), (13, 15)])
def test_penalty_rounding(pips: int, cut: int) -> None:
    assert penalty(pips) == cut


def test_settlement_rounds_each_partner_hand_separately() -> None:
    events = game_g3()
    ends = [i for i, e in enumerate(events) if e["event"] == "round_end"]
    second = events[ends[1]]
    assert second["hand_pips"] == [7, 8, 2, 3]
    assert second["penalties"] == [5, 10, 0, 5]
    before = next(e["scores"] for e in reversed(events[:ends[1]]) if e["event"] == "play")
    assert second["scores"] == [before[0] - 5, before[1] - 15]
    combined = copy.deepcopy(events)
    combined[ends[1]]["scores"] = [before[0] - 10, before[1] - 10]  # 9 -> 10, 11 -> 10
    rejected(combined, f"event {ends[1]}: scores after settlement")
    bad = copy.deepcopy(events)
    bad[ends[1]]["penalties"] = [10, 10, 0, 0]  # 7 + 2 and 8 + 3 rounded together
    rejected(bad, "penalties is")


@pytest.mark.parametrize(("pips", "cut"), [(2, 0), (3, 5), (7, 5), (8, 10)])
def test_settlement_rounding_in_a_trace(pips: int, cut: int) -> None:
    """Round B leaves exactly 3, 7, 8 and 2 pips; each must be cut as docs/rules.md says."""
    events = game_g3()
    last_end = max(i for i, e in enumerate(events) if e["event"] == "round_end")
    seat = events[last_end]["hand_pips"].index(pips)
    assert events[last_end]["penalties"][seat] == cut
    bad = copy.deepcopy(events)
    bad[last_end]["penalties"][seat] = cut + 5 if cut == 0 else cut - 5
    rejected(bad, f"event {last_end}: penalties is")


def test_scores_may_go_negative() -> None:
    events = game_g3()
    first_end = events[find(events, event="round_end", round=1)]
    assert first_end["scores"] == [20, -5]


def test_immediate_win_has_no_settlement() -> None:
    events = game_g4()
    assert events[-1] == {
        "event": "game_end", "winner": 0, "reason": "target", "scores": [270, 0], "rounds": 2,
    }
    assert events[-2]["tile"] == "3-4"
    assert sum(e["event"] == "round_end" for e in events) == 1


def test_win_at_exactly_the_target() -> None:
    """Six G1 rounds give seat 0 6 x 40 = 240; opening 5-5 (10 points) makes exactly 250."""
    game = Game(2)
    for _ in range(6):
        game.round(0, G1_HANDS, G1_BONEYARD, G1_MOVES).settle("domino", 0, [0, 4], [0, 5])
    events = game.round(0, W_HANDS, W_BONEYARD, W_MOVES, stop_after=1).end(0, "target")
    assert events[-1]["scores"] == [250, 60]  # seat 1: 6 x (15 - 5)
    check_trace(events)
    events.insert(-1, {"event": "play", "seat": 1, "tile": "5-6", "end": "L", "count": 16,
                       "points": 0, "ends": {"L": 6, "R": 5, "U": None, "D": None},
                       "scores": [250, 60]})
    rejected(events, "play after the play at event .* took team 0 to the target 250")


def test_blocking_play_may_be_followed_by_round_end_at_once() -> None:
    """After the play that blocks, the next seat's pass is optional: either way is blocked."""
    events = game_g3()
    last_end = max(i for i, e in enumerate(events) if e["event"] == "round_end")
    assert events[last_end - 1] == {"event": "pass", "seat": 1}
    del events[last_end - 1]
    check_trace(events)


def test_stats_record_what_was_exercised() -> None:
    stats: Counter = Counter()
    for build in ALL_GAMES.values():
        check_trace(build(), stats)
    for key in ("domino", "blocked", "draw", "pass", "branch_play", "later_double_counted",
                "mid_round_win", "round_cap", "target_win"):
        assert stats[key] > 0, key


# --------------------------------------------------------------------------- rejected


def test_reject_wrong_count() -> None:
    events = game_g1()
    index = find(events, event="play", tile="4-1")
    events[index]["count"] = 14
    rejected(events, rf"event {index}: count is 14, expected 15")


def test_reject_wrong_points_ends_and_scores() -> None:
    base = game_g1()
    index = find(base, event="play", tile="4-1")
    for field, value in (("points", 0), ("ends", {"L": 6, "R": 1, "U": None, "D": None}),
                         ("scores", [0, 15])):
        events = copy.deepcopy(base)
        events[index][field] = value
        rejected(events, rf"event {index}: {field} is")


def test_reject_play_with_nothing_legal() -> None:
    """Seat 1 holds 0-0 and 0-4 against ends 6, 3, 2, 3: it must draw, not play."""
    events = game_g1()
    index = find(events, event="draw", tile="6-6")
    events[index] = {"event": "play", "seat": 1, "tile": "0-4", "end": "L", "count": 0,
                     "points": 0, "ends": {"L": 4, "R": 3, "U": 2, "D": 3}, "scores": [40, 15]}
    rejected(events, rf"event {index}: seat 1 plays 0-4 on L, but that tile fits no open end")


def test_reject_play_of_tile_not_in_hand() -> None:
    events = game_g1()
    index = find(events, event="play", tile="4-2")
    events[index]["tile"] = "4-5"  # in the boneyard
    rejected(events, rf"event {index}: seat 1 plays 4-5, which is not in its hand")


def test_reject_draw_while_holding_a_legal_tile() -> None:
    events = game_g1()
    index = find(events, event="play", tile="4-6")
    events[index] = {"event": "draw", "seat": 1, "tile": "6-6"}
    rejected(events, rf"event {index}: seat 1 draws while holding a legal placement")


def test_reject_draw_out_of_boneyard_order() -> None:
    events = game_g1()
    index = find(events, event="draw", tile="6-6")
    events[index]["tile"] = "1-5"
    rejected(events, "draws 1-5, but the next boneyard tile is 6-6")


@pytest.mark.parametrize("instead", ["draw", "pass", "other_seat", "round_end"])
def test_reject_not_playing_a_playable_drawn_tile(instead: str) -> None:
    events = game_g1()
    index = find(events, event="draw", tile="6-6") + 1
    assert events[index]["tile"] == "6-6"
    if instead == "draw":
        events[index] = {"event": "draw", "seat": 1, "tile": "1-5"}
        pattern = "seat 1 draws again, but the tile it just drew .6-6. fits"
    elif instead == "pass":
        events[index] = {"event": "pass", "seat": 1}
        pattern = "seat 1 passes, but the tile it just drew .6-6. fits"
    elif instead == "other_seat":
        del events[index]  # seat 0 plays 3-0 next, skipping seat 1's forced play
        pattern = "play by seat 0, but it is seat 1's turn"
    else:
        events[index:] = [{"event": "round_end", "round": 1, "reason": "blocked",
                           "winner_seat": None, "hand_pips": [3, 10], "penalties": [5, 10],
                           "scores": [35, 5]}]
        pattern = "round_end in the middle of a turn"
    rejected(events, rf"event {index}: {pattern}")


def test_reject_pass_with_non_empty_boneyard() -> None:
    events = game_g1()
    index = find(events, event="draw", tile="6-6")
    events[index] = {"event": "pass", "seat": 1}
    rejected(events, rf"event {index}: seat 1 passes with 14 tile\(s\) left in the boneyard")


def test_reject_pass_while_holding_a_legal_tile() -> None:
    events = game_g3()
    index = find(events, event="play", tile="2-5", seat=3)  # round 2, shifted seat 0 -> 3
    events[index] = {"event": "pass", "seat": 3}
    rejected(events, rf"event {index}: seat 3 passes while holding a legal placement")


@pytest.mark.parametrize("instead", ["drop", "another_pass", "play_on"])
def test_reject_missing_block(instead: str) -> None:
    events = game_g3()
    last_end = max(i for i, e in enumerate(events) if e["event"] == "round_end")
    if instead == "drop":
        del events[last_end]  # game_end follows the blocking pass directly
    elif instead == "another_pass":
        events.insert(last_end, {"event": "pass", "seat": 2})
    else:
        events.insert(last_end, {"event": "draw", "seat": 2, "tile": "4-4"})
    rejected(events, rf"event {last_end}: .* while the round is blocked")


def test_reject_blocked_round_end_when_not_blocked() -> None:
    events = game_g1()
    index = find(events, event="play", tile="2-2")
    events[index + 1:] = [{"event": "round_end", "round": 1, "reason": "blocked",
                           "winner_seat": None, "hand_pips": [15, 22], "penalties": [15, 20],
                           "scores": [0, 0]}]
    rejected(events, rf"event {index + 1}: round_end blocked, but the round is not blocked")


def test_reject_domino_claimed_wrongly() -> None:
    events = game_g1()
    index = find(events, event="round_end")
    events[index]["winner_seat"] = 1
    rejected(events, rf"event {index}: winner_seat is 1, expected 0")
    events = game_g3()
    last_end = max(i for i, e in enumerate(events) if e["event"] == "round_end")
    events[last_end]["reason"] = "domino"
    rejected(events, "reason is domino, but the last event was not a play that emptied")


def test_reject_play_after_going_out() -> None:
    events = game_g1()
    index = find(events, event="round_end")
    events.insert(index, {"event": "pass", "seat": 1})
    rejected(events, rf"event {index}: pass after seat 0 played its last tile")


def test_reject_wrong_leader_after_domino() -> None:
    events = game_g4()
    index = find(events, event="round_start", round=2)
    events[index]["leader"] = 1
    rejected(events, rf"event {index}: leader is seat 1, but seat 0 went out")


def test_any_leader_after_blocked_round() -> None:
    """G3's round 3 follows a blocked round and is led by seat 1, not round 1's winner."""
    events = game_g3()
    assert events[find(events, event="round_start", round=3)]["leader"] == 1
    check_trace(events)


def test_reject_opening_by_wrong_seat_or_with_an_end() -> None:
    events = game_g1()
    events[2]["end"] = "L"
    rejected(events, "event 2: the opening tile must have end null")
    events = game_g1()
    events[1]["leader"] = 1
    rejected(events, "event 2: play by seat 0, but it is seat 1's turn")


def test_reject_settlement_after_winning_play() -> None:
    events = game_g4()
    settled = copy.deepcopy(events)
    settled.insert(-1, {"event": "round_end", "round": 2, "reason": "blocked",
                        "winner_seat": None, "hand_pips": [2, 16], "penalties": [0, 15],
                        "scores": [270, -15]})
    rejected(settled, rf"event {len(events) - 1}: round_end after the play at event "
             rf"{len(events) - 2} took team 0 to the target 250")
    played_on = copy.deepcopy(events)
    played_on.insert(-1, {"event": "play", "seat": 1, "tile": "2-1", "end": "D", "count": 22,
                          "points": 0, "ends": {"L": 6, "R": 4, "U": 5, "D": 1},
                          "scores": [270, 0]})
    rejected(played_on, "play after the play at event")
    capped = copy.deepcopy(events)
    capped[-1].update(winner=None, reason="round_cap")
    rejected(capped, "winner is None, expected 0")


def test_reject_round_cap_in_mid_round_or_with_a_winner() -> None:
    events = game_g1()
    index = find(events, event="round_end")
    cut = events[:index] + [events[-1]]
    rejected(cut, rf"event {index}: game_end after seat 0 played its last tile")
    events = game_g1()
    events[-1]["winner"] = 0
    rejected(events, "winner is 0 after a round_end")
    events = game_g1()
    events[-1]["rounds"] = 2
    rejected(events, "rounds is 2, expected 1")


def test_reject_play_on_branch_before_sniff_is_continued_on_both_sides() -> None:
    """In G2 the Sniff 5-5 sits on R: its outer side is free until 5-0 goes there."""
    events = game_g2()
    index = find(events, event="play", tile="5-0")
    events[index]["end"] = "U"
    rejected(events, rf"event {index}: seat 2 plays 5-0 on U: end U is not open")
    events = game_g1()
    index = find(events, event="play", tile="4-6")  # opening Sniff 4-4, no side continued
    events[index]["end"] = "D"
    rejected(events, rf"event {index}: seat 1 plays 4-6 on D: end D is not open")


def test_reject_bad_deals() -> None:
    events = game_g1()
    events[1]["hands"][0][0] = "1-2"  # 1-2 is also the last boneyard tile
    rejected(events, r"event 1: hands \+ boneyard are not the 28 tiles once each: "
             r"repeated \[\(1, 2\)\], missing \[\(0, 3\)\]")
    events = game_g1()
    events[1]["boneyard"].append(events[1]["hands"][1].pop())
    rejected(events, "event 1: seat 1 is dealt")
    events = game_g1()
    events[1]["hands"][0][0] = "3-0"
    rejected(events, "must be written low-high")
    events = game_g1()
    events[1]["round"] = 2
    rejected(events, "event 1: round is 2, expected 1")


def test_reject_bad_game_start() -> None:
    events = game_g2()
    events[0]["target"] = 250
    rejected(events, "event 0: target is 250, expected 200")
    events = game_g2()
    events[0]["players"] = 5
    rejected(events, "players is 5")
    rejected(game_g1()[1:], "a game starts with game_start")


def test_reject_malformed_events() -> None:
    events = game_g1()
    del events[2]["points"]
    rejected(events, r"event 2: play has missing keys \['points'\]")
    events = game_g1()
    events[3]["event"] = "place"
    rejected(events, "unknown event kind 'place'")
    rejected(game_g1()[:-1], "without game_end")


# --------------------------------------------------------------------------- streams


def test_split_games_and_check_file(tmp_path: Path) -> None:
    games = [game_g1(), game_g4(), game_g2()]
    stream = [event for game in games for event in game]
    assert split_games(stream) == games
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in stream))
    assert check_trace_file(path) == 3
    broken = copy.deepcopy(games)
    broken[1][5]["count"] += 1
    path.write_text("".join(json.dumps(e) + "\n" for game in broken for e in game))
    with pytest.raises(AssertionError, match="game 1: event 5: count is"):
        check_trace_file(path)
    with pytest.raises(AssertionError, match="before any game_start"):
        split_games(stream[1:])
