"""Effect sizes a reader can act on: the value of leading, of a seat, and the final margin.

Why differences rather than rates: "the side that leads round 1 wins 53.4% (52.0–54.8%)"
next to "the other side wins 46.6%" makes the reader subtract two intervals by eye; the
question is the *difference* (+6.8 points, 4.0 to 9.6), with its own interval. Every figure
is computed from counts a report adds up over a run's parts, chunk by chunk
(``sim.report.aggregate``, exact tallies of ``sim.stats.tally``), so memory stays bounded
whatever the run's size.

- :func:`leader_effect_from`: win rate of the side whose seat led round 1 minus the average
  win rate of the other sides, over all games. The first leader is drawn from the deal, so
  the comparison is randomised. Per game the value is
  ``[leader's side won] − mean over the other sides of [that side won]``; the estimate is
  its mean with the normal interval and the score test
  (:func:`sim.stats.tally.tally_difference`; with two sides: McNemar's test).
  :func:`leader_by_side_from` gives the same per lineup side, as a difference of two
  independent proportions (games it led against games it did not; Newcombe interval), and
  :func:`leader_pooled_from` per strategy over several runs (a tournament: each strategy
  against the field).
- :func:`seat_effects_from`: each table position's win rate minus the average over all
  positions (with 4 players the partnerships of seats 0+2 and 1+3); per game
  ``[position won] − mean over all positions of [won]``, tested as above; p-values
  Holm-adjusted over the family of positions (with two positions the two effects are one
  comparison, left unadjusted) and intervals at the matching level
  (:func:`sim.stats.multiple.interval_z`). Rotation spreads the strategies evenly over the
  seats, so this is the seat's own effect, averaged over the strategies.
- :func:`margin_row_from`: a side's signed final margin, its final score minus the best
  other side's, over all games: mean ± SE, quantiles and the share of games won on the
  scoreboard (:func:`margins_pooled_from`: per strategy over several runs). Signed, so a
  lopsided matchup shows as a shifted distribution and not only as winners' margins.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sim.core.seating import team_count
from sim.stats.intervals import proportion_difference
from sim.stats.multiple import adjust, family_text, interval_z
from sim.stats.tally import Tally, tally_difference

__all__ = [
    "leader_by_side_from", "leader_effect_from", "leader_pooled_from", "margin_row_from",
    "margins_pooled_from", "seat_effects_from"
]

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _adjusted_seats(table: pd.DataFrame, teams: int, method: str) -> pd.DataFrame:
    """The seat effects' p-values adjusted over the positions, intervals to match."""
    p = table["p_value"].to_numpy(dtype=np.float64)
    if teams == 2:  # the two effects are one comparison (each the other's negative)
        method = "none"
        p = p[:1]
    table["p_adjusted"] = np.resize(adjust(p, method), teams)
    z = np.resize(interval_z(p, method), teams)
    table["low"] = table["estimate"] - z * table["se"]
    table["high"] = table["estimate"] + z * table["se"]
    table["family"] = (family_text(method, teams, "table positions") if teams > 2 else
                       "one comparison (two positions, each the other's negative)")
    return table[["position", "win_rate", "estimate", "low", "high", "se", "p_value",
                  "p_adjusted", "n", "family"]]


def leader_effect_from(players: int, games: int, leader_won: int, others_won: int,
                       values: Tally) -> dict:
    """The leader's side's win rate minus the others' average, from its counts: games,
    games the leader's side won, games another side won, and the tally of the per-game
    values."""
    teams = team_count(players)
    diff = tally_difference(values, method="leader vs others, per game")
    return {"players": players, "games": int(games),
            "leader_win_rate": leader_won / games if games else np.nan,
            "others_win_rate": others_won / games / (teams - 1) if games else np.nan,
            **diff.to_dict()}


