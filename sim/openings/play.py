"""The openings measurement: every opening tile led on the same deals (common random numbers).

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

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sim.core import engine
from sim.core.checks import check_players, check_seed
from sim.core.rng import seed_word
from sim.core.seating import team_count, team_of
from sim.core.tiles import N_TILES, TILE_NAMES
from sim.errors import SettingError, SniffError
from sim.kernels.generate import engine_kernel
from sim.kernels.runner import ROUND_CAP, Lineup, play_batch
from sim.run.plan import check_strategies

__all__ = ["DEFAULT_DEALS", "DEFAULT_STRATEGIES", "make_config", "PART_DEALS", "SLOTS_PER_DEAL"]

FORMAT = "sniff-openings/1"
SLOTS_PER_DEAL = N_TILES + 1  # 28 forced games, then the unforced one
UNFORCED_SLOT = N_TILES
DEFAULT_DEALS = 10_000
DEFAULT_STRATEGIES = "greedy"
CHUNK_DEALS = 1_000  # deals per play_batch call: bounds the round buffer (~100 MB at most)
PART_DEALS = 10_000  # deals per part of the games table (290,000 games, some 5 MB on disk)
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
    everyone else T) or one name per seat (the leader first, then clockwise); ``players``: a
    checked count (``make_config``)."""
    from strategies import parse_lineup_text, parse_spec

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
        raise SettingError(
            f"{{strategies}} takes 1 name, 2 (the leader's side, everyone else) or {players} "
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
    players = check_players(players)
    lineup = leader_lineup(players, check_strategies(strategies))
    if isinstance(deals, bool) or not isinstance(deals, int | np.integer) or deals <= 0:
        raise SettingError(f"{{deals}} must be a positive integer, got {deals!r}")
    seed = check_seed(seed)
    if isinstance(round_cap, bool) or not isinstance(round_cap, int) or round_cap < 1:
        raise SniffError(f"round cap must be a positive integer, got {round_cap}")
    if deals * SLOTS_PER_DEAL >= 2**63:
        raise SniffError(f"too many deals: {deals}")
    return OpeningsConfig(players, lineup, int(deals), int(seed), int(round_cap))


def game_id_of(deal: int | np.ndarray, slot: int | np.ndarray):
    """Game id of a deal's slot (tile id 0..27 forced, 28 unforced); see the module doc."""
    return deal * SLOTS_PER_DEAL + slot


# --- the engine's own deal and scoring (compiled once, in the engine's generated module), so
# no rule is written twice


def opening_points() -> np.ndarray:
    """Points scored by each tile (by id) as the opening placement, from ``sim.core.layout``."""
    return engine_kernel(("opening_points",)).opening_points()


def deal_table(config: OpeningsConfig, deal_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Leader and round-1 deck order of each deal (unforced), as the engine deals them:
    ``decks[i]`` is the shuffled order (hands dealt from the front, seat by seat, then the
    boneyard); the forced deals differ from it only by the engine's one swap."""
    return engine_kernel(("first_deals",)).first_deals(
        seed_word(config.seed), np.ascontiguousarray(deal_ids, dtype=np.int64),
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


def hand_texts(masks: np.ndarray) -> np.ndarray:
    """``hand_text`` of many masks at once (object array of str), joined by Arrow: the
    per-game Python join was a fifth of a run's time."""
    import pyarrow as pa
    import pyarrow.compute as pc

    masks = np.asarray(masks, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(N_TILES, dtype=np.int64)) & 1).astype(bool)
    _, tiles = np.nonzero(bits)  # row by row, tile id order within a row
    offsets = np.concatenate([[0], np.cumsum(bits.sum(axis=1))]).astype(np.int32)
    names = pa.array(TILE_NAMES).take(pa.array(tiles))
    joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(offsets), names), " ")
    return joined.to_numpy(zero_copy_only=False)


# --- playing


