"""Multiple comparisons: adjusted p-values for a family of tests, and matching intervals.

Why: a report that prints 28 pairwise p-values (or 28 tile-vs-average intervals) invites
reading the smallest of them as a discovery, although with 28 true nulls about one or two
would fall below 5% by chance. Every table that shows a *family* of tests therefore shows,
beside the raw p-value, the p-value adjusted over that family, and names the family
("Holm-adjusted over the 28 pairwise differences").

Methods (``method=``):

- ``"holm"`` (default): Holm's step-down Bonferroni. Controls the family-wise error rate
  (the chance of *any* false "different") at 5% under any dependence between the tests,
  which matters here: the differences of one run share games. Uniformly more powerful than
  plain Bonferroni, so there is no reason to prefer Bonferroni for decisions.
- ``"bh"``: Benjamini–Hochberg. Controls the false discovery rate (the expected share of
  false findings among those declared) under independence or positive dependence; for
  screening many candidates (the 28 opening tiles) rather than for a single decision.
- ``"bonferroni"``: kept for the simultaneous intervals below and for comparison.
- ``"none"``: the raw p-values (a family of one, or a deliberate choice).

The adjusted p-values come from ``statsmodels.stats.multitest.multipletests``, the
reference implementation, rather than being re-derived here; it is imported only when a
family is adjusted (importing statsmodels takes about a second), so commands that print
no family do not pay for it. Raw p-values are never
replaced: callers keep both.

Intervals. An interval drawn at the plain 95% level can exclude 0 while the adjusted test
does not reject, which makes a table contradict itself. :func:`interval_z` gives, for each
member of a family, the normal quantile whose interval ``estimate ± z·se`` agrees with the
adjusted decision: Bonferroni's ``z(1 − α/2m)`` (simultaneous: all m intervals cover their
true values together with probability at least 95%); Holm's step-down quantiles
(the k-th smallest p-value is judged at ``α/(m − k + 1)``, and every test after the first
non-rejection at that step's level, so an interval excludes 0 exactly when Holm rejects —
for p-values computed as ``2·(1 − Φ(|estimate|/se))``); and for BH the false-coverage-rate
intervals of Benjamini & Yekutieli (2005), level ``1 − R·α/m`` with R the number of
rejections.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from sim.errors import SniffError
from sim.stats.intervals import normal_quantile

__all__ = ["add_adjusted", "adjust", "family_text", "p_from_interval"]

METHODS = {"holm": "holm", "bh": "fdr_bh", "bonferroni": "bonferroni", "none": None}
NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "bonferroni": "Bonferroni",
         "none": "unadjusted"}


def _check(method: str) -> str:
    key = method.lower()
    if key not in METHODS:
        raise SniffError(f"unknown adjustment {method!r}: choose one of {', '.join(METHODS)}")
    return key


def adjust(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of a family, in the input order.

    NaN entries (a test that could not be done) stay NaN and are not counted in the
    family: the family is the tests that have a p-value. Adjusted values are capped at 1.
    """
    key = _check(method)
    p = np.asarray(p_values, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    finite = np.isfinite(p)
    if not finite.any():
        return out
    if np.any((p[finite] < 0) | (p[finite] > 1)):
        raise SniffError("p-values must lie between 0 and 1")
    if (name := METHODS[key]) is None:
        out[finite] = p[finite]
        return out
    out[finite] = _multipletests(p[finite], name)
    return out


def _multipletests(p: np.ndarray, name: str) -> np.ndarray:
    """statsmodels' adjusted p-values, without the full garbage collection of its Holm.

    ``multipletests(method="holm")`` ends with ``gc.collect()``, which walks every object
    of the process: in one that holds compiled kernels (numba's) that is most of a second
    per family, and a report adjusts many families. The
    objects that exist before the call are frozen out of that collection (``gc.freeze``),
    so it walks only the few the call makes; all are collectable again afterwards. Objects
    frozen by someone else are left as they are (and the call then pays the collection).
    """
    from statsmodels.stats.multitest import multipletests

    if gc.get_freeze_count():
        return multipletests(p, method=name)[1]
    gc.freeze()
    try:
        return multipletests(p, method=name)[1]
    finally:
        gc.unfreeze()


def reject(p_values: Sequence[float] | np.ndarray, method: str = "holm",
           alpha: float = 0.05) -> np.ndarray:
    """Which members of the family the adjusted test declares different (NaN: False)."""
    adjusted = adjust(p_values, method)
    return np.where(np.isfinite(adjusted), adjusted <= alpha, False)


def family_text(method: str, size: int, family: str) -> str:
    """Plain words naming the correction and its family, for a table's caption.

    ``family_text("holm", 28, "pairwise differences")`` gives
    ``"Holm-adjusted over the 28 pairwise differences"``.
    """
    key = _check(method)
    if key == "none" or size <= 1:
        return f"unadjusted (a family of {size})" if size <= 1 else f"unadjusted ({size} {family})"
    return f"{NAMES[key]}-adjusted over the {size} {family}"


def simultaneous_z(size: int, confidence: float = 0.95) -> float:
    """Bonferroni quantile for ``size`` simultaneous two-sided intervals at ``confidence``."""
    if size < 1:
        return math.nan
    alpha = 1 - confidence
    return normal_quantile(1 - alpha / (2 * size))


def interval_z(p_values: Sequence[float] | np.ndarray, method: str = "holm",
               confidence: float = 0.95) -> np.ndarray:
    """Per-member normal quantile for intervals that agree with the adjusted decision.

    See the module docstring. NaN p-values get NaN. ``"none"`` gives the plain quantile.
    """
    key = _check(method)
    p = np.asarray(p_values, dtype=np.float64).ravel()
    out = np.full(p.shape, np.nan)
    finite = np.flatnonzero(np.isfinite(p))
    m = finite.size
    if m == 0:
        return out
    alpha = 1 - confidence
    if key == "none":
        out[finite] = normal_quantile(1 - alpha / 2)
    elif key == "bonferroni":
        out[finite] = simultaneous_z(m, confidence)
    elif key == "holm":
        order = finite[np.argsort(p[finite], kind="stable")]
        stopped_at = None
        for k, i in enumerate(order):
            level = alpha / (m - k)
            if stopped_at is None and p[i] > level:
                stopped_at = level
            out[i] = normal_quantile(1 - (stopped_at if stopped_at is not None else level) / 2)
    else:  # bh: false-coverage-rate intervals (Benjamini & Yekutieli 2005)
        rejected = int(reject(p[finite], "bh", alpha).sum())
        out[finite] = normal_quantile(1 - max(rejected, 1) * alpha / (2 * m))
    return out


def add_adjusted(frame: pd.DataFrame, column: str = "p_value", method: str = "holm",
                 name: str | None = None, by: str | list[str] | None = None,
                 family: str | None = None) -> pd.DataFrame:
    """A copy of ``frame`` with the adjusted p-values beside ``column`` (``p_holm`` etc.).

    ``by`` names columns whose values split the rows into separate families (e.g. the
    ``unit`` of a differences table: per game and per deal are two estimates of the same
    differences, so each is its own family); ``family`` (e.g. ``"pairwise differences"``)
    adds a ``family`` column naming the correction and the family's size.
    """
    key = _check(method)
    out = frame.copy()
    target = name or f"p_{key}"
    values = np.full(len(out), np.nan)
    texts = [""] * len(out)
    if len(out):
        groups = (out.groupby(by, sort=False, dropna=False).indices if by is not None
                  else {None: np.arange(len(out))})
        p_all = out[column].to_numpy(dtype=np.float64)
        for rows in groups.values():
            values[rows] = adjust(p_all[rows], key)
            if family is not None:
                text = family_text(key, int(np.isfinite(p_all[rows]).sum()), family)
                for row in rows:
                    texts[row] = text
    out.insert(list(out.columns).index(column) + 1, target, values)
    if family is not None:
        out.insert(list(out.columns).index(target) + 1, "family", texts)
    return out


def p_from_interval(estimate, low, high, confidence: float = 0.95) -> np.ndarray:
    """Two-sided p-value of "no difference" from a symmetric normal interval.

    For tables that store an estimate with its interval but no test (the openings'
    tile-vs-average figures): ``se = (high − low) / (2 z)``, ``p = 2(1 − Φ(|estimate| / se))``.
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    z = normal_quantile(0.5 + confidence / 2)
    se = (np.asarray(high, dtype=np.float64) - np.asarray(low, dtype=np.float64)) / (2 * z)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(estimate) / se
    p = np.array([math.nan if math.isnan(r) else math.erfc(r / math.sqrt(2.0))
                  for r in np.atleast_1d(ratio)])
    p[(se == 0) & (estimate == 0)] = 1.0
    return p.reshape(np.shape(estimate))