def leader_by_side_from(counts, strategies: list[str]) -> pd.DataFrame:
    """Per lineup side: win rate when its team led round 1 minus when another team led,
    from each side's (wins leading, games leading, wins not leading, games not leading)."""
    rows = []
    for side, (strategy, (won_lead, led, won_rest, rest)) in enumerate(zip(strategies,
                                                                           counts)):
        diff = proportion_difference(int(won_lead), int(led), int(won_rest), int(rest))
        rows.append({"side": side, "strategy": strategy,
                     "win_rate_leading": won_lead / led if led else np.nan,
                     "win_rate_not_leading": won_rest / rest if rest else np.nan,
                     **diff.to_dict()})
    return pd.DataFrame(rows)


def seat_effects_from(players: int, games: int, team_wins, values: list[Tally],
                      method: str = "holm") -> pd.DataFrame:
    """Each table position's win rate minus the average position's, family-adjusted, from
    each position's wins and the tally of its per-game values.

    Columns: ``position``, ``win_rate``, ``estimate``, ``low``, ``high`` (at the adjusted
    level), ``se``, ``p_value`` (raw), ``p_adjusted``, ``n``, ``family``.
    """
    teams = team_count(players)
    rows = []
    for t in range(teams):
        diff = tally_difference(values[t], method="position vs average, per game")
        name = f"seats {t}+{t + 2}" if players == 4 else f"seat {t}"
        rows.append({"position": name, "win_rate": float(team_wins[t] / games),
                     "estimate": diff.estimate, "se": diff.se, "p_value": diff.p_value,
                     "n": diff.n})
    return _adjusted_seats(pd.DataFrame(rows), teams, method)


def margin_row_from(tally: Tally, quantiles: tuple[float, ...] = QUANTILES) -> dict:
    """One side's signed final margin (own score − best other's) from the tally of its
    margins: ``games``, ``mean``, ``se``, ``ahead`` (share of games it finished with the
    highest score), then ``q05``, ``q25``, ... (points)."""
    n = tally.n
    mean, se = tally.mean_se()
    row = {"games": n, "mean": mean if n else np.nan, "se": se if n > 1 else np.nan,
           "ahead": tally.share_above(0) if n else np.nan}
    for q in quantiles:
        row[f"q{round(100 * q):02d}"] = tally.quantile(q) if n else np.nan
    return row


def leader_pooled_from(runs: list[tuple[np.ndarray, list[str]]]) -> pd.DataFrame:
    """Per strategy over several runs: win rate when its side led round 1 minus otherwise,
    from each run's per-side counts (as :func:`leader_by_side_from` takes them) and its
    sides' strategies; the games are added over the runs, then compared as two independent
    proportions."""
    counts: dict[str, list[int]] = {}
    for by_side, strategies in runs:
        for side, strategy in enumerate(strategies):
            entry = counts.setdefault(strategy, [0, 0, 0, 0])
            for index, value in enumerate(by_side[side]):
                entry[index] += int(value)
    rows = []
    for strategy, (won_lead, led, won_rest, rest) in counts.items():
        diff = proportion_difference(won_lead, led, won_rest, rest)
        rows.append({"strategy": strategy, "games_leading": led, "games_not_leading": rest,
                     "win_rate_leading": won_lead / led if led else np.nan,
                     "win_rate_not_leading": won_rest / rest if rest else np.nan,
                     **diff.to_dict()})
    return pd.DataFrame(rows)


def margins_pooled_from(runs: list[tuple[list[Tally], list[str]]],
                        quantiles: tuple[float, ...] = QUANTILES) -> pd.DataFrame:
    """Per strategy over several runs: signed final margin, each side's margin tallies
    pooled under its strategy; columns as :func:`margin_row_from` with ``strategy``."""
    pooled: dict[str, Tally] = {}
    for tallies, strategies in runs:
        for side, strategy in enumerate(strategies):
            pooled.setdefault(strategy, Tally()).merge(tallies[side])
    return pd.DataFrame([{"strategy": strategy, **margin_row_from(tally, quantiles)}
                         for strategy, tally in pooled.items()])
