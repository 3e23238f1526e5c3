"""Planning (``sim.stats.planning``): the textbook sample size, the detectable effect as its
inverse, bad input refused, the detectable line (score states and effect sizes from the
report's counts: tests/sim/report/test_states.py)."""

from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from sim.errors import SniffError
from sim.stats import planning


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


def test_detectable_line():
    line = planning.detectable_line(2000)
    assert "6.3 points" in line and "80% power" in line
    assert "too few" in planning.detectable_line(1)
