"""The openings figures from sums kept as the chunks are played: bounded memory for any run.

Why: ``sniff openings --deals`` goes up to 10^8 (2.9 * 10^9 games), and a table holding every
game grows with the run (2.7 GB at 300,000 deals). Every figure of ``openings.parquet``,
``summary.json`` and ``tile-pairs.csv`` is a function of a few sums over the deals, so
:class:`OpeningsTally` keeps only those, updated by each chunk's games and then dropped:

- per metric (``side_points``, ``differential``, ``p_out``, ``p_win``) the 28 tile sums and
  the 28 x 28 sums of per-deal products (``sim.openings.pairs.CrossSums``): the plain
  interval of a tile needs its sum and its sum of squares (the diagonal), the paired
  interval against the average tile and every tile-against-tile interval need the
  covariances between tiles, which the products give;
- over the unforced games (the strategy's own opening): the sums and sums of squares of
  the differential and the side's points, the counts of games the side went out and won,
  and per tile how often the leader held it and opened with it;
- the games played and the games that hit the round cap.

Every value is an integer (the differential in half points: with 3 players the other side
is the mean of two), so the sums are exact: the figures do not depend on the chunk size or
the order the chunks come in, and they equal those of the whole table at once to the last
bit for the means and to rounding for the intervals (tests/sim/openings/test_tally.py holds
them to the code that kept every game).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from sim.core.tiles import N_TILES, TILE_HIGH, TILE_LOW, TILE_NAMES
from sim.errors import SniffError
from sim.openings.pairs import METRICS as PAIR_METRICS
from sim.openings.pairs import CrossSums, pairs_table
from sim.openings.play import FORMAT, GAME_COLUMNS, METRICS, OpeningsConfig, opening_points
from sim.stats.intervals import Moments, wilson_interval
from sim.stats.multiple import adjust, p_from_interval

__all__: list[str] = []  # nothing here is used outside its room

HALF = {"differential": 0.5}  # the games column's values are multiples of this (else 1)


def _integers(values: pd.Series | np.ndarray, metric: str) -> np.ndarray:
    """A games column as exact integers in units of ``HALF`` (refused if it is not)."""
    scale = HALF.get(metric, 1.0)
    values = np.asarray(values)
    if values.dtype == bool or np.issubdtype(values.dtype, np.integer):
        if scale != 1.0:
            return values.astype(np.int64) * int(round(1 / scale))
        return values.astype(np.int64)
    integers = np.rint(values / scale)
    if not np.array_equal(integers * scale, values):
        raise SniffError(f"the games' {metric} values are not multiples of {scale}")
    return integers.astype(np.int64)


class OpeningsTally:
    """The sums behind every openings figure, fed one chunk of games at a time.

    ``add(games)`` takes whole deals (all 29 games of each, any order inside the chunk; the
    ``games`` table's columns); ``table(config)`` gives the per-tile table and the summary,
    ``pairs()`` the tile-against-tile table. Memory is a few kilobytes whatever the run.
    """

    def __init__(self) -> None:
        self.deals = 0
        self.games = 0
        self.cap_hit = 0
        self.forced = {metric: CrossSums(HALF.get(metric, 1.0)) for metric in METRICS}
        self.lead = Moments(scale=HALF["differential"])  # unforced differential
        self.lead_points = Moments()  # unforced side points
        self.unforced = 0
        self.unforced_out = 0
        self.unforced_won = 0
        self.held = np.zeros(N_TILES, dtype=np.int64)
        self.chosen = np.zeros(N_TILES, dtype=np.int64)

    def add(self, games: pd.DataFrame) -> None:
        """Add a chunk of games: every forced game of each of its deals, and its unforced one."""
        flags = games["forced"].to_numpy(dtype=bool)
        order = np.argsort(games["game_id"].to_numpy(), kind="stable")
        forced_rows = order[flags[order]]
        unforced_rows = order[~flags[order]]
        deals = len(forced_rows) // N_TILES
        tiles = games["opening_tile_id"].to_numpy()[forced_rows]
        deal_ids = games["deal_id"].to_numpy()[forced_rows]
        if len(forced_rows) != deals * N_TILES or not (
            tiles.reshape(-1, N_TILES) == np.arange(N_TILES)[None, :]
        ).all() or not (deal_ids.reshape(-1, N_TILES) == deal_ids[::N_TILES, None]).all():
            raise SniffError("the games table must hold all 28 forced tiles of every deal")
        for metric in METRICS:
            column = games[GAME_COLUMNS[metric]].to_numpy()[forced_rows]
            self.forced[metric].add(_integers(column, metric).reshape(deals, N_TILES))
        self.deals += deals
        self.games += len(games)
        self.cap_hit += int(games["cap_hit"].to_numpy(dtype=bool).sum())
        unforced = games.iloc[unforced_rows]
        self.lead.add(_integers(unforced["differential"].to_numpy(), "differential"))
        self.lead_points.add(_integers(unforced["side_points"].to_numpy(), "side_points"))
        self.unforced += len(unforced)
        self.unforced_out += int(unforced["side_out"].to_numpy(dtype=bool).sum())
        self.unforced_won += int(unforced["side_won"].to_numpy(dtype=bool).sum())
        for text in unforced["leader_hand"]:
            for name in text.split():
                self.held[TILE_NAMES.index(name)] += 1
        self.chosen += np.bincount(unforced["opening_tile_id"].to_numpy(dtype=np.int64),
                                   minlength=N_TILES)

    def merge(self, other: OpeningsTally) -> None:
        """Add another tally's sums (a part played elsewhere, ``sim.openings.parts``): the
        same sums as adding its games here, since every sum is an exact integer."""
        self.deals += other.deals
        self.games += other.games
        self.cap_hit += other.cap_hit
        for metric in METRICS:
            mine, theirs = self.forced[metric], other.forced[metric]
            mine.n += theirs.n
            mine.total += theirs.total
            mine.cross += theirs.cross
        for own, others in ((self.lead, other.lead), (self.lead_points, other.lead_points)):
            own.add_sums(others.n, others.total, others.total_sq)
        self.unforced += other.unforced
        self.unforced_out += other.unforced_out
        self.unforced_won += other.unforced_won
        self.held += other.held
        self.chosen += other.chosen

    # --- the figures

    def table(self, config: OpeningsConfig | None = None) -> tuple[pd.DataFrame, dict]:
        """The per-tile table (``openings.parquet``'s rows, docs/openings.md) and the summary.

        Plain intervals treat each tile's deals as independent samples. The paired
        ``*_vs_avg`` figures difference each game against its own deal's mean over the 28
        tiles, which cancels the luck of the deal; the ranking uses them.
        """
        deals = self.deals
        if deals == 0:
            raise SniffError("the games table must hold all 28 forced tiles of every deal")
        table: dict[str, object] = {
            "tile": TILE_NAMES,
            "tile_id": np.arange(N_TILES, dtype=np.int8),
            "low": TILE_LOW.astype(np.int8),
            "high": TILE_HIGH.astype(np.int8),
            "deals": np.full(N_TILES, deals, dtype=np.int32),
            "opening_points": opening_points().astype(np.int16),
        }
        for metric in METRICS:
            sums = self.forced[metric]
            if metric.startswith("p_"):
                plain = [(int(s) / deals, *wilson_interval(int(s), deals)) for s in sums.total]
            else:
                plain = [sums.combination(np.eye(N_TILES, dtype=np.int64)[tile]).interval()
                         for tile in range(N_TILES)]
            paired = [sums.versus_average(tile).interval() for tile in range(N_TILES)]
            if not metric.startswith("p_"):  # the mean exactly as the games' column mean
                means = sums.means()
                plain = [(float(m), low, high) for m, (_, low, high) in zip(means, plain)]
            table[metric] = [row[0] for row in plain]
            table[f"{metric}_low"] = [row[1] for row in plain]
            table[f"{metric}_high"] = [row[2] for row in plain]
            table[f"{metric}_vs_avg"] = [row[0] for row in paired]
            table[f"{metric}_vs_avg_low"] = [row[1] for row in paired]
            table[f"{metric}_vs_avg_high"] = [row[2] for row in paired]
        # The strategy's own choice, from the unforced games: P(it opens with t | it holds t).
        held, chosen = self.held, self.chosen
        table["held"] = held.astype(np.int32)
        table["chosen"] = chosen.astype(np.int32)
        bounds = [wilson_interval(int(c), int(h)) for c, h in zip(chosen, held)]
        table["p_chosen"] = [int(c) / int(h) if h else math.nan for c, h in zip(chosen, held)]
        table["p_chosen_low"] = [b[0] for b in bounds]
        table["p_chosen_high"] = [b[1] for b in bounds]
        table["chosen_share"] = chosen / max(self.unforced, 1)
        frame = pd.DataFrame(table)
        for metric in ("differential", "p_win"):  # tile vs the average tile: a family of 28
            raw = p_from_interval(frame[f"{metric}_vs_avg"], frame[f"{metric}_vs_avg_low"],
                                  frame[f"{metric}_vs_avg_high"])
            frame[f"{metric}_vs_avg_p"] = raw
            frame[f"{metric}_vs_avg_p_holm"] = adjust(raw, "holm")
        order = np.lexsort((np.arange(N_TILES), -frame["differential"].to_numpy()))
        rank = np.empty(N_TILES, dtype=np.int8)
        rank[order] = np.arange(1, N_TILES + 1)
        frame["rank"] = rank
        summary = self._summary(frame, config)
        frame.attrs["summary"] = summary
        return frame, summary

    def pairs(self, method: str = "holm") -> pd.DataFrame:
        """``tile-pairs.csv``: every pair of tiles on the same deals (``sim.openings.pairs``)."""
        return pairs_table({metric: self.forced[metric] for metric in PAIR_METRICS}, method)

    def _proportion(self, successes: int) -> dict:
        low, high = wilson_interval(successes, self.unforced)
        mean = successes / self.unforced if self.unforced else math.nan
        return {"mean": mean, "low": low, "high": high}

    def _summary(self, frame: pd.DataFrame, config: OpeningsConfig | None) -> dict:
        ranked = frame.sort_values("rank")
        half_widths = {
            metric: {
                "plain": float(np.median(frame[f"{metric}_high"] - frame[f"{metric}_low"]) / 2),
                "paired": float(np.median(frame[f"{metric}_vs_avg_high"]
                                          - frame[f"{metric}_vs_avg_low"]) / 2),
            }
            for metric in METRICS
        }
        forced_games = self.deals * N_TILES
        average = {metric: HALF.get(metric, 1.0) * float(self.forced[metric].total.sum())
                   / forced_games for metric in METRICS}
        lead = _interval(self.lead)
        return {
            "format": FORMAT,
            "config": config.to_dict() if config is not None else None,
            "deals": self.deals,
            "games": self.games,
            "cap_hit": self.cap_hit,
            # Leading at all: the leader's side against the others in round 1, its own opening.
            "lead_value": lead,
            "unforced": {
                "side_points": _interval(self.lead_points),
                "differential": dict(lead),
                "p_out": self._proportion(self.unforced_out),
                "p_win": self._proportion(self.unforced_won),
            },
            "average_tile": average,
            "best_tile": str(ranked["tile"].iloc[0]),
            "worst_tile": str(ranked["tile"].iloc[-1]),
            # How much the common deals narrow the intervals (docs/openings.md: method).
            "median_half_width": half_widths,
        }


def _interval(moments: Moments) -> dict:
    mean, low, high = moments.interval()
    return {"mean": mean, "low": low, "high": high}


def summarise_openings(games: pd.DataFrame, config: OpeningsConfig | None = None
                       ) -> tuple[pd.DataFrame, dict]:
    """The per-tile table (docs/openings.md) and the run summary, from a games table held in
    memory (``play_openings``, or a folder's parts read together): the same figures as the
    run's own tally, for checking or recomputing them."""
    tally = OpeningsTally()
    tally.add(games)
    return tally.table(config)
