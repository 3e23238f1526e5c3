"""The rules oracle's hand-written games (``tests/sim/reference/test_oracle.py``): complete
short games whose every count was worked out by hand (the arithmetic is in the comments),
written in a compact move notation and expanded by ``Game``; the helper only adds up
scores, it knows no rule.

Move notation, one line per event::

    <seat> <tile> <end or -> <count> <points> <open ends>   a play ("-" = the opening)
    <seat> draw <tile>
    <seat> pass
"""

from __future__ import annotations

import pytest

from sim.reference.oracle import check_trace

TARGETS = {2: 250, 3: 200, 4: 200}


class Game:
    """Builds one game's events from move notation, keeping the running scores."""

    def __init__(self, players: int) -> None:
        self.players = players
        self.teams = 2 if players == 4 else players
        self.scores = [0] * self.teams
        self.rounds = 0
        self.events: list[dict] = [
            {"event": "game_start", "players": players, "target": TARGETS[players]},
        ]

    def team(self, seat: int) -> int:
        return seat % 2 if self.players == 4 else seat

    def round(
        self,
        leader: int,
        hands: str,
        boneyard: str,
        moves: str,
        *,
        shift: int = 0,
        stop_after: int | None = None,
    ) -> Game:
        """One round; ``shift`` renumbers every seat s as (s + shift) % players."""
        n = self.players
        dealt = [hand.split() for hand in hands.split("/")]
        rotated = [dealt[(seat - shift) % n] for seat in range(n)]
        self.rounds += 1
        self.events.append({
            "event": "round_start",
            "round": self.rounds,
            "leader": (leader + shift) % n,
            "hands": rotated,
            "boneyard": boneyard.split(),
        })
        lines = [line.split() for line in moves.strip().splitlines()]
        for words in lines[:stop_after]:
            seat = (int(words[0]) + shift) % n
            if words[1] == "draw":
                self.events.append({"event": "draw", "seat": seat, "tile": words[2]})
            elif words[1] == "pass":
                self.events.append({"event": "pass", "seat": seat})
            else:
                tile, end, count, points, *open_ends = words[1:]
                ends = dict.fromkeys("LRUD")
                for item in open_ends:
                    ends[item[0]] = int(item[1:])
                self.scores[self.team(seat)] += int(points)
                self.events.append({
                    "event": "play",
                    "seat": seat,
                    "tile": tile,
                    "end": None if end == "-" else end,
                    "count": int(count),
                    "points": int(points),
                    "ends": ends,
                    "scores": list(self.scores),
                })
        return self

    def settle(
        self,
        reason: str,
        winner_seat: int | None,
        hand_pips: list[int],
        penalties: list[int],
        *,
        shift: int = 0,
    ) -> Game:
        n = self.players
        pips = [hand_pips[(seat - shift) % n] for seat in range(n)]
        cuts = [penalties[(seat - shift) % n] for seat in range(n)]
        for seat, cut in enumerate(cuts):
            self.scores[self.team(seat)] -= cut
        self.events.append({
            "event": "round_end",
            "round": self.rounds,
            "reason": reason,
            "winner_seat": None if winner_seat is None else (winner_seat + shift) % n,
            "hand_pips": pips,
            "penalties": cuts,
            "scores": list(self.scores),
        })
        return self

    def end(self, winner: int | None = None, reason: str = "round_cap") -> list[dict]:
        self.events.append({
            "event": "game_end",
            "winner": winner,
            "reason": reason,
            "scores": list(self.scores),
            "rounds": self.rounds,
        })
        return self.events


def find(events: list[dict], **fields: object) -> int:
    """Index of the only event with these field values."""
    hits = [i for i, e in enumerate(events) if all(e.get(k) == v for k, v in fields.items())]
    assert len(hits) == 1, f"{fields} matches events {hits}"
    return hits[0]


def rejected(events: list[dict], pattern: str) -> str:
    """Assert the oracle refuses ``events`` with a message matching ``pattern``."""
    with pytest.raises(AssertionError, match=pattern) as info:
        check_trace(events)
    return str(info.value)


