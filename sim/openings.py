"""``sniff openings``: the value of every opening tile, measured with common random numbers.

For each of the 28 tiles, deal hands in which the leader holds that tile, make the leader
open with it, and play the rest of the game from 0-0. Round 1 (the forced-lead round) gives
the round figures; the game's winner gives the game figure.

Why this design (docs/openings.md has the user-facing account):

- **Common random numbers.** The engine's deal stream is keyed by (seed, deal id, round),
  and ``forced_lead`` moves the tile into the leader's hand with one swap against the
  leader's first dealt tile. All 28 forced games of deal ``d`` (and one unforced game, the
  strategy's own choice) use deal id ``d``: the same leader, the same other hands and the
  same boneyard order, except for that one swap. Differences between tiles are then not
  swamped by deal luck, and the per-deal differences (a tile minus the deal's mean over all
  28 tiles) give paired intervals much narrower than independent deals would.
- **The swap gives exactly the right deals.** Averaged over the shuffle, one swap with the
  leader's first slot leaves the leader's other tiles, the other hands and the boneyard
  order uniformly distributed given that the leader holds the tile (every hand containing it
  is reached with equal weight), so each tile's figures are expectations over the deals in
  which the leader holds it.
- **Game ids.** A game id keys only the strategies' random stream. Deal ``d`` owns the 29
  ids ``d * 29 + slot`` (slot = tile id 0..27 for the forced games, 28 for the unforced one):
  every game has its own id, so it can be traced again on its own, and the ids do not depend
  on the number of deals, so a larger run repeats a smaller one's games exactly.
- **The leader's side plays the first strategy.** The seat rotation of each deal puts the
  first ``--strategies`` name in the leader's seat (rotation ``-leader mod players``), so
  "leading tile t" is always measured for that strategy against the others.
"""

from __future__ import annotations

import base64
import html
import io as bytes_io
import json
import math
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
from numba import njit

from sim import engine
from sim.errors import SniffError
from sim.layout import ARM_L, EMPTY_LAYOUT, move_points
from sim.observation import team_of
from sim.runner import ROUND_CAP, Lineup, compile_lineup, play_batch
from sim.stats import mean_interval, wilson_interval
from sim.tiles import N_PIPS, N_TILES, TILE_HIGH, TILE_LOW, tile_name

FORMAT = "sniff-openings/1"
SLOTS_PER_DEAL = N_TILES + 1  # 28 forced games, then the unforced one
UNFORCED_SLOT = N_TILES
DEFAULT_DEALS = 10_000
DEFAULT_STRATEGIES = "greedy"
CHUNK_DEALS = 1_000  # deals per play_batch call: bounds the round buffer (~100 MB at most)
RESULTS_DIR = Path("results")
OUTPUT_FILES = ("openings.parquet", "games.parquet", "heatmap.png", "ranking.md",
                "summary.json")
METRICS = ("side_points", "differential", "p_out", "p_win")
METRIC_TITLES = {
    "side_points": "points the leader's side scores in round 1",
    "differential": "round 1 differential, leader's side minus the others (settlement included)",
    "p_out": "probability that the leader's side goes out in round 1",
    "p_win": "probability that the leader's side wins the game",
}
GAME_COLUMNS = {  # games.parquet column -> its metric (the per-game value averaged per tile)
    "side_points": "side_points",
    "differential": "differential",
    "p_out": "side_out",
    "p_win": "side_won",
}
TILE_NAMES = tuple(tile_name(tile) for tile in range(N_TILES))
END_REASONS = ("domino", "blocked", "target")  # engine END_DOMINO, END_BLOCKED, END_TARGET


# --- configuration


@dataclass(frozen=True)
class OpeningsConfig:
    """What decides an openings run: the games depend on nothing else."""

    players: int
    lineup: Lineup  # seat k of the lineup sits k seats after the leader
    deals: int
    seed: int
    round_cap: int = ROUND_CAP

    @property
    def labels(self) -> list[str]:
        return [spec.label for spec in self.lineup.seats]

    def to_dict(self) -> dict:
        return {
            "players": self.players,
            "strategies_from_leader": self.labels,
            "deals": self.deals,
            "seed": self.seed,
            "round_cap": self.round_cap,
            "deal_id": "deal number d = 0..deals-1, shared by the 29 games of the deal",
            "game_id": "d * 29 + slot; slot = forced tile id 0..27, or 28 for the unforced game",
            "rotation": "(-leader) % players: lineup seat k plays seat (leader + k) % players",
        }


