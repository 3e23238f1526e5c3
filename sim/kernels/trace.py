"""Game traces: whole games, played by the compiled engine, as JSON Lines (docs/rules.md).

The engine records raw event rows (``sim.core.engine`` EVENT_*); this module only translates
them into the trace format, so a trace shows exactly what the batch kernel does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import numpy as np

from sim.core import engine, record
from sim.core.checks import check_players, check_seed
from sim.core.layout import ARM_L, ARM_NAMES, EMPTY_LAYOUT, arm_field, decode_ends, open_values_mask
from sim.core.seating import team_count
from sim.core.tiles import mask_tiles, tile_name
from sim.kernels.runner import ROUND_CAP, Lineup, lineup_of, trace_events
from strategies import parse_spec

__all__ = [
    "EventDecoder", "game_events", "iter_trace", "placements_from_events", "start_event",
    "trace_games", "write_trace"
]


def game_events(
    lineup: Lineup, seed: int, game_id: int, round_cap: int = ROUND_CAP, forced_lead: int = -1
) -> list[dict]:
    """The events of one game as trace dicts, from ``game_start`` to ``game_end``."""
    rows, _ = trace_events(lineup, seed, game_id, round_cap, forced_lead)
    decoder = EventDecoder(lineup.players)
    return [start_event(lineup, seed, game_id, round_cap)] + [decoder.decode(r) for r in rows]


def start_event(lineup: Lineup, seed: int, game_id: int, round_cap: int = ROUND_CAP) -> dict:
    """The ``game_start`` event of a game (the engine writes no row for it)."""
    return {
        "event": "game_start",
        "players": lineup.players,
        "target": int(engine.TARGET_FOR_PLAYERS[lineup.players]),
        "seed": seed,
        "game": game_id,
        "strategies": [spec.label for spec in lineup.seats],
        "round_cap": round_cap,
    }


class EventDecoder:
    """Turns the engine's event rows of one game into trace dicts, one row at a time.

    It remembers what a row alone does not say (the layout before a play, which half of the
    tile matched; the round number), so rows can be decoded while the game is still being
    played (``sim.table.play`` reads them between the person's moves).
    """

    def __init__(self, players: int) -> None:
        self.players = players
        self.teams = team_count(players)
        self.layout_before = EMPTY_LAYOUT
        self.round_number = 0

    def decode(self, row) -> dict:
        players = self.players
        kind = int(row[engine.EVENT_KIND])
        seat = int(row[engine.EVENT_SEAT])
        scores = [int(v) for v in row[engine.EVENT_SCORES : engine.EVENT_SCORES + self.teams]]
        extra = row[engine.EVENT_EXTRA :]
        if kind == engine.EVENT_ROUND_START:
            self.round_number = int(row[engine.EVENT_TILE])
            self.layout_before = EMPTY_LAYOUT
            deck = extra[5:]
            return {
                "event": "round_start",
                "round": self.round_number,
                "leader": seat,
                "hands": [
                    [tile_name(t) for t in mask_tiles(int(extra[s]))] for s in range(players)
                ],
                "boneyard": [tile_name(int(t)) for t in deck[int(extra[4]) :]],
            }
        if kind == engine.EVENT_PLAY:
            tile = int(row[engine.EVENT_TILE])
            arm = int(row[engine.EVENT_ARM])
            layout = int(row[engine.EVENT_LAYOUT])
            matched = None if arm < 0 else arm_field(self.layout_before, arm) & 7
            self.layout_before = layout
            return {
                "event": "play",
                "seat": seat,
                "tile": tile_name(tile, matched),
                "end": None if arm < 0 else ARM_NAMES[arm],
                "count": int(row[engine.EVENT_COUNT_FIELD]),
                "points": int(row[engine.EVENT_POINTS]),
                "ends": decode_ends(layout),
                "scores": scores,
            }
        if kind == engine.EVENT_DRAW:
            return {"event": "draw", "seat": seat, "tile": tile_name(int(row[engine.EVENT_TILE]))}
        if kind == engine.EVENT_PASS:
            return {"event": "pass", "seat": seat}
        if kind == engine.EVENT_ROUND_END:
            reason = int(row[engine.EVENT_TILE])
            return {
                "event": "round_end",
                "round": self.round_number,
                "reason": engine.END_NAMES[reason],
                "winner_seat": seat if reason == engine.End.DOMINO else None,
                "hand_pips": [int(v) for v in extra[:players]],
                "penalties": [int(v) for v in extra[4 : 4 + players]],
                "scores": scores,
            }
        if kind == engine.EVENT_GAME_END:
            # The row carries the winning team (the game row's GAME_WINNER_TEAM, -1 when the
            # round cap was reached); the game's rounds are the last round started.
            winner = int(row[engine.EVENT_ARM])
            return {
                "event": "game_end",
                "winner": winner if winner >= 0 else None,
                "reason": "target" if winner >= 0 else "round_cap",
                "scores": scores,
                "rounds": self.round_number,
            }
        raise ValueError(f"unknown engine event kind {kind}")


def placements_from_events(
    rows: np.ndarray, players: int
) -> Iterator[tuple[np.ndarray, int, bool, int]]:
    """Every placement of a game's raw event rows as ``(state before it, seat, forced, move)``.

    The full engine state is rebuilt from the events alone (deal, draws, plays, passes),
    the public lacks included, independently of the engine's own bookkeeping: what a
    benchmark needs to replay real decisions, and what a test compares the engine's view
    with. ``forced``: the tile was just drawn (only its own placements were offered). The
    public record is rebuilt too; an opening tile a run imposed (``openings``) reads as
    chosen there, since the events do not say it was imposed.
    """
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    previous = (0, -1)
    for row in rows:
        kind, seat = int(row[engine.EVENT_KIND]), int(row[engine.EVENT_SEAT])
        tile = int(row[engine.EVENT_TILE])
        if kind == engine.EVENT_ROUND_START:
            extra = row[engine.EVENT_EXTRA:]
            state[:] = 0
            state[engine.PLAYERS] = players
            state[engine.TARGET] = engine.TARGET_FOR_PLAYERS[players]
            state[engine.ROUND] = tile
            state[engine.LEADER] = seat
            state[engine.WINNER_TEAM] = -1
            state[engine.HANDS:engine.HANDS + 4] = extra[:4]
            state[engine.BONEYARD_POS] = extra[4]
            state[engine.DECK:engine.DECK + 28] = extra[5:33]
        elif kind == engine.EVENT_DRAW:
            if previous != (engine.EVENT_DRAW, seat):
                state[engine.LACKS + seat] = open_values_mask(int(state[engine.LAYOUT]))
            state[engine.HANDS + seat] |= 1 << tile
            state[engine.BONEYARD_POS] += 1
            record.append(state, engine.RECORD, record.DRAW, seat, 0)
        elif kind == engine.EVENT_PASS:
            state[engine.LACKS + seat] |= open_values_mask(int(state[engine.LAYOUT]))
            record.append(state, engine.RECORD, record.PASS, seat, 0)
        elif kind == engine.EVENT_PLAY:
            arm = int(row[engine.EVENT_ARM])
            forced = previous == (engine.EVENT_DRAW, seat)
            move = tile * 4 + max(arm, ARM_L)
            yield state.copy(), seat, forced, move
            chosen = record.PLACE_FORCED if forced else record.PLACE_CHOSEN
            record.append(state, engine.RECORD, chosen, seat, move)
            state[engine.LAYOUT] = row[engine.EVENT_LAYOUT]
            state[engine.HANDS + seat] &= ~(1 << tile)
            state[engine.PLAYED] |= 1 << tile
        state[engine.SCORES:engine.SCORES + 4] = row[engine.EVENT_SCORES:engine.EVENT_SCORES + 4]
        previous = (kind, seat)


def iter_trace(
    lineup: Lineup, seed: int, games: int, first_game: int = 0, round_cap: int = ROUND_CAP
) -> Iterator[dict]:
    """The trace events of consecutive games, one game at a time."""
    for game_id in range(first_game, first_game + games):
        yield from game_events(lineup, seed, game_id, round_cap)


def trace_games(players: int, seed: int, strategies: list[str], games: int) -> list[dict]:
    """Events of games 0..games-1 for strategy names given per seat (or per partnership)."""
    lineup = lineup_of(check_players(players), [parse_spec(name) for name in strategies])
    return list(iter_trace(lineup, check_seed(seed), games))


def write_trace(events: Iterator[dict], out: IO[str] | Path) -> int:
    """Write events as JSON Lines; returns the number of lines written."""
    if isinstance(out, Path):
        with out.open("w") as handle:
            return write_trace(events, handle)
    lines = 0
    for event in events:
        out.write(json.dumps(event, separators=(",", ":")) + "\n")
        lines += 1
    return lines

