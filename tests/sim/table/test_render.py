"""Replay text for hand-built traces: the worked examples of docs/rules.md and a settlement."""

import json

import pytest

from sim.table.render import (
    ReplayState,
    SniffSpot,
    advance,
    render_event,
    render_layout,
    replay_lines,
)

GAME_START = {"event": "game_start", "players": 2, "target": 250, "seed": 1, "game": 0}
ROUND_START = {
    "event": "round_start",
    "round": 1,
    "leader": 0,
    "hands": [["4-4", "4-1", "0-3"], ["4-6", "4-2", "5-5"]],
    "boneyard": ["2-5", "1-1", "0-6"],
}


def replay_state(events) -> ReplayState:
    """The state after all ``events``: a hand-built position to draw."""
    state = ReplayState()
    for event in events:
        state.apply(event)
    return state


def play(seat, tile, end, count, points, ends, scores):
    left, right, up, down = ends
    return {
        "event": "play",
        "seat": seat,
        "tile": tile,
        "end": end,
        "count": count,
        "points": points,
        "ends": {"L": left, "R": right, "U": up, "D": down},
        "scores": scores,
    }


# docs/rules.md, first worked example: the opening double is the Sniff.
EXAMPLE_1 = [
    play(0, "4-4", None, 8, 0, (4, 4, None, None), [0, 0]),
    play(1, "4-6", "L", 14, 0, (6, 4, None, None), [0, 0]),
    play(0, "4-1", "R", 15, 15, (6, 1, 4, 4), [15, 0]),
    play(1, "4-2", "U", 13, 0, (6, 1, 2, 4), [15, 0]),
]

# docs/rules.md, second example: the Sniff is played on R, and a later double ends the U branch.
EXAMPLE_2 = [
    play(0, "3-5", None, 8, 0, (3, 5, None, None), [0, 0]),
    play(1, "5-5", "R", 13, 0, (3, 5, None, None), [0, 0]),
    play(0, "5-0", "R", 13, 0, (3, 0, 5, 5), [0, 0]),
    play(1, "5-6", "U", 14, 0, (3, 0, 6, 5), [0, 0]),
    play(0, "6-6", "U", 20, 20, (3, 0, 6, 5), [20, 0]),
]


def replayed(events):
    """(event, rendered block, state after it) for each event, after a game and round start."""
    state = replay_state([GAME_START, ROUND_START])
    out = []
    for event in events:
        state = advance(state, event)
        out.append((event, render_event(event, state), state))
    return out


def find(picture: str, text: str) -> tuple[int, int]:
    """(row, column) of the only occurrence of ``text`` in the picture."""
    hits = [
        (row, line.index(text)) for row, line in enumerate(picture.splitlines()) if text in line
    ]
    assert len(hits) == 1, f"{text!r} found {len(hits)} times in\n{picture}"
    return hits[0]


# ------------------------------------------------------------------ example 1


def test_example_1_event_text() -> None:
    blocks = [block for _, block, _ in replayed(EXAMPLE_1)]
    assert "seat 0 opens with 4-4 — the Sniff" in blocks[0]
    assert "ends L=4 R=4 · count 8 · no score" in blocks[0]
    assert "seat 1 plays 4-6 on L" in blocks[1]
    assert "ends L=6 R=4 · count 14 · no score" in blocks[1]
    assert "seat 0 plays 4-1 on R — the Sniff's branches open" in blocks[2]
    assert "ends L=6 R=1 U=4 D=4 · count 15 · +15 points for seat 0" in blocks[2]
    assert "seat 0: ╳∖ (15)   seat 1: · (0)" in blocks[2]
    assert "seat 1 plays 4-2 on U" in blocks[3]
    assert "branches open" not in blocks[3]
    assert "ends L=6 R=1 U=2 D=4 · count 13 · no score" in blocks[3]


def test_example_1_model() -> None:
    state = replayed(EXAMPLE_1)[-1][2]
    assert state.opening == "4-4"
    assert state.sniff == SniffSpot(None)
    assert state.arms == {"L": ["4-6"], "R": ["4-1"], "U": ["4-2"], "D": []}
    assert state.hands == [["0-3"], ["5-5"]]


