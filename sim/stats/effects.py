"""Effect sizes a reader can act on: the value of leading, of a seat, and the final margin.

Why differences rather than rates: "the side that leads round 1 wins 53.4% (52.0–54.8%)"
next to "the other side wins 46.6%" makes the reader subtract two intervals by eye; the
question is the *difference* (+6.8 points, 4.0 to 9.6), with its own interval. All figures
here come from the ``games`` table of one run (docs/data-format.md).

- :func:`leader_effect`: win rate of the side whose seat led round 1 minus the average win
  rate of the other sides, over all games. The first leader is drawn from the deal, so the
  comparison is randomised. Per game the value is
  ``[leader's side won] − mean over the other sides of [that side won]``; the estimate is
  its mean with the normal interval and the score test of
  :func:`sim.stats.intervals.paired_difference` (with two sides: McNemar's test).
  :func:`leader_effect_by_side` gives the same per lineup side, as a difference of two
  independent proportions (games it led against games it did not; Newcombe interval).
- :func:`seat_effects`: each table position's win rate minus the average over all
  positions (with 4 players the partnerships of seats 0+2 and 1+3); per game
  ``[position won] − mean over all positions of [won]``, tested as above; p-values
  Holm-adjusted over the family of positions (with two positions the two effects are one
  comparison, left unadjusted) and intervals at the matching level
  (:func:`sim.stats.multiple.interval_z`). Rotation spreads the strategies evenly over the
  seats, so this is the seat's own effect, averaged over the strategies.
- :func:`margin_quantiles`: each side's signed final margin, its final score minus the
  best other side's, over all games: mean ± SE, quantiles and the share of games won on
  the scoreboard. Signed, so a lopsided matchup shows as a shifted distribution and not
  only as winners' margins.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sim.stats.intervals import paired_difference, proportion_difference
from sim.stats.multiple import adjust, family_text, interval_z
from sim.stats.sides import n_teams, players_of, side_columns, side_strategies, team_of_side
from sim.stats.tally import Tally, tally_difference

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _leader_team(games: pd.DataFrame, players: int) -> np.ndarray:
    leader = games["first_leader"].to_numpy(np.int64)
    return leader % 2 if players == 4 else leader


def _winner_team(games: pd.DataFrame) -> np.ndarray:
    """Table position (team) that won each game, -1 if none."""
    return games["winner_team"].to_numpy(np.int64)


def _versus_average(won: np.ndarray) -> np.ndarray:
    """Per game and position: ``[position won] − mean over the other positions``.

    ``won`` is ``(games, positions)`` of 0/1.
    """
    k = won.shape[1]
    others = (won.sum(axis=1, keepdims=True) - won) / (k - 1)
    return won - others


def leader_effect(games: pd.DataFrame) -> dict:
    """Win rate of the side leading round 1 minus the other sides' average, with interval."""
    players = players_of(games)
    teams = n_teams(players)
    leader = _leader_team(games, players)
    winner = _winner_team(games)
    won = (winner[:, None] == np.arange(teams)[None, :]).astype(np.float64)
    values = _versus_average(won)[np.arange(leader.size), leader]
    diff = paired_difference(values, method="leader vs others, per game")
    leading = float((winner == leader).mean()) if leader.size else np.nan
    others = float(((winner >= 0) & (winner != leader)).mean() / (teams - 1)) \
        if leader.size else np.nan
    return {"players": players, "games": int(leader.size), "leader_win_rate": leading,
            "others_win_rate": others, **diff.to_dict()}


def leader_effect_by_side(games: pd.DataFrame) -> pd.DataFrame:
    """Per lineup side: win rate when its team led round 1 minus when another team led."""
    strategies = side_strategies(games)
    rows = []
    for side, (strategy, (won_lead, led, won_rest, rest)) in enumerate(
            zip(strategies, _leader_counts(games))):
        diff = proportion_difference(won_lead, led, won_rest, rest)
        rows.append({"side": side, "strategy": strategy,
                     "win_rate_leading": won_lead / led if led else np.nan,
                     "win_rate_not_leading": won_rest / rest if rest else np.nan,
                     **diff.to_dict()})
    return pd.DataFrame(rows)


def seat_effects(games: pd.DataFrame, method: str = "holm") -> pd.DataFrame:
    """Each table position's win rate minus the average position's, family-adjusted.

    Columns: ``position``, ``win_rate``, ``estimate``, ``low``, ``high`` (at the adjusted
    level), ``se``, ``p_value`` (raw), ``p_adjusted``, ``family``.
    """
    players = players_of(games)
    teams = n_teams(players)
    winner = _winner_team(games)
    won = (winner[:, None] == np.arange(teams)[None, :]).astype(np.float64)
    values = won - won.mean(axis=1, keepdims=True)  # vs the average of all positions
    rows = []
    for t in range(teams):
        diff = paired_difference(values[:, t], method="position vs average, per game")
        name = f"seats {t}+{t + 2}" if players == 4 else f"seat {t}"
        rows.append({"position": name, "win_rate": float(won[:, t].mean()),
                     "estimate": diff.estimate, "se": diff.se, "p_value": diff.p_value,
                     "n": diff.n})
    return _adjusted_seats(pd.DataFrame(rows), teams, method)


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


def side_margins(games: pd.DataFrame) -> np.ndarray:
    """Signed final margin of each side in each game: ``(games, sides)``."""
    players = players_of(games)
    scores = side_columns(games, "score", games["rotation"].to_numpy(np.int64), players)
    margins = np.empty_like(scores)
    for k in range(scores.shape[1]):
        margins[:, k] = scores[:, k] - np.delete(scores, k, axis=1).max(axis=1)
    return margins


