"""A plain-Python player of whole games, built on the oracle's rules (``sim.reference.oracle``).

Two uses: the benchmark's baseline (the same games in plain Python, for the speed-up
ratio), and a second differential test: given the same seed it re-derives the engine's
deals from the documented random streams (splitmix64, written again here) and plays
``greedy`` and ``random`` with the documented tie-breaks, so every game must end exactly as
the compiled engine's does. Nothing here imports ``sim``.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.reference.rules import Layout, penalty, points_for, team_count, team_of

__all__ = ["choose", "moves_for", "place", "play_game"]

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
MIX_1 = 0xBF58476D1CE4E5B9
MIX_2 = 0x94D049BB133111EB
SALT_DEAL = 0xD1B54A32D192ED03
SALT_STRATEGY = 0x8CB92BA72F3D8DD7
HAND_SIZE = {2: 7, 3: 6, 4: 5}
TARGET = {2: 250, 3: 200, 4: 200}
ARMS = ("L", "R", "U", "D")
TILES = [(low, high) for low in range(7) for high in range(low, 7)]  # engine's tile ids


def mix64(z: int) -> int:
    z = ((z ^ (z >> 30)) * MIX_1) & MASK
    z = ((z ^ (z >> 27)) * MIX_2) & MASK
    return z ^ (z >> 31)


class Stream:
    """A counter-based stream as sim/core/rng.py documents it."""

    def __init__(self, seed: int, a: int, b: int, salt: int) -> None:
        z = mix64((seed & MASK) ^ salt)
        z = mix64(z ^ ((a * GOLDEN) & MASK))
        self.counter = mix64(z ^ ((b * MIX_1) & MASK))

    def below(self, bound: int) -> int:
        self.counter = (self.counter + GOLDEN) & MASK
        return ((mix64(self.counter) >> 32) * bound) >> 32


def copy_layout(layout: Layout) -> Layout:
    twin = Layout()
    twin.ends = dict(layout.ends)
    twin.later_double = set(layout.later_double)
    twin.sniff = layout.sniff
    twin.sniff_free = set(layout.sniff_free)
    twin.opened = layout.opened
    return twin


def place(layout: Layout, tile: int, arm: str) -> None:
    """Place a tile on an arm of the layout (the first tile opens it)."""
    if not layout.opened:
        layout.open_with(TILES[tile])
    else:
        error = layout.place(TILES[tile], arm)
        assert error is None, error


def moves_for(layout: Layout, hand: set[int]) -> list[tuple[int, str]]:
    """Legal placements in the engine's order: arm by arm, tiles by id."""
    if not layout.opened:
        return [(tile, "L") for tile in sorted(hand)]
    moves: list[tuple[int, str]] = []
    for arm in ARMS:
        value = layout.ends[arm]
        if value is not None:
            moves.extend((tile, arm) for tile in sorted(hand) if value in TILES[tile])
    return moves


def choose(strategy: str, layout: Layout, moves: list[tuple[int, str]], rng: Stream):
    """The plain-Python player's move: a built-in strategy's rule, restated."""
    if len(moves) == 1:
        return moves[0]
    if strategy == "random":
        return moves[rng.below(len(moves))]
    best, best_key = moves[0], (-1, -1)
    for tile, arm in moves:
        trial = copy_layout(layout)
        place(trial, tile, arm)
        key = (points_for(trial.count()), sum(TILES[tile]))
        if key > best_key:
            best, best_key = (tile, arm), key
    return best


@dataclass
class GameResult:
    winner: int  # team, -1 when unfinished
    scores: list[int]
    rounds: int
    placements: int
    draws: int


def play_game(players: int, seed: int, game_id: int, seats: list[str],
              round_cap: int = 200) -> GameResult:
    """One whole game; ``seats`` names each seat's strategy ("greedy" or "random")."""
    scores = [0] * team_count(players)
    # Each seat draws from its own stream, keyed by game and seat.
    seat_rngs = [Stream(seed, game_id, seat, SALT_STRATEGY) for seat in range(players)]
    size = HAND_SIZE[players]
    leader = -1
    placements = draws = 0
    for round_number in range(1, round_cap + 1):
        deal_rng = Stream(seed, game_id, round_number, SALT_DEAL)
        deck = list(range(28))
        for index in range(27, 0, -1):
            other = deal_rng.below(index + 1)
            deck[index], deck[other] = deck[other], deck[index]
        drawn_leader = deal_rng.below(players)
        leader = drawn_leader if leader < 0 else leader
        hands = [set(deck[s * size:(s + 1) * size]) for s in range(players)]
        boneyard = deck[players * size:]
        layout = Layout()
        seat = leader
        while True:
            move = None
            moves = moves_for(layout, hands[seat])
            if moves:
                move = choose(seats[seat], layout, moves, seat_rngs[seat])
            while move is None and boneyard:
                tile = boneyard.pop(0)
                hands[seat].add(tile)
                draws += 1
                fitting = moves_for(layout, {tile})
                if fitting:
                    move = choose(seats[seat], layout, fitting, seat_rngs[seat])
            if move is not None:
                tile, arm = move
                place(layout, tile, arm)
                hands[seat].discard(tile)
                placements += 1
                team = team_of(seat, players)
                scores[team] += points_for(layout.count())
                if scores[team] >= TARGET[players]:
                    return GameResult(team, scores, round_number, placements, draws)
                if not hands[seat]:
                    reason = "domino"
                    break
            elif not any(moves_for(layout, hand) for hand in hands):
                reason = "blocked"
                break
            seat = (seat + 1) % players
        for other, hand in enumerate(hands):
            scores[team_of(other, players)] -= penalty(sum(sum(TILES[t]) for t in hand))
        leader = seat if reason == "domino" else -1
    return GameResult(-1, scores, round_cap, placements, draws)