def test_example_1_picture() -> None:
    state = replayed(EXAMPLE_1)[-1][2]
    assert render_layout(state).splitlines() == [
        "          U=2",
        "          ┌2┐",
        "          ├─┤",
        "          └4┘",
        "          ┏4┓",
        "L=6 [6|4] ┣━┫ [4|1] R=1",
        "          ┗4┛",
        "          D=4",
    ]


def test_branches_are_not_drawn_before_they_open() -> None:
    state = replayed(EXAMPLE_1[:2])[-1][2]
    picture = render_layout(state)
    assert "U" not in picture and "D" not in picture
    assert picture.splitlines()[1] == "L=6 [6|4] ┣━┫ R=4"


# ------------------------------------------------------------------ example 2


def test_example_2_event_text() -> None:
    blocks = [block for _, block, _ in replayed(EXAMPLE_2)]
    counts = ["count 8 ·", "count 13 ·", "count 13 ·", "count 14 ·", "count 20 ·"]
    for block, count in zip(blocks, counts, strict=True):
        assert count in block
    assert "seat 1 plays 5-5 on R — the Sniff" in blocks[1]
    assert "ends L=3 R=5 · count 13" in blocks[1]
    assert "seat 0 plays 5-0 on R — the Sniff's branches open" in blocks[2]
    assert "ends L=3 R=0 U=5 D=5" in blocks[2]
    assert "ends L=3 R=0 U=6 D=5 · count 14 · no score" in blocks[3]
    assert "seat 0 plays 6-6 on U — a later double" in blocks[4]
    assert "the Sniff" not in blocks[4].splitlines()[0].replace("the Sniff's", "")
    assert "count 20 · +20 points for seat 0" in blocks[4]
    assert "seat 0: ╳× (20)" in blocks[4]


def test_example_2_model() -> None:
    state = replayed(EXAMPLE_2)[-1][2]
    assert state.opening == "3-5"
    assert state.sniff == SniffSpot("R", 0)
    assert state.arms == {"L": [], "R": ["5-5", "5-0"], "U": ["5-6", "6-6"], "D": []}


def test_example_2_picture_places_tiles_on_their_arms() -> None:
    picture = render_layout(replayed(EXAMPLE_2)[-1][2])
    sniff_top = find(picture, "┏5┓")
    line_row, sniff_col = find(picture, "┣━┫")
    assert sniff_top == (line_row - 1, sniff_col)
    assert find(picture, "┗5┛") == (line_row + 1, sniff_col)
    # The line: L label, opening tile, Sniff across it, then 5-0 on the R side.
    opening = find(picture, "[3|5]")
    five_blank = find(picture, "[5|0]")
    assert opening[0] == five_blank[0] == line_row
    assert find(picture, "L=3")[1] < opening[1] < sniff_col < five_blank[1]
    assert five_blank[1] < find(picture, "R=0")[1]
    # The U branch above the Sniff: 5-6 standing with its 5 next to the Sniff, then the
    # 6-6 across the branch (centred on it), then the U label.
    assert find(picture, "└5┘") == (line_row - 2, sniff_col)
    assert find(picture, "┌6┐") == (line_row - 4, sniff_col)
    double_row, double_col = find(picture, "[6|6]")
    assert double_row == line_row - 5
    assert double_col == sniff_col - 1
    assert find(picture, "U=6") == (line_row - 6, sniff_col)
    # The D branch is open but empty.
    assert find(picture, "D=5") == (line_row + 2, sniff_col)


def test_later_double_on_the_line_is_not_the_sniff() -> None:
    events = [*EXAMPLE_2[:3], play(1, "0-0", "R", 13, 0, (3, 0, 5, 5), [0, 0])]
    _, block, state = replayed(events)[-1]
    assert state.sniff == SniffSpot("R", 0)
    picture = render_layout(state)
    line_row, zero_col = find(picture, "├─┤")
    assert find(picture, "┌0┐") == (line_row - 1, zero_col)
    assert zero_col > find(picture, "[5|0]")[1]
    assert "a later double" in block


def test_ascii_picture() -> None:
    state = replayed(EXAMPLE_2)[-1][2]
    picture = render_layout(state, ascii=True)
    assert picture.isascii()
    assert "#=#" in picture and "[6|6]" in picture
    assert render_event(EXAMPLE_2[-1], state, ascii=True).isascii()


# ------------------------------------------------------------------ rounds and games