# --------------------------------------------------------------------------- game G1
# 2 players, seat 0 leads. Opens with docs/rules.md's first worked example (4-4 is the Sniff),
# then later doubles: 2-2 on branch U and 1-1 on R (each counts both halves while outer,
# nothing once covered), a draw of a playable 6-6 played at once, and seat 0 goes out.
G1_HANDS = "0-3 1-1 1-3 1-4 2-2 2-6 4-4 / 0-0 0-2 0-4 0-6 2-4 3-4 4-6"
G1_BONEYARD = "6-6 1-5 4-5 2-5 1-6 0-1 3-3 0-5 5-6 2-3 5-5 3-6 3-5 1-2"
G1_MOVES = """
0 4-4 - 8 0   L4 R4
1 4-6 L 14 0  L6 R4
0 4-1 R 15 15 L6 R1 U4 D4
1 4-2 U 13 0  L6 R1 U2 D4
0 2-2 U 15 15 L6 R1 U2 D4
1 6-0 L 9 0   L0 R1 U2 D4
0 1-1 R 10 10 L0 R1 U2 D4
1 0-2 L 12 0  L2 R1 U2 D4
0 2-6 L 16 0  L6 R1 U2 D4
1 4-3 D 15 15 L6 R1 U2 D3
0 1-3 R 16 0  L6 R3 U2 D3
1 draw 6-6
1 6-6 L 22 0  L6 R3 U2 D3
0 3-0 D 19 0  L6 R3 U2 D0
"""
# Counts: 4-4 opening 4+4. 4-6 on L: 6 + 2x4. 4-1 on R opens the branches: 6+1+4+4.
# 4-2 on U: 6+1+2+4. 2-2 on U, a later double: 6+1+2x2+4 = 15. 6-0 on L: 0+1+4+4 = 9.
# 1-1 on R: 0+2x1+4+4 = 10. 0-2 on L: 2+2+4+4. 2-6 on L: 6+2+4+4. 4-3 on D: 6+2+4+3.
# 1-3 on R covers 1-1: 6+3+4+3. 6-6 on L: 2x6+3+4+3 = 22. 3-0 on D: 12+3+4+0 = 19.
# Seat 1 keeps 0-0 and 0-4: 4 pips, rounded up to 5.


def game_g1() -> list[dict]:
    return (
        Game(2)
        .round(0, G1_HANDS, G1_BONEYARD, G1_MOVES)
        .settle("domino", 0, [0, 4], [0, 5])
        .end()
    )


# --------------------------------------------------------------------------- game G2
# 3 players: docs/rules.md's second worked example (open 3-5; 5-5 on R is the Sniff; 5-0 on R
# opens the branches; 5-6 and then the later double 6-6 on U for 20), then 6-4 covers the
# 6-6 on U, and play goes on until seat 0 goes out.
G2_HANDS = "0-1 1-3 2-3 2-6 3-5 5-6 / 1-2 1-4 2-2 2-5 5-5 6-6 / 0-3 0-5 0-6 3-3 3-6 4-6"
G2_BONEYARD = "4-4 4-5 1-6 2-4 1-5 0-0 1-1 3-4 0-4 0-2"
G2_MOVES = """
0 3-5 - 8 0   L3 R5
1 5-5 R 13 0  L3 R5
2 5-0 R 13 0  L3 R0 U5 D5
0 5-6 U 14 0  L3 R0 U6 D5
1 6-6 U 20 20 L3 R0 U6 D5
2 6-4 U 12 0  L3 R0 U4 D5
0 3-1 L 10 10 L1 R0 U4 D5
1 1-2 L 11 0  L2 R0 U4 D5
2 0-3 R 14 0  L2 R3 U4 D5
0 2-6 L 18 0  L6 R3 U4 D5
1 5-2 D 15 15 L6 R3 U4 D2
2 3-6 R 18 0  L6 R6 U4 D2
0 2-3 D 19 0  L6 R6 U4 D3
1 4-1 U 16 0  L6 R6 U1 D3
2 6-0 R 10 10 L6 R0 U1 D3
0 1-0 U 9 0   L6 R0 U0 D3
"""
# 5-5 on R: 3 + 2x5 = 13. 5-0 on R: 3+0+5+5. 5-6 on U: 3+0+6+5. 6-6 on U: 3+0+12+5 = 20.
# 6-4 on U covers the 6-6: 3+0+4+5 = 12. Left: seat 1 2-2 (4 -> 5), seat 2 3-3 (6 -> 5).