def margin_quantiles(games: pd.DataFrame,
                     quantiles: tuple[float, ...] = QUANTILES) -> pd.DataFrame:
    """Per side: signed final margin (own score − best other's), mean ± SE and quantiles.

    Columns: ``side``, ``strategy``, ``games``, ``mean``, ``se``, ``ahead`` (share of games
    it finished with the highest score), then ``q05``, ``q25``, ... (points).
    """
    strategies = side_strategies(games)
    margins = side_margins(games)
    rows = [{"side": side, "strategy": strategy, **_margin_row(margins[:, side], quantiles)}
            for side, strategy in enumerate(strategies)]
    return pd.DataFrame(rows)


def leader_effect_pooled(tables: list[tuple[pd.DataFrame, list[str]]]) -> pd.DataFrame:
    """Per strategy over several runs: win rate when its side led round 1 minus otherwise.

    ``tables`` holds each run's games and its sides' strategy labels (lineup order); the
    games where a strategy's side led, and those where it did not, are added over the runs
    (a tournament: each strategy against the field), then compared as two independent
    proportions (Newcombe interval), as :func:`leader_effect_by_side` does for one run.
    """
    return leader_pooled_from([(_leader_counts(games), strategies)
                               for games, strategies in tables])


def _leader_counts(games: pd.DataFrame) -> list[tuple[int, int, int, int]]:
    """Per lineup side: (wins leading, games leading, wins not leading, games not leading)."""
    players = players_of(games)
    rotation = games["rotation"].to_numpy(np.int64)
    leader = _leader_team(games, players)
    winner = games["winner_side"].to_numpy(np.int64)
    out = []
    for side in range(n_teams(players)):
        leads = team_of_side(side, rotation, players) == leader
        won = winner == side
        out.append((int(won[leads].sum()), int(leads.sum()), int(won[~leads].sum()),
                    int((~leads).sum())))
    return out


def margins_pooled(tables: list[tuple[pd.DataFrame, list[str]]],
                   quantiles: tuple[float, ...] = QUANTILES) -> pd.DataFrame:
    """Per strategy over several runs: signed final margin, as :func:`margin_quantiles`.

    Each side's margins (own final score − the best other side's) in every run are pooled
    under its strategy label; columns as :func:`margin_quantiles` without ``side``.
    """
    pooled: dict[str, list[np.ndarray]] = {}
    for games, strategies in tables:
        margins = side_margins(games)
        for side, strategy in enumerate(strategies):
            pooled.setdefault(strategy, []).append(margins[:, side])
    rows = []
    for strategy, parts in pooled.items():
        rows.append({"strategy": strategy, **_margin_row(np.concatenate(parts), quantiles)})
    return pd.DataFrame(rows)


def _margin_row(values: np.ndarray, quantiles: tuple[float, ...]) -> dict:
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    row = {"games": n, "mean": float(values.mean()) if n else np.nan,
           "se": float(values.std(ddof=1) / np.sqrt(n)) if n > 1 else np.nan,
           "ahead": float((values > 0).mean()) if n else np.nan}
    for q in quantiles:
        row[f"q{round(100 * q):02d}"] = float(np.quantile(values, q)) if n else np.nan
    return row


# --- the same figures from counts (``sim.stats.tally``): runs read chunk by chunk


def leader_effect_from(players: int, games: int, leader_won: int, others_won: int,
                       values: Tally) -> dict:
    """:func:`leader_effect` from its counts: games, games the leader's side won, games
    another side won, and the tally of the per-game values."""
    teams = n_teams(players)
    diff = tally_difference(values, method="leader vs others, per game")
    return {"players": players, "games": int(games),
            "leader_win_rate": leader_won / games if games else np.nan,
            "others_win_rate": others_won / games / (teams - 1) if games else np.nan,
            **diff.to_dict()}


def leader_by_side_from(counts, strategies: list[str]) -> pd.DataFrame:
    """:func:`leader_effect_by_side` from each side's (wins leading, games leading, wins
    not leading, games not leading)."""
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
    """:func:`seat_effects` from each position's wins and the tally of its per-game values."""
    teams = n_teams(players)
    rows = []
    for t in range(teams):
        diff = tally_difference(values[t], method="position vs average, per game")
        name = f"seats {t}+{t + 2}" if players == 4 else f"seat {t}"
        rows.append({"position": name, "win_rate": float(team_wins[t] / games),
                     "estimate": diff.estimate, "se": diff.se, "p_value": diff.p_value,
                     "n": diff.n})
    return _adjusted_seats(pd.DataFrame(rows), teams, method)


def margin_row_from(tally: Tally, quantiles: tuple[float, ...] = QUANTILES) -> dict:
    """:func:`margin_quantiles`' row of one side from the tally of its margins."""
    n = tally.n
    mean, se = tally.mean_se()
    row = {"games": n, "mean": mean if n else np.nan, "se": se if n > 1 else np.nan,
           "ahead": tally.share_above(0) if n else np.nan}
    for q in quantiles:
        row[f"q{round(100 * q):02d}"] = tally.quantile(q) if n else np.nan
    return row


def leader_pooled_from(runs: list[tuple[object, list[str]]]) -> pd.DataFrame:
    """:func:`leader_effect_pooled` from each run's per-side counts and its strategies."""
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
    """:func:`margins_pooled` from each run's per-side margin tallies and strategies."""
    pooled: dict[str, Tally] = {}
    for tallies, strategies in runs:
        for side, strategy in enumerate(strategies):
            pooled.setdefault(strategy, Tally()).merge(tallies[side])
    return pd.DataFrame([{"strategy": strategy, **margin_row_from(tally, quantiles)}
                         for strategy, tally in pooled.items()])
