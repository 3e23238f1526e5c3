"""The Bradley–Terry fit and its goodness of fit (``sim.stats.ratings``): intransitive results
rejected, Bradley–Terry results accepted, no test with two strategies, cells counted with
three sides."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sim.stats import ranking
from sim.stats.ratings import Contest, fit_ratings
from tests.helpers.contests import bt_contests


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