def game_g2() -> list[dict]:
    return (
        Game(3)
        .round(0, G2_HANDS, G2_BONEYARD, G2_MOVES)
        .settle("domino", 0, [0, 4, 6], [0, 5, 5])
        .end()
    )


# --------------------------------------------------------------------------- game G3
# 4 players in partnerships. Round D: seat 0 goes out; seat 1 keeps 0-0 (0 pips, no
# penalty). Round B: a blocked round with draws of one and two tiles, a pass with an empty
# boneyard that does not block, and the block; its hands keep 3, 7, 8 and 2 pips.
D_HANDS = "1-2 2-4 2-5 3-6 5-5 / 0-0 0-4 1-5 1-6 4-4 / 2-2 2-3 3-3 5-6 6-6 / 0-2 0-3 1-3 3-4 4-6"
D_BONEYARD = "2-6 4-5 3-5 0-5 0-6 0-1 1-4 1-1"
D_MOVES = """
0 5-5 - 10 10 L5 R5
1 5-1 R 11 0  L5 R1
2 5-6 L 17 0  L6 R1 U5 D5
3 1-3 R 19 0  L6 R3 U5 D5
0 5-2 D 16 0  L6 R3 U5 D2
1 6-1 L 11 0  L1 R3 U5 D2
2 2-3 D 12 0  L1 R3 U5 D3
3 3-0 D 9 0   L1 R3 U5 D0
0 3-6 R 12 0  L1 R6 U5 D0
1 0-4 D 16 0  L1 R6 U5 D4
2 6-6 R 22 0  L1 R6 U5 D4
3 6-4 R 14 0  L1 R4 U5 D4
0 4-2 D 12 0  L1 R4 U5 D2
1 4-4 R 16 0  L1 R4 U5 D2
2 2-2 D 18 0  L1 R4 U5 D2
3 2-0 D 14 0  L1 R4 U5 D0
0 1-2 L 15 15 L2 R4 U5 D0
"""
# 5-1 on R: 2x5 + 1 = 11 (the Sniff is terminal on L). 5-6 on L: 6+1+5+5 = 17.
# 6-6 on R: 1+12+5+4 = 22; 4-4 on R: 1+8+5+2 = 16; 2-2 on D: 1+8+5+4 = 18.

B_HANDS = "2-4 2-5 3-5 4-5 4-6 / 0-2 1-6 3-4 3-6 5-5 / 0-5 1-3 1-5 2-2 5-6 / 0-0 0-4 1-1 3-3 6-6"
B_BONEYARD = "2-6 0-3 1-4 1-2 4-4 0-6 0-1 2-3"
B_MOVES = """
1 5-5 - 10 10 L5 R5
2 5-0 L 10 10 L0 R5
3 0-0 L 10 10 L0 R5
0 5-4 R 14 0  L0 R4 U5 D5
1 4-3 R 13 0  L0 R3 U5 D5
2 5-6 U 14 0  L0 R3 U6 D5
3 6-6 U 20 20 L0 R3 U6 D5
0 6-4 U 12 0  L0 R3 U4 D5
1 3-6 R 15 15 L0 R6 U4 D5
2 5-1 D 11 0  L0 R6 U4 D1
3 0-4 L 15 15 L4 R6 U4 D1
0 4-2 L 13 0  L2 R6 U4 D1
1 1-6 D 18 0  L2 R6 U4 D6
2 2-2 L 20 20 L2 R6 U4 D6
3 draw 2-6
3 2-6 L 22 0  L6 R6 U4 D6
0 draw 0-3
0 draw 1-4
0 4-1 U 19 0  L6 R6 U1 D6
1 draw 1-2
1 1-2 U 20 20 L6 R6 U2 D6
2 draw 4-4
2 draw 0-6
2 6-0 D 14 0  L6 R6 U2 D0
3 draw 0-1
3 0-1 D 15 15 L6 R6 U2 D1
0 2-5 U 18 0  L6 R6 U5 D1
1 draw 2-3
1 pass
2 1-3 D 20 20 L6 R6 U5 D3
3 3-3 D 23 0  L6 R6 U5 D3
0 3-5 D 22 0  L6 R6 U5 D5
1 pass
"""
# 5-0 on L: 0 + 2x5 = 10 (R still bare Sniff). 0-0 on L, a later double: 0 + 10 = 10.
# 5-4 on R opens the branches: 0+4+5+5. 2-2 on L: 4+6+4+6 = 20. After 3-5 on D the ends
# are 6, 6, 5, 5: every 5 and 6 is on the table, the boneyard is empty: blocked. Left:
# seat 0 0-3 (3 -> 5), seat 1 0-2 2-3 (7 -> 5), seat 2 4-4 (8 -> 10), seat 3 1-1 (2 -> 0).
B_PIPS = [3, 7, 8, 2]
B_PENALTIES = [5, 5, 10, 0]