def leader_lineup(players: int, strategies: str | Sequence[str]) -> Lineup:
    """Seats counted from the leader: ``S`` (everyone), ``S,T`` (the leader's side plays S,
    everyone else T) or one name per seat (the leader first, then clockwise)."""
    from strategies import parse_lineup_text, parse_spec

    if isinstance(players, bool) or players not in (2, 3, 4):
        raise SniffError(f"players must be 2, 3 or 4, got {players}")
    specs = (
        parse_lineup_text(strategies)
        if isinstance(strategies, str)
        else [parse_spec(name) for name in strategies]
    )
    if len(specs) == 1:
        seats = specs * players
    elif len(specs) == 2 and players == 4:
        seats = [specs[0], specs[1], specs[0], specs[1]]
    elif len(specs) == 2:
        seats = [specs[0]] + [specs[1]] * (players - 1)
    elif len(specs) == players:
        seats = list(specs)
    else:
        raise SniffError(
            f"--strategies takes 1 name, 2 (the leader's side, everyone else) or {players} "
            f"(one per seat from the leader), got {len(specs)}"
        )
    return Lineup(players, tuple(seats))


def make_config(
    players: int = 4,
    strategies: str | Sequence[str] = DEFAULT_STRATEGIES,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    round_cap: int = ROUND_CAP,
) -> OpeningsConfig:
    """Check the options (one-line ``SniffError`` for each bad one) and build the config."""
    lineup = leader_lineup(players, strategies)
    if isinstance(deals, bool) or not isinstance(deals, int | np.integer) or deals <= 0:
        raise SniffError(f"deals must be a positive integer, got {deals}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or not (
        0 <= seed < 2**63
    ):
        raise SniffError(f"seed must be an integer from 0 to 2**63-1, got {seed}")
    if isinstance(round_cap, bool) or not isinstance(round_cap, int) or round_cap < 1:
        raise SniffError(f"round cap must be a positive integer, got {round_cap}")
    if deals * SLOTS_PER_DEAL >= 2**63:
        raise SniffError(f"too many deals: {deals}")
    return OpeningsConfig(players, lineup, int(deals), int(seed), int(round_cap))


def game_id_of(deal: int | np.ndarray, slot: int | np.ndarray):
    """Game id of a deal's slot (tile id 0..27 forced, 28 unforced); see the module doc."""
    return deal * SLOTS_PER_DEAL + slot


# --- compiled helpers: the engine's own deal and scoring, so no rule is written twice


@njit
def _deal_table(seed, deal_ids, players):
    """Round 1 of each deal as the engine deals it: ``(leaders, decks)``, no tile forced.

    ``decks[i]`` is the shuffled order (hands dealt from the front, seat by seat, then the
    boneyard); the forced deals differ from it only by the engine's one swap.
    """
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    rng = np.zeros(1, dtype=np.uint64)
    n = deal_ids.shape[0]
    leaders = np.zeros(n, dtype=np.int64)
    decks = np.zeros((n, N_TILES), dtype=np.int64)
    for i in range(n):
        state[engine.PLAYERS] = players
        leaders[i] = engine.deal_round(state, seed, deal_ids[i], 1, -1, -1, rng)
        for index in range(N_TILES):
            decks[i, index] = state[engine.DECK + index]
    return leaders, decks


@njit
def _opening_points_table():
    points = np.zeros(N_TILES, dtype=np.int64)
    for tile in range(N_TILES):
        points[tile] = move_points(EMPTY_LAYOUT, tile * 4 + ARM_L)
    return points


def opening_points() -> np.ndarray:
    """Points scored by each tile (by id) as the opening placement, from ``sim.layout``."""
    return _opening_points_table()