def test_round_start_shows_hands_and_boneyard() -> None:
    state = replay_state([GAME_START, ROUND_START])
    text = render_event(ROUND_START, state)
    assert "round 1 · seat 0 leads · boneyard 3 tiles" in text
    assert "seat 0: 4-4 4-1 0-3   (16 pips)" in text
    assert "seat 1: 4-6 4-2 5-5   (26 pips)" in text


def test_draw_and_pass() -> None:
    state = replay_state([GAME_START, ROUND_START])
    draw = {"event": "draw", "seat": 1, "tile": "2-5"}
    after = advance(state, draw)
    assert render_event(draw, after) == "seat 1 draws 2-5 · boneyard 2 left"
    assert after.hands[1][-1] == "2-5"
    assert state.hands[1] == ["4-6", "4-2", "5-5"]  # advance left the old state alone
    assert render_event({"event": "pass", "seat": 0}, after) == "seat 0 passes"


def test_round_end_shows_rounding_penalties_and_scores() -> None:
    events = [
        {"event": "game_start", "players": 4, "target": 200, "game": 0},
        {
            "event": "round_start",
            "round": 2,
            "leader": 1,
            "hands": [["3-4"], ["2-6"], ["1-1"], ["0-3"]],
            "boneyard": [],
        },
    ]
    round_end = {
        "event": "round_end",
        "round": 2,
        "reason": "blocked",
        "winner_seat": None,
        "hand_pips": [7, 8, 2, 3],
        "penalties": [5, 10, 0, 5],
        "scores": [60, -15],
    }
    state = replay_state([*events, round_end])
    lines = render_event(round_end, state).splitlines()
    assert lines[0] == "── round 2 ends: blocked, no winner ──"
    assert lines[1] == "  seat 0: 7 pips → 5   [3-4]"
    assert lines[2] == "  seat 1: 8 pips → 10   [2-6]"
    assert lines[3] == "  seat 2: 2 pips → 0   [1-1]"
    assert lines[4] == "  seat 3: 3 pips → 5   [0-3]"
    assert lines[5] == "  penalties   seats 0+2: −5   seats 1+3: −15"
    assert lines[6] == "  scores   seats 0+2: ⊠ ╳ (60)   seats 1+3: −╳∖ (-15)"


def test_domino_round_end_names_who_went_out() -> None:
    round_end = {
        "event": "round_end",
        "reason": "domino",
        "winner_seat": 1,
        "hand_pips": [12, 0],
        "penalties": [10, 0],
        "scores": [5, 30],
    }
    state = replay_state([GAME_START, ROUND_START, round_end])
    text = render_event(round_end, state)
    assert "round 1 ends: domino, seat 1 went out" in text
    assert "seat 0: 12 pips → 10" in text


def test_game_end() -> None:
    finished = {
        "event": "game_end", "winner": 1, "reason": "target", "scores": [120, 205], "rounds": 6
    }
    state = replay_state([{**GAME_START, "players": 4}, finished])
    text = render_event(finished, state)
    assert text.splitlines()[0] == "══ game 0 over: seats 1+3 win (target) after 6 rounds ══"
    assert "seats 1+3: ⊠⊠⊠⊠ ╲ (205)" in text  # 4 symbols and one stroke
    unfinished = {"event": "game_end", "winner": None, "reason": "round_cap", "scores": [0, 0]}
    assert "unfinished (round_cap), no winner" in render_event(unfinished, state)


def test_replay_lines_picks_one_game_of_a_jsonl_trace() -> None:
    game_0 = [GAME_START, ROUND_START, *EXAMPLE_1]
    game_1 = [{**GAME_START, "game": 1}, ROUND_START, *EXAMPLE_2]
    lines = [json.dumps(event) for event in game_0 + game_1] + [""]
    blocks = list(replay_lines(lines, game=1))
    assert len(blocks) == len(game_1)
    assert blocks[0].startswith("══ game 1 ·")
    assert "opens with 3-5" in blocks[2]
    assert not any("4-4" in block for block in blocks[2:])
    first = list(replay_lines(lines))
    assert len(first) == len(game_0) and "opens with 4-4" in first[2]
    with pytest.raises(IndexError):
        list(replay_lines(lines, game=2))


def test_replay_lines_reports_a_bad_line() -> None:
    with pytest.raises(ValueError, match="line 2"):
        list(replay_lines([json.dumps(GAME_START), "{not json"]))
