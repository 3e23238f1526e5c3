"""Fast synthetic tests of the decision statistics: multiple comparisons, rank intervals,
tie groups, the Bradley–Terry goodness of fit and planning (score states and effect sizes,
from the report's counts: tests/sim/report/test_states.py)."""

from __future__ import annotations

import gc
import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from sim.errors import SniffError
from sim.stats import multiple, planning, ranking
from sim.stats.intervals import wilson_interval
from sim.stats.ratings import Contest, fit_ratings

# --- multiple comparisons


def test_holm_and_bh_known_values():
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm by hand: sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1, then running maximum
    assert multiple.adjust(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH by hand: sorted 0.005*4/1, 0.01*4/2, 0.03*4/3, 0.04*4/4, then running minimum
    assert multiple.adjust(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert multiple.adjust(p, "none") == pytest.approx(p)
    assert gc.get_freeze_count() == 0  # adjust undid its gc.freeze: all collectable again


def test_adjust_matches_statsmodels_and_keeps_nan():
    rng = np.random.default_rng(3)
    p = rng.uniform(0, 0.2, size=28)
    for method, name in (("holm", "holm"), ("bh", "fdr_bh"), ("bonferroni", "bonferroni")):
        assert multiple.adjust(p, method) == pytest.approx(multipletests(p, method=name)[1])
    with_nan = np.array([0.01, np.nan, 0.02])
    out = multiple.adjust(with_nan)
    assert math.isnan(out[1])
    assert out[[0, 2]] == pytest.approx([0.02, 0.02])  # a family of two, not three
    with pytest.raises(SniffError):
        multiple.adjust([0.5], "tukey")
    assert multiple.family_text("holm", 28, "pairwise differences") == (
        "Holm-adjusted over the 28 pairwise differences")


@pytest.mark.parametrize("method", ["holm", "bonferroni", "bh", "none"])
def test_interval_z_agrees_with_adjusted_decision(method):
    rng = np.random.default_rng(11)
    for _ in range(50):
        estimate = rng.normal(0, 1, size=12) + rng.choice([0, 3], size=12)
        se = np.ones(12)
        p = 2 * norm.sf(np.abs(estimate / se))
        z = multiple.interval_z(p, method)
        excludes_zero = np.abs(estimate) > z * se
        assert np.array_equal(excludes_zero, multiple.reject(p, method))


def test_add_adjusted_keeps_raw_column():
    frame = pd.DataFrame({"pair": ["a", "b", "c"], "p_value": [0.01, 0.02, 0.5]})
    out = multiple.add_adjusted(frame)
    assert list(out.columns) == ["pair", "p_value", "p_holm"]
    assert out["p_value"].tolist() == [0.01, 0.02, 0.5]
    assert out["p_holm"].tolist() == pytest.approx([0.03, 0.04, 0.5])


def test_wilson_coverage_on_symmetric_matchups():
    rng = np.random.default_rng(2024)
    wins = rng.binomial(1000, 0.5, size=200)
    covered = [lo <= 0.5 <= hi for lo, hi in (wilson_interval(w, 1000) for w in wins)]
    assert 0.90 <= np.mean(covered) <= 0.99


# --- ranking


def bt_contests(ratings: dict[str, float], games: int, rng) -> list[Contest]:
    out = []
    for a, b in combinations(ratings, 2):
        p = 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
        wins = int(rng.binomial(games, p))
        out.append(Contest((a, b), (wins, games - wins)))
    return out


def test_rank_intervals_cover_true_rank():
    truth = {"a": 1650, "b": 1560, "c": 1500, "d": 1450, "e": 1340}
    true_rank = {name: k + 1 for k, name in enumerate(truth)}
    rng = np.random.default_rng(5)
    hits = total = 0
    for rep in range(20):
        result = ranking.rank(bt_contests(truth, 800, rng), seed=rep, draws=1000)
        for row in result.table.itertuples():
            hits += row.rank_low <= true_rank[row.strategy] <= row.rank_high
            total += 1
    assert hits / total >= 0.85
    # same seed, same intervals
    contests = bt_contests(truth, 800, np.random.default_rng(1))
    one, two = ranking.rank(contests, seed=4), ranking.rank(contests, seed=4)
    assert one.table.equals(two.table)
    assert {"rank_low", "rank_high", "group"} <= set(one.table.columns)


def test_equal_strengths_form_a_tie_group():
    truth = {"x": 1600, "y": 1600, "z": 1300}
    result = ranking.rank(bt_contests(truth, 5000, np.random.default_rng(8)), seed=0)
    groups = dict(zip(result.table["strategy"], result.table["group"]))
    assert groups["x"] == groups["y"] == 1
    assert groups["z"] == 2
    top = result.table[result.table["strategy"].isin(["x", "y"])]
    assert (top["rank_low"] == 1).all() and (top["rank_high"] == 2).all()
    assert result.gaps["separated"].tolist() == [False, True]
    lines = ranking.ranking_lines(result)
    assert sum(line.strip().startswith("1-2  group 1") for line in lines) == 2
    assert any(line.strip().startswith("3  group 2  z") for line in lines)


def test_fit_rejects_intransitive_results():
    cycle = [Contest(("a", "b"), (1400, 600)), Contest(("b", "c"), (1400, 600)),
             Contest(("c", "a"), (1400, 600))]
    result = ranking.rank(cycle)
    assert result.fit.df == 1
    assert result.fit.p_value < 1e-10
    assert result.fit.warning.startswith("the ratings do not describe these results well")
    assert "read the matrix, not the ratings" in result.fit.warning
    # with every rating equal, nothing can be separated, and every rank is possible
    assert result.table["group"].nunique() == 1
    assert (result.table["rank_low"] == 1).all() and (result.table["rank_high"] == 3).all()
    # residuals: each side's standardized excess, about +-sqrt(2000) * 0.2 / 0.5
    assert result.fit.residuals["residual"].abs().max() == pytest.approx(17.9, abs=0.2)


def test_fit_accepts_bradley_terry_results():
    truth = {"a": 1700, "b": 1600, "c": 1500, "d": 1450, "e": 1400, "f": 1300}
    contests = bt_contests(truth, 3000, np.random.default_rng(12))
    result = ranking.rank(contests)
    assert result.fit.df == 15 - 5
    assert result.fit.p_value > 0.01
    assert result.fit.warning is None
    assert result.fit.dispersion >= 1


def test_fit_of_two_strategies_has_no_test():
    fit = ranking.goodness_of_fit([Contest(("a", "b"), (60, 40))],
                                  fit_ratings([Contest(("a", "b"), (60, 40))]))
    assert fit.df == 0 and math.isnan(fit.p_value) and fit.warning is None


def test_fit_with_three_sides_counts_cells():
    contests = [Contest(("a", "b", "c"), (500, 300, 200)),
                Contest(("a", "b", "d"), (450, 350, 200)),
                Contest(("a", "c", "d"), (500, 250, 250)),
                Contest(("b", "c", "d"), (400, 300, 300))]
    fit = ranking.goodness_of_fit(contests, fit_ratings(contests))
    assert fit.df == 4 * 2 - 3
    assert fit.cells == 12


# --- planning


def test_textbook_sample_size():
    assert planning.games_two_proportions(0.5, 0.55) == 1565
    assert planning.games_one_proportion(0.55) == pytest.approx(783, abs=1)
    n = planning.games_same_games(0.05)
    assert n == math.ceil(((norm.ppf(0.975) + norm.ppf(0.8)) ** 2) * (1 - 0.0025) / 0.0025)
    assert planning.deals_paired(0.02, 0.5) == math.ceil((2.8016 * 0.5 / 0.02) ** 2)


def test_detectable_inverts_sample_size():
    delta = planning.detectable_two_proportions(1565)
    assert delta == pytest.approx(0.05, abs=5e-4)
    assert planning.detectable_same_games(2000) == pytest.approx(0.0625, abs=5e-4)
    assert planning.games_same_games(planning.detectable_same_games(4000)) == pytest.approx(
        4000, abs=1)
    assert planning.detectable_paired(1000, 0.6) == pytest.approx(2.8016 * 0.6 / 1000**0.5,
                                                                   rel=1e-3)
    assert planning.detectable_one_proportion(783) == pytest.approx(0.05, abs=5e-4)


def test_planning_refuses_bad_input():
    with pytest.raises(SniffError):
        planning.games_two_proportions(0.5, 0.5)
    with pytest.raises(SniffError):
        planning.deals_paired(0.02, 0)
    with pytest.raises(SniffError):
        planning.plan_text(0.02, paired=True)
    assert "games" in planning.plan_text(0.02)[1]


# --- helpers for the report and the command line


def test_add_adjusted_by_family_and_p_from_interval():
    frame = pd.DataFrame({"unit": ["game", "deal", "game", "deal"],
                          "p_value": [0.01, 0.02, 0.04, np.nan]})
    out = multiple.add_adjusted(frame, by="unit", family="pairwise differences")
    assert out["p_holm"].tolist()[:3] == pytest.approx([0.02, 0.02, 0.04])
    assert math.isnan(out["p_holm"].iloc[3])
    assert out["family"].iloc[0] == "Holm-adjusted over the 2 pairwise differences"
    p = multiple.p_from_interval([0.0, 1.959963984540054, 1.0], [-1, 0.0, 1.0], [1, 3.92, 1.0])
    assert p == pytest.approx([1.0, 0.05, 0.0], abs=1e-4)


def test_printed_ranking_and_csv_columns():
    cycle = [Contest(("a", "b"), (1400, 600)), Contest(("b", "c"), (1400, 600)),
             Contest(("c", "a"), (1400, 600)), Contest(("a", "d"), (1900, 100)),
             Contest(("b", "d"), (1900, 100)), Contest(("c", "d"), (1900, 100))]
    result = ranking.rank(cycle)
    lines = ranking.ranking_lines(result)
    assert any(line.strip().startswith("1-3  group 1") for line in lines)
    assert any(line.strip().startswith("4  group 2  d") for line in lines)
    assert any("warning: the ratings do not describe" in line for line in lines)
    assert ranking.csv_table(result).columns.tolist()[-3:] == ["rank_low", "rank_high", "group"]


def test_detectable_line():
    line = planning.detectable_line(2000)
    assert "6.3 points" in line and "80% power" in line
    assert "too few" in planning.detectable_line(1)