def deal_table(config: OpeningsConfig, deal_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Leader and round-1 deck order of each deal (unforced), as the engine deals them."""
    return _deal_table(
        np.uint64(config.seed % 2**64), np.ascontiguousarray(deal_ids, dtype=np.int64),
        config.players,
    )


def leader_hands(config: OpeningsConfig, leaders: np.ndarray, decks: np.ndarray,
                 forced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The leader's round-1 hand (mask) per game, and whether the forced tile was swapped in.

    ``forced[i]`` is the forced tile (-1: none). The engine swaps a forced tile the leader
    does not hold with the leader's first dealt tile; this applies the same swap to the
    unforced deck (the tests check it against the engine's traces).
    """
    size = int(engine.HAND_SIZE_FOR_PLAYERS[config.players])
    rows = np.arange(len(leaders))
    slots = leaders[:, None] * size + np.arange(size)[None, :]
    tiles = decks[rows[:, None], slots]
    hands = np.bitwise_or.reduce(np.left_shift(np.int64(1), tiles), axis=1)
    first = decks[rows, leaders * size]
    tile_bit = np.where(forced >= 0, np.left_shift(np.int64(1), np.maximum(forced, 0)), 0)
    swapped = (forced >= 0) & ((hands & tile_bit) == 0)
    hands = np.where(swapped, (hands & ~np.left_shift(np.int64(1), first)) | tile_bit, hands)
    return hands, swapped


def hand_text(mask: int) -> str:
    """A hand mask as ``"a-b c-d ..."`` in tile id order (the games table's ``leader_hand``)."""
    return " ".join(TILE_NAMES[t] for t in range(N_TILES) if (mask >> t) & 1)


def hand_tiles(text: str) -> list[int]:
    """Tile ids of a ``leader_hand`` string."""
    return [TILE_NAMES.index(name) for name in text.split()]


# --- playing


def play_openings(
    config: OpeningsConfig,
    progress: Callable[[int], None] | None = None,
    chunk_deals: int = CHUNK_DEALS,
) -> pd.DataFrame:
    """Play every deal's 28 forced games and its unforced game; one row per game.

    Rows are in game id order (deal, then slot). ``progress(deals_done)`` is called after
    each chunk. The columns are the ``games.parquet`` table of docs/openings.md.
    """
    players = config.players
    team_table = np.array([team_of(seat, players) for seat in range(players)], dtype=np.int64)
    teams = 2 if players == 4 else players
    points_table = opening_points()
    frames = []
    for lo in range(0, config.deals, chunk_deals):
        hi = min(config.deals, lo + chunk_deals)
        deals = np.arange(lo, hi, dtype=np.int64)
        leaders, decks = deal_table(config, deals)
        slot = np.tile(np.arange(SLOTS_PER_DEAL, dtype=np.int64), len(deals))
        deal_ids = np.repeat(deals, SLOTS_PER_DEAL)
        game_leaders = np.repeat(leaders, SLOTS_PER_DEAL)
        forced = np.where(slot < UNFORCED_SLOT, slot, -1)
        rotations = (-game_leaders) % players
        result = play_batch(
            config.lineup, config.seed, game_id_of(deal_ids, slot), deal_ids=deal_ids,
            rotations=rotations, forced_leads=forced, round_cap=config.round_cap,
        )
        games = result.games
        first = result.first_rounds().astype(np.int64)  # round 1 of every game
        leader = first[:, engine.ROUND_LEADER]
        opening = first[:, engine.ROUND_OPENING_TILE]
        if not np.array_equal(leader, game_leaders) or not np.array_equal(
            games[:, engine.GAME_FIRST_LEADER], game_leaders
        ):
            raise RuntimeError("engine leader differs from the deal table's (engine changed?)")
        if not np.array_equal(opening[forced >= 0], forced[forced >= 0]):
            raise RuntimeError("a forced lead was not played as the opening tile")
        hands, swapped = leader_hands(
            config, game_leaders, np.repeat(decks, SLOTS_PER_DEAL, axis=0), forced
        )
        side = team_table[leader]
        team_points = first[:, engine.ROUND_POINTS : engine.ROUND_POINTS + teams]
        penalties = first[:, engine.ROUND_PENALTY : engine.ROUND_PENALTY + players]
        team_penalty = np.zeros((len(leader), teams), dtype=np.int64)
        for seat in range(players):
            team_penalty[:, team_table[seat]] += penalties[:, seat]
        rows = np.arange(len(leader))
        side_points = team_points[rows, side]
        side_penalty = team_penalty[rows, side]
        others_points = team_points.sum(axis=1) - side_points
        others_penalty = team_penalty.sum(axis=1) - side_penalty
        reason = first[:, engine.ROUND_END_REASON]
        domino = first[:, engine.ROUND_DOMINO_SEAT]
        winner = games[:, engine.GAME_WINNER_TEAM]
        frames.append(pd.DataFrame({
            "game_id": result.game_ids,
            "deal_id": result.deal_ids,
            "rotation": result.rotations.astype(np.int8),
            "forced": forced >= 0,
            "leader": leader.astype(np.int8),
            "leader_team": side.astype(np.int8),
            "leader_hand": [hand_text(int(mask)) for mask in hands],
            "swapped": swapped,
            "opening_tile": pd.Categorical.from_codes(opening, TILE_NAMES),
            "opening_tile_id": opening.astype(np.int8),
            "opening_points": points_table[opening].astype(np.int16),
            "end_reason": pd.Categorical.from_codes(reason, END_REASONS),
            "domino_seat": domino.astype(np.int8),
            "side_points": side_points.astype(np.int16),
            "side_penalty": side_penalty.astype(np.int16),
            "others_points": others_points.astype(np.int16),
            "others_penalty": others_penalty.astype(np.int16),
            "differential": (side_points - side_penalty)
            - (others_points - others_penalty) / (teams - 1),
            "side_out": (reason == engine.END_DOMINO)
            & (team_table[np.maximum(domino, 0)] == side),
            "winner_team": winner.astype(np.int8),
            "side_won": winner == side,
            "rounds": games[:, engine.GAME_ROUNDS].astype(np.int16),
            "cap_hit": games[:, engine.GAME_CAP_HIT] != 0,
        }))
        if progress is not None:
            progress(hi)
    return pd.concat(frames, ignore_index=True)


# --- figures


def _per_deal(forced: pd.DataFrame, column: str, deals: int) -> np.ndarray:
    return forced[column].to_numpy(dtype=np.float64).reshape(deals, N_TILES)


def summarise_openings(games: pd.DataFrame, config: OpeningsConfig | None = None
                       ) -> tuple[pd.DataFrame, dict]:
    """The per-tile table (docs/openings.md) and the run summary, from the games.

    Plain intervals treat each tile's deals as independent samples. The paired ``*_vs_avg``
    figures difference each game against its own deal's mean over the 28 tiles, which
    cancels the luck of the deal; the ranking uses them.
    """
    forced = games[games["forced"]].sort_values("game_id")
    unforced = games[~games["forced"]].sort_values("game_id")
    deals = len(forced) // N_TILES
    tiles = forced["opening_tile_id"].to_numpy().reshape(-1, N_TILES) if deals else None
    if deals == 0 or len(forced) != deals * N_TILES or not (
        tiles == np.arange(N_TILES)[None, :]
    ).all():
        raise SniffError("the games table must hold all 28 forced tiles of every deal")
    points_table = opening_points()
    table: dict[str, object] = {
        "tile": TILE_NAMES,
        "tile_id": np.arange(N_TILES, dtype=np.int8),
        "low": TILE_LOW.astype(np.int8),
        "high": TILE_HIGH.astype(np.int8),
        "deals": np.full(N_TILES, deals, dtype=np.int32),
        "opening_points": points_table.astype(np.int16),
    }
    for metric in METRICS:
        values = _per_deal(forced, GAME_COLUMNS[metric], deals)
        if metric.startswith("p_"):
            successes = values.sum(axis=0)
            plain = [(s / deals, *wilson_interval(s, deals)) for s in successes]
        else:
            plain = [mean_interval(values[:, tile]) for tile in range(N_TILES)]
        centred = values - values.mean(axis=1, keepdims=True)
        paired = [mean_interval(centred[:, tile]) for tile in range(N_TILES)]
        table[metric] = [row[0] for row in plain]
        table[f"{metric}_low"] = [row[1] for row in plain]
        table[f"{metric}_high"] = [row[2] for row in plain]
        table[f"{metric}_vs_avg"] = [row[0] for row in paired]
        table[f"{metric}_vs_avg_low"] = [row[1] for row in paired]
        table[f"{metric}_vs_avg_high"] = [row[2] for row in paired]
    # The strategy's own choice, from the unforced games: P(it opens with t | it holds t).
    held = np.zeros(N_TILES, dtype=np.int64)
    for text in unforced["leader_hand"]:
        held[hand_tiles(text)] += 1
    chosen = np.bincount(unforced["opening_tile_id"].to_numpy(dtype=np.int64),
                         minlength=N_TILES)
    table["held"] = held.astype(np.int32)
    table["chosen"] = chosen.astype(np.int32)
    ratio = [c / h if h else math.nan for c, h in zip(chosen, held)]
    bounds = [wilson_interval(c, h) for c, h in zip(chosen, held)]
    table["p_chosen"] = ratio
    table["p_chosen_low"] = [b[0] for b in bounds]
    table["p_chosen_high"] = [b[1] for b in bounds]
    table["chosen_share"] = chosen / max(len(unforced), 1)
    frame = pd.DataFrame(table)
    order = np.lexsort((np.arange(N_TILES), -frame["differential"].to_numpy()))
    rank = np.empty(N_TILES, dtype=np.int8)
    rank[order] = np.arange(1, N_TILES + 1)
    frame["rank"] = rank
    summary = _summary(games, forced, unforced, frame, config)
    frame.attrs["summary"] = summary
    return frame, summary


def _interval(values) -> dict:
    mean, low, high = mean_interval(values)
    return {"mean": mean, "low": low, "high": high}


def _proportion(flags) -> dict:
    flags = np.asarray(flags, dtype=bool)
    low, high = wilson_interval(int(flags.sum()), flags.size)
    return {"mean": float(flags.mean()) if flags.size else math.nan, "low": low, "high": high}


def _summary(games, forced, unforced, frame, config) -> dict:
    best = frame.sort_values("rank").iloc[0]
    worst = frame.sort_values("rank").iloc[-1]
    half_widths = {
        metric: {
            "plain": float(np.median(frame[f"{metric}_high"] - frame[f"{metric}_low"]) / 2),
            "paired": float(
                np.median(frame[f"{metric}_vs_avg_high"] - frame[f"{metric}_vs_avg_low"]) / 2
            ),
        }
        for metric in METRICS
    }
    return {
        "format": FORMAT,
        "config": config.to_dict() if config is not None else None,
        "deals": int(frame["deals"].iloc[0]),
        "games": int(len(games)),
        "cap_hit": int(games["cap_hit"].sum()),
        # Leading at all: the leader's side against the others in round 1, its own opening.
        "lead_value": _interval(unforced["differential"]),
        "unforced": {
            "side_points": _interval(unforced["side_points"]),
            "differential": _interval(unforced["differential"]),
            "p_out": _proportion(unforced["side_out"]),
            "p_win": _proportion(unforced["side_won"]),
        },
        "average_tile": {
            "side_points": float(forced["side_points"].mean()),
            "differential": float(forced["differential"].mean()),
            "p_out": float(forced["side_out"].mean()),
            "p_win": float(forced["side_won"].mean()),
        },
        "best_tile": str(best["tile"]),
        "worst_tile": str(worst["tile"]),
        # How much the common deals narrow the intervals (docs/openings.md: method).
        "median_half_width": half_widths,
    }


# --- outputs: ranked table, heat map, report section


def _signed(value: float, digits: int = 2) -> str:
    return "nan" if not math.isfinite(value) else f"{value:+.{digits}f}"


def _points_ci(row, metric: str, signed: bool = False) -> str:
    text = (lambda v: _signed(v)) if signed else (lambda v: f"{v:.2f}")
    return (f"{text(row[metric])} [{text(row[metric + '_low'])}, "
            f"{text(row[metric + '_high'])}]")


def _percent_ci(row, metric: str) -> str:
    if not math.isfinite(row[metric]):
        return "n/a"
    return (f"{100 * row[metric]:.1f}% [{100 * row[metric + '_low']:.1f}, "
            f"{100 * row[metric + '_high']:.1f}]")


RANKING_HEADER = ("rank", "tile", "opening pts", "round differential", "vs average tile (paired)",
                  "side's round points", "P(side goes out)", "P(side wins game)",
                  "P(chosen when held)")


def ranking_rows(table: pd.DataFrame) -> list[list[str]]:
    """The ranked table's cells, best tile first (every figure with its 95% interval)."""
    rows = []
    for _, row in table.sort_values("rank").iterrows():
        rows.append([
            str(row["rank"]), str(row["tile"]), str(row["opening_points"]),
            _points_ci(row, "differential", signed=True),
            _points_ci(row, "differential_vs_avg", signed=True),
            _points_ci(row, "side_points"),
            _percent_ci(row, "p_out"),
            _percent_ci(row, "p_win"),
            _percent_ci(row, "p_chosen"),
        ])
    return rows


def describe_run(summary: dict) -> str:
    config = summary.get("config") or {}
    names = config.get("strategies_from_leader") or []
    who = ", ".join(names) if len(set(names)) > 1 else (names[0] if names else "?")
    return (f"{config.get('players', '?')} players, strategies from the leader: {who}; "
            f"{summary['deals']:,} deals x 28 tiles, seed {config.get('seed', '?')}")


def summary_lines(summary: dict) -> list[str]:
    """The figures that are not per tile, one per line, each with its 95% interval."""
    lead = summary["lead_value"]
    unforced = summary["unforced"]
    half = summary["median_half_width"]
    return [
        f"Value of leading (unforced games, the strategy's own opening): the leader's side "
        f"scores {_signed(lead['mean'])} points [{_signed(lead['low'])}, "
        f"{_signed(lead['high'])}] more than the others in round 1; it wins "
        f"{100 * unforced['p_win']['mean']:.1f}% [{100 * unforced['p_win']['low']:.1f}, "
        f"{100 * unforced['p_win']['high']:.1f}] of the games.",
        f"Average over the 28 forced tiles: differential "
        f"{_signed(summary['average_tile']['differential'])}, "
        f"game win {100 * summary['average_tile']['p_win']:.1f}%.",
        f"Median 95% half-width of a tile's figure, plain / paired on the same deals (CRN): "
        f"differential {half['differential']['plain']:.2f} / "
        f"{half['differential']['paired']:.2f} points; P(side wins game) "
        f"{100 * half['p_win']['plain']:.1f} / {100 * half['p_win']['paired']:.1f} "
        f"percentage points.",
    ]


def ranking_markdown(table: pd.DataFrame, summary: dict) -> str:
    """``ranking.md``: the run, the summary lines and the ranked table."""
    lines = [
        "# Opening tiles, ranked",
        "",
        describe_run(summary) + ".",
        "",
        *[f"- {line}" for line in summary_lines(summary)],
        "",
        "Ranked by the round 1 point differential (leader's side minus the others, "
        "settlement included). Brackets are 95% intervals: plain ones over independent deals, "
        "and the paired one (tile minus the average tile on the same deals), which is what "
        "tells two tiles apart. P(chosen when held): how often the strategy, free to choose, "
        "opened with the tile when its leader held it.",
        "",
        ranking_table_markdown(table),
    ]
    return "\n".join(lines)


def ranking_text(table: pd.DataFrame, summary: dict) -> str:
    """The ranked table for a terminal: the run, the summary lines, aligned columns."""
    rows = [list(RANKING_HEADER), *ranking_rows(table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(RANKING_HEADER))]
    lines = [describe_run(summary), *summary_lines(summary), ""]
    for index, row in enumerate(rows):
        lines.append("  ".join(
            cell.ljust(width) if i in (1, 2) or index == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip())
    return "\n".join(lines) + "\n"


def ranking_table_markdown(table: pd.DataFrame) -> str:
    """The ranked table alone, as a Markdown table (one line per tile)."""
    lines = [
        "| " + " | ".join(RANKING_HEADER) + " |",
        "|" + "|".join("---" for _ in RANKING_HEADER) + "|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in ranking_rows(table)]
    return "\n".join(lines) + "\n"


def heatmap_figure(table: pd.DataFrame, summary: dict | None = None, metric: str = "differential"):
    """7x7 triangular heat map of a per-tile figure: row = one half, column = the other.

    Colours are centred on the average tile (diverging map: above average is blue, below is
    red), each cell is annotated with its value, and the colour bar gives the units.
    """
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    grid = np.full((N_PIPS, N_PIPS), np.nan)
    for _, row in table.iterrows():
        grid[int(row["high"]), int(row["low"])] = row[metric]
    values = table[metric].to_numpy(dtype=np.float64)
    centre = float(values.mean())
    spread = max(float(np.abs(values - centre).max()), 1e-9)
    norm = TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)
    figure = Figure(figsize=(7.6, 6.4), layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="RdBu", norm=norm)
    for high in range(N_PIPS):
        for low in range(high + 1):
            value = grid[high, low]
            shade = abs(norm(value) - 0.5) > 0.3
            axes.text(low, high, f"{value:+.1f}" if metric == "differential" else f"{value:.2f}",
                      ha="center", va="center", fontsize=9,
                      color="white" if shade else "black")
    axes.set_xticks(range(N_PIPS))
    axes.set_yticks(range(N_PIPS))
    axes.set_xlabel("low half (pips)")
    axes.set_ylabel("high half (pips)")
    for spine in axes.spines.values():
        spine.set_visible(False)
    units = {
        "differential": "round 1 differential, leader's side − others (points)",
        "side_points": "round 1 points of the leader's side (points)",
        "p_out": "P(leader's side goes out in round 1)",
        "p_win": "P(leader's side wins the game)",
    }[metric]
    figure.colorbar(image, ax=axes, label=units, shrink=0.85)
    title = f"Value of each opening tile: {METRIC_TITLES[metric]}"
    if summary is not None:
        title += "\n" + describe_run(summary)
    low, high = f"{metric}_vs_avg_low", f"{metric}_vs_avg_high"
    if low in table:
        half = float(np.median(table[high] - table[low]) / 2)
        sign = "+" if metric == "differential" else ""
        title += (f"\ncolours centred on the average tile ({centre:{sign}.2f}); "
                  f"typical paired 95% interval ±{half:.2f}")
    axes.set_title(title, fontsize=10)
    return figure


def figure_png(figure) -> bytes:
    buffer = bytes_io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    return buffer.getvalue()


@dataclass
class ReportSection:
    """A section for ``sniff report``: the same content as Markdown and as HTML.

    ``html`` is self-contained (the heat map inlined as a PNG data URI); ``figure`` is the
    matplotlib Figure, for a report that embeds figures its own way.
    """

    title: str
    markdown: str
    html: str
    figure: object = field(repr=False)


SECTION_TITLE = "Opening tiles"
SECTION_METHOD = (
    "Every tile is led, by force, on the same deals (common random numbers: for a deal, "
    "only the one swap that gives the leader the tile differs between tiles). Round "
    "figures are from the forced-lead round, the win probability from the rest of the "
    "game from 0-0. Brackets are 95% intervals; the paired one compares a tile with the "
    "average tile on the same deals."
)


def load_openings(folder: Path | str) -> tuple[pd.DataFrame, dict]:
    """``openings.parquet`` and ``summary.json`` of an openings output folder."""
    folder = Path(folder)
    if not (folder / "openings.parquet").is_file():
        raise SniffError(f"{folder} holds no openings.parquet (not a sniff openings folder)")
    table = pd.read_parquet(folder / "openings.parquet")
    summary = json.loads((folder / "summary.json").read_text())
    table.attrs["summary"] = summary
    return table, summary


def openings_section(source: pd.DataFrame | Path | str, summary: dict | None = None
                     ) -> ReportSection:
    """The openings section of the HTML report, from a table (``run_openings``) or a folder.

    Returns the ranked table with its intervals, the summary lines and the heat map.
    """
    if isinstance(source, pd.DataFrame):
        table = source
        summary = summary if summary is not None else source.attrs.get("summary")
        if summary is None:
            raise SniffError("openings_section needs the run summary (table.attrs['summary'])")
    else:
        table, summary = load_openings(source)
    figure = heatmap_figure(table, summary)
    image = base64.b64encode(figure_png(figure)).decode("ascii")
    title = SECTION_TITLE
    method = SECTION_METHOD
    markdown = "\n".join([
        f"## {title}", "", describe_run(summary) + ".", "", method, "",
        *[f"- {line}" for line in summary_lines(summary)], "",
        "![opening tile heat map](heatmap.png)", "",
        ranking_table_markdown(table),
    ])
    head = "".join(f"<th>{html.escape(h)}</th>" for h in RANKING_HEADER)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
        for cells in ranking_rows(table)
    )
    items = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(summary))
    section_html = (
        f'<section id="openings"><h2>{title}</h2>'
        f"<p>{html.escape(describe_run(summary))}.</p><p>{html.escape(method)}</p>"
        f"<ul>{items}</ul>"
        f'<img alt="heat map of the value of each opening tile" '
        f'src="data:image/png;base64,{image}">'
        f'<table class="ranking"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        "</section>"
    )
    return ReportSection(title, markdown, section_html, figure)