def chunk_ranges(deals: int, chunk_deals: int = CHUNK_DEALS,
                 part_deals: int = PART_DEALS) -> Iterator[tuple[int, int]]:
    """The ``[lo, hi)`` deal ranges played in one ``play_batch`` call each: ``chunk_deals``
    at most, and none across a multiple of ``part_deals`` (so a part of the games table is
    whole chunks, whatever the chunk size)."""
    if chunk_deals < 1 or part_deals < 1:
        raise ValueError("chunk and part sizes must be positive")
    lo = 0
    while lo < deals:
        hi = min(deals, lo + chunk_deals, (lo // part_deals + 1) * part_deals)
        yield lo, hi
        lo = hi


def iter_openings(
    config: OpeningsConfig,
    chunk_deals: int = CHUNK_DEALS,
    part_deals: int = PART_DEALS,
    first_deal: int = 0,
) -> Iterator[tuple[int, int, pd.DataFrame]]:
    """Play the deals chunk by chunk: ``(lo, hi, games)`` for deals ``lo..hi-1``.

    Why a generator: a run of 10^8 deals is 2.9 * 10^9 games, far more than memory holds, so
    each chunk's games are handed on (to the accumulators of ``sim.openings.tally`` and the
    part writer) and dropped. ``games`` holds every game of the chunk's deals in game id
    order; the columns are the ``games`` table of docs/openings.md. The games do not depend
    on the chunking: each is keyed by its deal and game id alone.
    """
    for lo, hi in chunk_ranges(config.deals, chunk_deals, part_deals):
        if hi > first_deal:
            yield lo, hi, _play_chunk(config, np.arange(max(lo, first_deal), hi,
                                                        dtype=np.int64))


def play_openings(
    config: OpeningsConfig,
    progress: Callable[[int], None] | None = None,
    chunk_deals: int = CHUNK_DEALS,
) -> pd.DataFrame:
    """Play every deal's 28 forced games and its unforced game; one row per game, in memory.

    Rows are in game id order (deal, then slot). ``progress(deals_done)`` is called after
    each chunk. The columns are the ``games`` table of docs/openings.md. For small runs and
    tests: ``sniff openings`` streams the chunks (``iter_openings``) instead of holding them.
    """
    frames = []
    for _, hi, games in iter_openings(config, chunk_deals):
        frames.append(games)
        if progress is not None:
            progress(hi)
    return pd.concat(frames, ignore_index=True)


def _play_chunk(config: OpeningsConfig, deals: np.ndarray) -> pd.DataFrame:
    """The 29 games of each of ``deals`` (consecutive deal ids), one row per game."""
    players = config.players
    team_table = np.array([team_of(seat, players) for seat in range(players)], dtype=np.int64)
    teams = team_count(players)
    points_table = opening_points()
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
    return pd.DataFrame({
        "game_id": result.game_ids,
        "deal_id": result.deal_ids,
        "rotation": result.rotations.astype(np.int8),
        "forced": forced >= 0,
        "leader": leader.astype(np.int8),
        "leader_team": side.astype(np.int8),
        "leader_hand": hand_texts(hands),
        "swapped": swapped,
        "opening_tile": pd.Categorical.from_codes(opening, pd.Index(TILE_NAMES)),
        "opening_tile_id": opening.astype(np.int8),
        "opening_points": points_table[opening].astype(np.int16),
        "end_reason": pd.Categorical.from_codes(reason, pd.Index(engine.END_NAMES)),
        "domino_seat": domino.astype(np.int8),
        "side_points": side_points.astype(np.int16),
        "side_penalty": side_penalty.astype(np.int16),
        "others_points": others_points.astype(np.int16),
        "others_penalty": others_penalty.astype(np.int16),
        "differential": (side_points - side_penalty)
        - (others_points - others_penalty) / (teams - 1),
        "side_out": (reason == engine.End.DOMINO)
        & (team_table[np.maximum(domino, 0)] == side),
        "winner_team": winner.astype(np.int8),
        "side_won": winner == side,
        "rounds": games[:, engine.GAME_ROUNDS].astype(np.int16),
        "cap_hit": games[:, engine.GAME_CAP_HIT] != 0,
    })