def game_g3() -> list[dict]:
    """D (seat 0 out), B renumbered to be led by seat 0, then B as dealt (led by seat 1).

    Shifting B by 3 seats swaps the partnerships: its hands then keep 7, 8, 2, 3 pips, so
    partnership 0 pays 5 + 0 (not 9 -> 10) and partnership 1 pays 10 + 5 (not 11 -> 10).
    """
    return (
        Game(4)
        .round(0, D_HANDS, D_BONEYARD, D_MOVES)
        .settle("domino", 0, [0, 0, 6, 7], [0, 0, 5, 5])
        .round(1, B_HANDS, B_BONEYARD, B_MOVES, shift=3)
        .settle("blocked", None, B_PIPS, B_PENALTIES, shift=3)
        .round(1, B_HANDS, B_BONEYARD, B_MOVES)
        .settle("blocked", None, B_PIPS, B_PENALTIES)
        .end()
    )


# --------------------------------------------------------------------------- game G4
# 2 players, the same deal twice. Seat 0 scores 135 and goes out in round 1 (seat 1 keeps
# 1-1: 2 pips round to 0), so seat 0 leads round 2, and reaches 250 with 3-4 on R (245 ->
# 270) while it still holds 1-1: the game ends there, with no round_end.
W_HANDS = "0-3 1-1 2-5 3-4 4-5 5-5 6-6 / 0-2 0-4 1-2 2-2 3-3 4-4 5-6"
W_BONEYARD = "3-5 0-1 0-0 4-6 2-6 2-4 2-3 1-4 1-3 3-6 0-6 0-5 1-6 1-5"
W_MOVES = """
0 5-5 - 10 10 L5 R5
1 5-6 L 16 0  L6 R5
0 5-4 R 20 20 L6 R4 U5 D5
1 4-4 R 24 0  L6 R4 U5 D5
0 6-6 L 30 30 L6 R4 U5 D5
1 4-0 R 22 0  L6 R0 U5 D5
0 0-3 R 25 25 L6 R3 U5 D5
1 3-3 R 28 0  L6 R3 U5 D5
0 5-2 D 25 25 L6 R3 U5 D2
1 2-2 D 27 0  L6 R3 U5 D2
0 3-4 R 25 25 L6 R4 U5 D2
1 2-1 D 22 0  L6 R4 U5 D1
0 1-1 D 23 0  L6 R4 U5 D1
"""
# 4-4 on R: 6+8+5+5 = 24. 6-6 on L: 12+8+5+5 = 30. 4-0 on R: 12+0+5+5 = 22.
WIN_MOVE = 11  # moves of round 2 up to and including 0 3-4 R


def game_g4() -> list[dict]:
    return (
        Game(2)
        .round(0, W_HANDS, W_BONEYARD, W_MOVES)
        .settle("domino", 0, [0, 2], [0, 0])
        .round(0, W_HANDS, W_BONEYARD, W_MOVES, stop_after=WIN_MOVE)
        .end(winner=0, reason="target")
    )


ALL_GAMES = {"G1": game_g1, "G2": game_g2, "G3": game_g3, "G4": game_g4}