def openings_blocks(source: pd.DataFrame | Path | str, summary: dict | None = None) -> list:
    """The same section as ``sim.report_html`` blocks (Heading, Paragraph, Chart, Table), so
    ``sniff report`` can render it in its own style: ``items += openings_blocks(folder)``."""
    from sim.report_html import Chart, Heading, Paragraph, Table

    section = openings_section(source, summary)
    if isinstance(source, pd.DataFrame):
        table = source
        summary = summary if summary is not None else source.attrs["summary"]
    else:
        table, summary = load_openings(source)
    return [
        Heading(section.title),
        Paragraph(describe_run(summary) + "."),
        Paragraph(SECTION_METHOD),
        *[Paragraph(line) for line in summary_lines(summary)],
        Chart("openings-heatmap.png", "Value of each opening tile: mean round 1 differential "
              "of the leader's side, colours centred on the average tile.",
              figure_png(section.figure)),
        Table(list(RANKING_HEADER), ranking_rows(table), text_columns=2),
    ]


# --- the run: library entry point and files


def _parquet_metadata(config: OpeningsConfig, summary: dict, table: str, command: str) -> dict:
    from sim import __version__

    return {"format": FORMAT, "version": __version__, "table": table, "command": command,
            "config": config.to_dict(), "summary": summary}


