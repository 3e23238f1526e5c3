"""Drive the compiled engine from hand-built states, for rule-by-rule unit tests.

The harness uses the same generated kernel as every run (greedy + random), so it tests the
code that users run, not a copy: its ``round_turns`` entry point, cached like the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from sim.core import engine
from sim.core.buffers import Log, Seats
from sim.core.layout import ARM_NAMES, EMPTY_LAYOUT, decode_ends
from sim.core.observation import OBSERVATION_SIZE
from sim.core.tiles import parse_tile, tile_name
from sim.kernels.runner import compile_lineup, lineup_of
from strategies import MAX_PARAMS, parse_spec
from tests.helpers.compiled_functions import cached

place_tile = cached("sim.core.layout.place_tile")  # compiled once per machine, not per test


def kernel():
    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    compiled, spec_functions, _, _ = compile_lineup(lineup, ("round_turns",))
    return compiled, {"greedy": int(spec_functions[0]), "random": int(spec_functions[1])}


@dataclass
class Setup:
    """A mid-round position: hands, boneyard (draw order), scores and the tiles played."""

    players: int
    hands: list[list[str]]
    boneyard: list[str] = field(default_factory=list)
    plays: list[tuple[str, str | None]] = field(default_factory=list)  # (tile, arm or None)
    scores: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    strategy: str = "greedy"

    def state(self) -> np.ndarray:
        state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
        state[engine.PLAYERS] = self.players
        state[engine.TARGET] = engine.TARGET_FOR_PLAYERS[self.players]
        state[engine.WINNER_TEAM] = -1
        state[engine.ROUND] = 1
        for seat, hand in enumerate(self.hands):
            for tile in hand:
                state[engine.HANDS + seat] |= 1 << parse_tile(tile)
        for team, score in enumerate(self.scores):
            state[engine.SCORES + team] = score
        layout = EMPTY_LAYOUT
        played = 0
        for tile, arm in self.plays:
            tile_id = parse_tile(tile)
            layout = place_tile(layout, tile_id, 0 if arm is None else ARM_NAMES.index(arm))
            played |= 1 << tile_id
        state[engine.LAYOUT] = layout
        state[engine.PLAYED] = played
        # The deck holds the boneyard at its end in draw order; what precedes it is unused.
        boneyard = [parse_tile(t) for t in self.boneyard]
        deck = [t for t in range(28) if t not in boneyard] + boneyard
        for index, tile in enumerate(deck):
            state[engine.DECK + index] = tile
        state[engine.BONEYARD_POS] = 28 - len(boneyard)
        return state


def play_turns(setup: Setup, seat: int) -> tuple[int, np.ndarray, np.ndarray, list[dict]]:
    """Play from ``seat`` to the end of the round; return (reason, state, round row, events)."""
    compiled, functions = kernel()
    state = setup.state()
    seat_functions = np.full(4, functions[setup.strategy], dtype=np.int64)
    seat_params = np.zeros((4, MAX_PARAMS), dtype=np.float64)
    moves = np.zeros(engine.MAX_MOVES, dtype=np.int64)
    observation = np.zeros(OBSERVATION_SIZE, dtype=np.int64)
    rng = np.ones(1, dtype=np.uint64)
    round_row = np.zeros(engine.ROUND_FIELDS, dtype=np.int64)
    events = np.zeros((512, engine.EVENT_WIDTH), dtype=np.int64)
    reason = compiled.round_turns(
        state, seat, -1, Seats(seat_functions, seat_params, moves, observation, rng),
        Log(round_row, events),
    )
    return int(reason), state, round_row, decode_events(events[: state[engine.EVENT_COUNT]])


def decode_events(rows: np.ndarray) -> list[dict]:
    out = []
    for row in rows:
        kind = int(row[engine.EVENT_KIND])
        event = {"kind": kind, "seat": int(row[engine.EVENT_SEAT])}
        if kind in (engine.EVENT_PLAY, engine.EVENT_DRAW):
            event["tile"] = tile_name(int(row[engine.EVENT_TILE]))
        if kind == engine.EVENT_PLAY:
            arm = int(row[engine.EVENT_ARM])
            event["arm"] = None if arm < 0 else ARM_NAMES[arm]
            event["count"] = int(row[engine.EVENT_COUNT_FIELD])
            event["points"] = int(row[engine.EVENT_POINTS])
            event["ends"] = decode_ends(int(row[engine.EVENT_LAYOUT]))
        if kind == engine.EVENT_ROUND_END:
            event["reason"] = int(row[engine.EVENT_TILE])
            event["pips"] = [int(v) for v in row[engine.EVENT_EXTRA : engine.EVENT_EXTRA + 4]]
            event["penalties"] = [
                int(v) for v in row[engine.EVENT_EXTRA + 4 : engine.EVENT_EXTRA + 8]
            ]
        event["scores"] = [int(v) for v in row[engine.EVENT_SCORES : engine.EVENT_SCORES + 4]]
        out.append(event)
    return out


KIND = {
    "play": engine.EVENT_PLAY,
    "draw": engine.EVENT_DRAW,
    "pass": engine.EVENT_PASS,
    "round_end": engine.EVENT_ROUND_END,
}
