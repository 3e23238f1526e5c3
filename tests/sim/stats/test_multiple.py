"""Multiple comparisons (``sim.stats.multiple``): Holm and Benjamini-Hochberg against known
values and statsmodels, adjusted intervals that agree with adjusted decisions, adjustment by
family, a p-value from an interval."""

from __future__ import annotations

import gc
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from sim.errors import SniffError
from sim.stats import multiple


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


def test_add_adjusted_by_family_and_p_from_interval():
    frame = pd.DataFrame({"unit": ["game", "deal", "game", "deal"],
                          "p_value": [0.01, 0.02, 0.04, np.nan]})
    out = multiple.add_adjusted(frame, by="unit", family="pairwise differences")
    assert out["p_holm"].tolist()[:3] == pytest.approx([0.02, 0.02, 0.04])
    assert math.isnan(out["p_holm"].iloc[3])
    assert out["family"].iloc[0] == "Holm-adjusted over the 2 pairwise differences"
    p = multiple.p_from_interval([0.0, 1.959963984540054, 1.0], [-1, 0.0, 1.0], [1, 3.92, 1.0])
    assert p == pytest.approx([1.0, 0.05, 0.0], abs=1e-4)