def _write_parquet(frame: pd.DataFrame, path: Path, metadata: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    schema_metadata = dict(arrow.schema.metadata or {})
    schema_metadata[b"sniff"] = json.dumps(metadata).encode()
    arrow = arrow.replace_schema_metadata(schema_metadata)
    _atomic(path, lambda temporary: pq.write_table(arrow, temporary, compression="zstd"))


def _atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Write to a temporary name beside ``path``, then rename: a file is whole or absent."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        write(temporary)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def default_folder(base: Path = RESULTS_DIR) -> Path:
    from sim.io import new_folder

    return new_folder("openings", base)


def check_folder(folder: Path, overwrite: bool) -> None:
    """Refuse a file, or a folder with anything in it unless ``overwrite``."""
    from sim.io import check_folder_path

    check_folder_path(folder)
    if folder.is_dir() and any(folder.iterdir()) and not overwrite:
        raise SniffError(f"{folder} is not empty; use --overwrite to replace the openings "
                         "files in it")


def write_outputs(folder: Path, config: OpeningsConfig, games: pd.DataFrame,
                  table: pd.DataFrame, summary: dict, command: str = "") -> None:
    """The five output files (docs/openings.md: outputs)."""
    folder.mkdir(parents=True, exist_ok=True)
    _write_parquet(table, folder / "openings.parquet",
                   _parquet_metadata(config, summary, "openings", command))
    _write_parquet(games, folder / "games.parquet",
                   _parquet_metadata(config, summary, "games", command))
    figure = heatmap_figure(table, summary)
    _atomic(folder / "heatmap.png", lambda t: t.write_bytes(figure_png(figure)))
    _atomic(folder / "ranking.md", lambda t: t.write_text(ranking_markdown(table, summary)))
    record = {**summary, "command": command, "version": _version(),
              "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    _atomic(folder / "summary.json",
            lambda t: t.write_text(json.dumps(record, indent=2, allow_nan=True) + "\n"))


def _version() -> str:
    from sim import __version__

    return __version__


def run_openings(
    players: int = 4,
    strategies: str | Sequence[str] = DEFAULT_STRATEGIES,
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    out: Path | str | None = None,
    overwrite: bool = False,
    round_cap: int = ROUND_CAP,
    progress: Callable[[int], None] | None = None,
    command: str = "",
) -> pd.DataFrame:
    """Measure every opening tile; the per-tile table (``openings.parquet``'s rows).

    The table's ``attrs`` hold ``summary`` (the figures that are not per tile) and ``games``
    is not kept: call ``play_openings`` and ``summarise_openings`` for the per-game rows, or
    give ``out`` to write every output file.
    """
    config = make_config(players, strategies, deals, seed, round_cap)
    folder = None if out is None else Path(out)
    if folder is not None:
        check_folder(folder, overwrite)
    games = play_openings(config, progress)
    table, summary = summarise_openings(games, config)
    if folder is not None:
        write_outputs(folder, config, games, table, summary, command)
    return table


# --- traces: any recorded game, played again by the engine with every event


def trace_opening_game(config: OpeningsConfig, game_id: int) -> list[dict]:
    """The trace events of one game of an openings run (same deal, seats and forced lead).

    ``sim.trace.game_events`` plays a game on the deal id equal to its game id and without
    rotation; an openings game has deal id ``game_id // 29`` and a rotation, so it is played
    here through the kernel's trace entry with those.
    """
    from sim.trace import EventDecoder, start_event

    deal, slot = divmod(int(game_id), SLOTS_PER_DEAL)
    forced = slot if slot < UNFORCED_SLOT else -1
    leaders, _ = deal_table(config, np.array([deal]))
    rotation = int((-leaders[0]) % config.players)
    kernel, spec_functions, spec_params, seat_index = compile_lineup(config.lineup)
    seat_specs = np.zeros((1, engine.MAX_PLAYERS), dtype=np.int64)
    for seat in range(config.players):
        seat_specs[0, seat] = seat_index[(seat + rotation) % config.players]
    capacity = 4096
    while True:
        events = np.zeros((capacity, engine.EVENT_WIDTH), dtype=np.int64)
        kernel.trace_game(
            np.uint64(config.seed % 2**64), np.array([deal], dtype=np.int64),
            np.array([game_id], dtype=np.int64), seat_specs, spec_functions, spec_params,
            config.players, config.round_cap, np.array([forced], dtype=np.int64),
            np.zeros((1, engine.GAME_FIELDS), dtype=np.int64),
            np.zeros((1, 0, engine.ROUND_FIELDS), dtype=np.int32), events,
        )
        empty = np.flatnonzero(events[:, engine.EVENT_KIND] == 0)
        if empty.size:
            rows = events[: int(empty[0])]
            break
        capacity *= 4
    start = start_event(config.lineup, config.seed, int(game_id), config.round_cap)
    start["strategies"] = [
        config.lineup.seats[(seat + rotation) % config.players].label
        for seat in range(config.players)
    ]
    start.update({"deal": deal, "rotation": rotation,
                  "forced_lead": TILE_NAMES[forced] if forced >= 0 else None})
    decoder = EventDecoder(config.players)
    return [start] + [decoder.decode(row) for row in rows]


# --- the command


def run_command(players: int, strategies: str, deals: int, seed: int, out: Path | None,
                overwrite: bool, quiet: bool, argv: Sequence[str] = ()) -> None:
    """``sniff openings``: play, write the folder, print the ranked table."""
    config = make_config(players, strategies, deals, seed)
    folder = out if out is not None else default_folder()
    check_folder(folder, overwrite)
    command = " ".join(["sniff", *argv])
    bar = None
    if not quiet and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=config.deals, unit="deal", desc="sniff openings", file=sys.stderr,
                   leave=False)

    def progress(done: int) -> None:
        if bar is not None:
            bar.update(done - bar.n)

    try:
        games = play_openings(config, progress)
    finally:
        if bar is not None:
            bar.close()
    table, summary = summarise_openings(games, config)
    write_outputs(folder, config, games, table, summary, command)
    sys.stdout.write(ranking_text(table, summary))
    sys.stdout.write(
        f"\n{len(games):,} games; wrote openings.parquet, games.parquet, heatmap.png, "
        f"ranking.md and summary.json to {folder}\n"
    )


__all__ = [
    "OpeningsConfig", "ReportSection", "game_id_of", "heatmap_figure", "leader_lineup",
    "load_openings", "make_config", "openings_blocks", "openings_section", "play_openings",
    "ranking_markdown", "run_openings", "summarise_openings", "trace_opening_game",
    "write_outputs",
]
