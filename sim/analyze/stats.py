"""The figures of an analysis, with intervals that take games as the unit.

Why games, not decisions: the decisions of one game share its deal, its scores and its
players' earlier choices, so they are not independent; an interval that counted each
decision as a draw would be too narrow. Every figure here is a ratio over games (its sum
over the games' decisions divided by their count), and its 95% interval is the percentile
interval of the same ratio over games resampled with replacement (a cluster bootstrap).
The resamples are drawn once from the analysis seed and shared by every figure, so the
tables are the same on every machine.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from sim.analyze.settings import Mark, Phase

# the marks of a costly decision, mildest first
MARKS = (Mark.INACCURACY.value, Mark.MISTAKE.value, Mark.BLUNDER.value)
PLURAL = {"inaccuracy": "inaccuracies", "mistake": "mistakes", "blunder": "blunders"}


class Resamples:
    """The games of an analysis and their bootstrap weights (resample x game)."""

    def __init__(self, frame: pd.DataFrame, reps: int, seed: int) -> None:
        keys = frame["source"].astype(str) + "\x00" + frame["game_id"].astype(str)
        self.cluster, uniques = pd.factorize(keys, sort=True)
        self.games = len(uniques)
        rng = np.random.default_rng([seed, 0x5A4E])
        self.weights = rng.multinomial(self.games, np.full(self.games, 1.0 / self.games),
                                       size=reps).astype(np.float64) if self.games else None

    def ratio(self, mask: np.ndarray, values: np.ndarray) -> tuple[float, float, float]:
        """The mean of ``values`` over the decisions of ``mask``, and its 95% interval (NaN
        when they come from one game: its resamples would all be the same game)."""
        if not mask.any():
            return float("nan"), float("nan"), float("nan")
        assert self.weights is not None, "a decision means a game, so weights were drawn"
        sums = np.bincount(self.cluster[mask], weights=values[mask], minlength=self.games)
        counts = np.bincount(self.cluster[mask], minlength=self.games).astype(np.float64)
        mean = float(sums.sum() / counts.sum())
        if np.count_nonzero(counts) < 2:  # one game: nothing to resample, no interval
            return mean, float("nan"), float("nan")
        top, bottom = self.weights @ sums, self.weights @ counts
        with np.errstate(invalid="ignore", divide="ignore"):
            boot = top / bottom
        boot = boot[np.isfinite(boot)]
        low, high = np.percentile(boot, [2.5, 97.5]) if boot.size else (mean, mean)
        return mean, float(low), float(high)

    def games_of(self, mask: np.ndarray) -> int:
        return int(np.unique(self.cluster[mask]).size)


def _figure(row: dict, name: str, triple: tuple[float, float, float]) -> None:
    row[name], row[f"{name}_low"], row[f"{name}_high"] = triple


def noise_share(resamples: Resamples, mask: np.ndarray, differs: np.ndarray,
                separated: np.ndarray) -> tuple[float, float, float]:
    """Of the decisions of ``mask`` whose move played is not the best, the share not
    separated from it, with its interval over games (0 when every move played is the
    best)."""
    if not (differs & mask).any():
        return 0.0, 0.0, 0.0
    return resamples.ratio(mask & differs, (~separated).astype(np.float64))


def group_rows(frame: pd.DataFrame, resamples: Resamples, by: list[str]) -> list[dict]:
    """One row per group of ``by``: decisions, games, the losses, accuracy, error rates,
    the share separated from the best and the noise share, each with its interval."""
    marked = frame["mark"].isin(MARKS).to_numpy()
    loss = frame["loss"].to_numpy(dtype=np.float64)
    loss_full = frame["loss_full"].to_numpy(dtype=np.float64)
    differs = (frame["played"] != frame["best"]).to_numpy()
    separated = frame["separated"].to_numpy(dtype=bool)
    rows = []
    for key, index in frame.groupby(by, sort=True, observed=True).indices.items():
        mask = np.zeros(len(frame), dtype=bool)
        mask[index] = True
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["decisions"], row["games"] = int(mask.sum()), resamples.games_of(mask)
        _figure(row, "loss", resamples.ratio(mask, loss))
        _figure(row, "loss_full", resamples.ratio(mask, loss_full))
        _figure(row, "accuracy", resamples.ratio(mask, (~marked).astype(np.float64)))
        _figure(row, "error_rate", resamples.ratio(mask, marked.astype(np.float64)))
        for mark in MARKS:
            hits = (frame["mark"] == mark).to_numpy()
            row[PLURAL[mark]] = int((hits & mask).sum())
            _figure(row, f"{mark}_rate", resamples.ratio(mask, hits.astype(np.float64)))
        _figure(row, "separated", resamples.ratio(mask, separated.astype(np.float64)))
        _figure(row, "noise_share", noise_share(resamples, mask, differs, separated))
        row["best_played"] = float((~differs & mask).sum() / mask.sum())
        rows.append(row)
    return rows


def strategy_table(frame: pd.DataFrame, resamples: Resamples) -> pd.DataFrame:
    return pd.DataFrame(group_rows(frame, resamples, ["strategy"]))


def split_table(frame: pd.DataFrame, resamples: Resamples, column: str) -> pd.DataFrame:
    """The strategy figures split by ``column`` (``phase``: placements of a drawn tile are
    left out, their only choice being the end)."""
    if column == "phase":
        frame = frame[frame["phase"] != Phase.DRAWN.value]
        resamples = _subset(resamples, frame.index.to_numpy())
    return pd.DataFrame(group_rows(frame.reset_index(drop=True), resamples,
                                   ["strategy", column]))


def _subset(resamples: Resamples, index: np.ndarray) -> Resamples:
    """The same games and weights, over some decisions only."""
    part = Resamples.__new__(Resamples)
    part.cluster, part.games, part.weights = (resamples.cluster[index], resamples.games,
                                              resamples.weights)
    return part


def curve_table(curve: pd.DataFrame, resamples_of, seed: int, reps: int) -> pd.DataFrame:
    """Per strategy and budget: the losses, the share separated and the noise share."""
    if curve.empty:
        return pd.DataFrame()
    resamples = resamples_of(curve, reps, seed)
    separated = curve["separated"].to_numpy(dtype=bool)
    differs = ~curve["best_is_played"].to_numpy(dtype=bool)
    rows = []
    groups = curve.groupby(["strategy", "budget"], sort=True).indices
    for key, index in groups.items():
        # a two-column groupby's keys are (strategy, budget) pairs: the stubs say Hashable
        strategy, budget = cast("tuple[str, int]", key)
        mask = np.zeros(len(curve), dtype=bool)
        mask[index] = True
        row = {"strategy": strategy, "budget": int(budget), "decisions": int(mask.sum())}
        _figure(row, "loss", resamples.ratio(mask, curve["loss"].to_numpy(np.float64)))
        _figure(row, "loss_full", resamples.ratio(mask, curve["loss_full"].to_numpy(np.float64)))
        _figure(row, "separated", resamples.ratio(mask, separated.astype(np.float64)))
        _figure(row, "noise_share", noise_share(resamples, mask, differs, separated))
        rows.append(row)
    return pd.DataFrame(rows)


def costliest(frame: pd.DataFrame, count: int) -> pd.DataFrame:
    """The ``count`` decisions that gave up the most, separated from the best first."""
    if frame.empty or count == 0:
        return frame.head(0)
    order = frame.assign(_sep=frame["separated"].astype(int)).sort_values(
        ["_sep", "loss_full", "source", "game_id", "decision"],
        ascending=[False, False, True, True, True], kind="stable")
    return order.drop(columns="_sep").head(count).reset_index(drop=True)


__all__ = ["MARKS", "Resamples"]
