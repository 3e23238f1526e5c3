"""Ratings fitted to all games: Bradley–Terry (two sides) and its Luce form (three players).

Why this model: a game of Sniff has one winner, so the natural likelihood is that of the
winner among the sides at the table. Each strategy ``i`` gets a strength ``exp(theta_i)``
and wins a game against the sides ``S`` with probability
``exp(theta_i) / sum(exp(theta_j) for j in S)``: with two sides this is Bradley–Terry
(the model behind Elo), with three players Luce's choice model, its direct extension. Every
game of every pairing enters the fit, not only head-to-head averages, so a strategy that
met stronger opposition is not penalised for it.

Ratings are shown on the Elo scale, ``1500 + 400 * log10(strength)``, centred so that the
strategies average 1500: a 100-point gap means the stronger wins about 64% of the games
between the two. Intervals come from the Fisher information at the maximum (the inverse
of the negative Hessian, taken in the centred parametrisation), i.e. each rating's
uncertainty relative to the field's average. Games are taken as independent: for
duplicate-deal tournaments, where the two games of a deal are negatively correlated, the
intervals are therefore conservative (wider than they need be). Undecided games (round
cap) carry no winner and are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from sim.errors import SniffError
from sim.stats.intervals import Z95

__all__ = ["Contest", "ELO_SCALE", "fit_ratings", "Ratings"]

if TYPE_CHECKING:  # pandas is imported where a table is made
    import pandas as pd

ELO_SCALE = 400 / math.log(10)  # rating points per unit of log-strength
ELO_CENTRE = 1500.0
PSEUDO_WINS = 0.5


@dataclass(frozen=True)
class Contest:
    """Games played by one fixed set of sides: a pairing (or a triple) of a tournament.

    ``sides`` names the strategy of each side (a label may repeat: two seats of the same
    strategy in a 3-player game); ``wins`` counts the games each side won. Only decided
    games count: the fit needs a winner.

    Attributes:
        sides: the strategy of each side (a label may repeat).
        wins: the games each side won.
    """

    sides: tuple[str, ...]
    wins: tuple[int, ...]

    @property
    def games(self) -> int:
        return int(sum(self.wins))


@dataclass
class Ratings:
    """The fitted ratings: a table sorted best first, and notes on how it was obtained.

    Attributes:
        table: strategy, rating, low, high, se, games, wins, rank.
        log_likelihood: the fit's log-likelihood.
        iterations: the iterations the fit took.
        pseudo_wins: the prior's pseudo-wins that keep every rating finite.
        notes: notes on how the ratings were obtained.
        covariance: of the ratings (Elo scale), in table order.
    """

    table: pd.DataFrame  # strategy, rating, low, high, se, games, wins, rank
    log_likelihood: float
    iterations: int
    pseudo_wins: float = 0.0
    notes: list[str] = field(default_factory=list)
    covariance: np.ndarray | None = None  # of the ratings (Elo scale), in table order

    def to_dict(self) -> dict:
        return {
            "method": "Bradley-Terry / Luce maximum likelihood, Fisher-information intervals",
            "scale": "Elo: 1500 + 400 log10(strength), strategies average 1500",
            "log_likelihood": self.log_likelihood,
            "iterations": self.iterations,
            "pseudo_wins": self.pseudo_wins,
            "notes": list(self.notes),
            "ratings": self.table.to_dict(orient="records"),
        }


def _connected(n: int, edges: set[tuple[int, int]]) -> bool:
    """Every node reaches every other along the directed ``edges``."""
    if n <= 1:
        return True
    forward = {i: {j for a, j in edges if a == i} for i in range(n)}
    backward = {i: {a for a, j in edges if j == i} for i in range(n)}
    for graph in (forward, backward):
        seen, todo = {0}, [0]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        if len(seen) < n:
            return False
    return True


def fit_ratings(contests: Sequence[Contest], z: float = Z95, max_iter: int = 200) -> Ratings:
    """Maximum-likelihood ratings of every strategy in ``contests``, with intervals.

    The maximum exists only when every strategy has both beaten and been beaten, through a
    chain of games, by every other (the "beat" graph is strongly connected). When it is not
    (a strategy that never lost, say), each side of each contest gets half a win added, a
    small standard shrinkage that keeps the ratings finite; the ratings' notes say so.
    Strategies that never met, even indirectly, cannot be rated on one scale: refused.
    """
    names = _names(contests)
    rows = _rows(contests, {name: k for k, name in enumerate(names)})
    pseudo, notes = _pseudo_wins(len(names), rows)
    design = []
    for idx, wins in rows:
        one_hot = np.zeros((idx.size, len(names)))
        one_hot[np.arange(idx.size), idx] = 1.0
        design.append((one_hot, wins + pseudo))
    theta, log_lik, information, iterations, converged = _maximise(design, len(names),
                                                                   max_iter)
    if not converged:
        notes.append(f"the fit stopped after {max_iter} iterations without converging")
    table, covariance = _table(names, rows, theta, information, z)
    return Ratings(table, float(log_lik), iterations, pseudo, notes, covariance)


def _names(contests: Sequence[Contest]) -> list[str]:
    """Every strategy once, in order of first appearance; malformed contests refused."""
    names: list[str] = []
    for contest in contests:
        if len(contest.sides) != len(contest.wins) or len(contest.sides) < 2:
            raise SniffError("a contest needs two or more sides, each with its win count")
        for label in contest.sides:
            if label not in names:
                names.append(label)
    if len(names) < 2:
        raise SniffError("ratings need at least two different strategies")
    return names


def _rows(contests: Sequence[Contest], index: dict[str, int]) -> list[tuple]:
    """Each contest as (strategy indices, wins); a mirror match says nothing and goes."""
    rows = []
    for contest in contests:
        idx = np.array([index[s] for s in contest.sides], dtype=np.int64)
        if len(set(idx.tolist())) < 2:
            continue  # a mirror match says nothing about differences in strength
        rows.append((idx, np.asarray(contest.wins, dtype=np.float64)))
    return rows


def _pseudo_wins(n: int, rows: list[tuple]) -> tuple[float, list[str]]:
    """The wins added to every side (0 when the maximum exists) and the note saying so;
    strategies that never met, even through others, refused."""
    met = {(int(a), int(b)) for idx, _ in rows for a in idx for b in idx if a != b}
    if not _connected(n, met):
        raise SniffError("ratings need every strategy linked to every other through games "
                         "played; some groups of strategies never met")
    beat = {(int(idx[k]), int(b)) for idx, w in rows for k in range(idx.size) if w[k] > 0
            for b in idx if b != idx[k]}
    if _connected(n, beat):
        return 0.0, []
    return PSEUDO_WINS, [
        f"some strategy never beat (or never lost to) the others, so the maximum "
        f"likelihood is infinite: {PSEUDO_WINS} win was added to every side of every "
        "pairing to keep the ratings finite"]


def _evaluate(design: list[tuple], n: int,
              theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """The log-likelihood at ``theta``, its gradient and the Fisher information."""
    log_lik, gradient, information = 0.0, np.zeros(n), np.zeros((n, n))
    for one_hot, wins in design:
        eta = one_hot @ theta
        shift = eta.max()
        prob = np.exp(eta - shift)
        total = prob.sum()
        prob /= total
        games = wins.sum()
        log_lik += float(wins @ (eta - shift - math.log(total)))
        gradient += one_hot.T @ (wins - games * prob)
        inner = games * (np.diag(prob) - np.outer(prob, prob))
        information += one_hot.T @ inner @ one_hot
    return log_lik, gradient, information


def _maximise(design: list[tuple], n: int, max_iter: int) -> tuple:
    """Newton's method with step halving, centred steps: theta, the log-likelihood, the
    information there, the iterations taken and whether the steps converged."""
    theta = np.zeros(n)
    log_lik, gradient, information = _evaluate(design, n, theta)
    for iterations in range(1, max_iter + 1):
        step = np.linalg.pinv(information) @ gradient
        step -= step.mean()
        scale = 1.0
        while True:
            trial = theta + scale * step
            trial_lik, trial_grad, trial_info = _evaluate(design, n, trial)
            if trial_lik >= log_lik - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        theta, log_lik, gradient, information = trial, trial_lik, trial_grad, trial_info
        if np.abs(scale * step).max() < 1e-10:
            return theta, log_lik, information, iterations, True
    return theta, log_lik, information, max_iter, False


def _table(names: list[str], rows: list[tuple], theta: np.ndarray, information: np.ndarray,
           z: float) -> tuple:
    """The ratings table, best first, and the ratings' covariance in its order."""
    import pandas as pd

    n = len(names)
    covariance = np.linalg.pinv(information) * ELO_SCALE**2
    se = np.sqrt(np.clip(np.diag(covariance), 0, None))
    rating = ELO_CENTRE + ELO_SCALE * (theta - theta.mean())
    played = np.zeros(n)
    won = np.zeros(n)
    for idx, wins in rows:
        np.add.at(won, idx, wins)
        for k in set(idx.tolist()):
            played[k] += wins.sum()
    table = pd.DataFrame({
        "strategy": names, "rating": rating, "low": rating - z * se, "high": rating + z * se,
        "se": se, "games": played.astype(np.int64), "wins": won.astype(np.int64),
    })
    order = np.argsort(-rating, kind="stable")
    table = table.iloc[order].reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, n + 1))
    return table, covariance[np.ix_(order, order)]
