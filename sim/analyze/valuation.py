"""Each decision's figures from its play-outs: the move played against the best one.

The search gives, per decision, the win value of every legal move on each of the same
deals: twice the budget ``b`` of deals, as two independent searches of ``b`` deals each
(the first ``b`` and the next ``b``; a larger budget keeps the deals of a smaller one, so a
budget curve costs one search). From them:

- the best move is the one with the highest mean over all the deals; ``loss_full`` is its
  mean minus the played move's, with the paired 95% interval of the per-deal differences;
  the move is *separated* from the best when that interval lies above zero;
- ``loss`` is the same difference cross-fitted: the best move is picked by one search of
  ``b`` deals and the difference measured on the other's, both ways, averaged. Why: picking
  the best on the same deals it is measured on favours moves that were lucky on them, so
  ``loss_full`` is above the true loss on average, most at small budgets. The cross-fitted
  best is the choice of a search of budget ``b``, and is measured on deals it never saw:
  a player who always plays the search's own choice at that budget (on deals of its own)
  loses nothing on average, at any budget, and as the budget grows ``loss`` rises to the
  figure ``loss_full`` falls to.

Marks (inaccuracy, mistake, blunder) read ``loss_full`` and its interval, as ``sniff replay
--analyze`` does, so the noise of the play-outs alone never marks a move.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sim.analyze import kernel
from sim.analyze.decisions import Pending, search_inputs
from sim.analyze.settings import AnalyzeSettings, Endgame, Mark, Played, mark_of
from sim.analyze.sources import source_seed
from sim.hint.estimate import Z95, check_policy

BATCH = 256  # decisions per compiled call: bounds the play-out values kept at once
# The search's behaviour signature: every decision of one fixed traced game, searched.
SIGNATURE_GAME = (2, 61, ("greedy", "random"))  # players, seed, strategies
SIGNATURE_BUDGET = 16
_signatures: dict[tuple[str, bool], str] = {}


@dataclass(frozen=True)
class Figures:
    """One decision's figures at one budget."""

    best: int  # index of the best move
    win_played: float
    win_best: float
    loss: float  # cross-fitted
    loss_full: float
    loss_low: float
    loss_high: float
    separated: bool
    best_separated: bool  # the best is separated from every other move
    mark: Mark


def paired(values: np.ndarray) -> tuple[float, float, float]:
    """Mean of per-deal differences with its 95% interval."""
    mean = float(values.mean())
    if len(values) < 2:
        return mean, mean, mean
    half = Z95 * float(values.std(ddof=1)) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def figures(wins: np.ndarray, played: int, thresholds: tuple[float, float, float]) -> Figures:
    """The figures of one decision from ``wins[move, deal]`` (its moves; the deals of two
    searches, the first half and the second)."""
    means = wins.mean(axis=1)
    best = int(np.argmax(means))
    if means[played] >= means[best]:
        best = played  # a tie with the best is no loss, and no other best to name
    loss_full, low, high = paired(wins[best] - wins[played])
    if best == played:
        loss_full = low = high = 0.0
    half = wins.shape[1] // 2
    first, second = wins[:, :half], wins[:, half: 2 * half]
    pick_first = int(np.argmax(first.mean(axis=1)))
    pick_second = int(np.argmax(second.mean(axis=1)))
    loss = 0.5 * (float((second[pick_first] - second[played]).mean())
                  + float((first[pick_second] - first[played]).mean()))
    order = np.argsort(-means, kind="stable")
    best_separated = True
    if len(means) > 1:
        _, gap_low, _ = paired(wins[best] - wins[int(order[1])])
        best_separated = gap_low > 0.0
    separated = best != played and low > 0.0
    return Figures(best, float(means[played]), float(means[best]), loss, loss_full, low, high,
                   separated, best_separated, mark_of(loss_full, low, thresholds))


def search(pending: list[Pending], budget: int, policy: int, salt: str = "",
           exact: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The play-out wins of every decision, ``BATCH`` decisions per compiled call, the
    consistent deals of each and whether it was solved exactly (``exact``: a decision
    whose every hand is known is); ``salt`` draws other deals (the search's own choice of
    :class:`Played.SEARCH`)."""
    width = max((len(item.moves) for item in pending), default=1)
    wins = np.zeros((len(pending), width, budget), dtype=np.float64)
    deals = np.zeros(len(pending), dtype=np.float64)
    solved = np.zeros(len(pending), dtype=bool)
    for start in range(0, len(pending), BATCH):
        chunk = pending[start:start + BATCH]
        observations, moves, n_moves, seeds = search_inputs(chunk)
        if salt:
            seeds = np.array([source_seed(int(s), salt) for s in seeds], dtype=np.uint64)
        part, found, known = kernel.value_batch(observations, moves, n_moves, budget, policy,
                                                seeds, exact)
        wins[start:start + len(chunk), : part.shape[1]] = part
        deals[start:start + len(chunk)] = found
        solved[start:start + len(chunk)] = known
    return wins, deals, solved


def search_signature(policy: str, exact: bool) -> str:
    """The search's identity by its behaviour (as ``sim.run.signature`` signs a strategy):
    the hash of what it finds on every decision of a fixed traced game
    (``SIGNATURE_GAME``) at ``SIGNATURE_BUDGET`` deals, with this play-out ``policy`` and ``exact``
    endgames; a refactor of the search that finds the same values keeps it. Once per
    process for each pair."""
    import hashlib

    from sim.analyze.decisions import game_decisions
    from sim.analyze.sources import GameRef
    from sim.kernels.trace import trace_games

    key = (policy, exact)
    if key not in _signatures:
        players, seed, names = SIGNATURE_GAME
        events = trace_games(players, seed, list(names), 1)
        pending = game_decisions(GameRef("signature", 0), events, seed)
        wins, deals, solved = search(pending, SIGNATURE_BUDGET, check_policy(policy),
                                     exact=exact)
        digest = hashlib.sha256(wins.tobytes() + deals.tobytes() + solved.tobytes())
        _signatures[key] = digest.hexdigest()[:16]
    return _signatures[key]


def value_decisions(pending: list[Pending], settings: AnalyzeSettings
                    ) -> tuple[list[dict], list[dict]]:
    """Each decision's row of the decisions table, and its rows of the budget curve."""
    policy = check_policy(settings.policy)
    exact = settings.endgame is Endgame.EXACT
    wins, deals, solved = search(pending, 2 * settings.budget, policy, exact=exact)
    own = None
    if settings.played is Played.SEARCH:
        own_wins, _, _ = search(pending, settings.budget, policy, salt="own choice",
                                exact=exact)
        own = [int(np.argmax(own_wins[i, : len(item.moves)].mean(axis=1)))
               for i, item in enumerate(pending)]
    rows, curve = [], []
    for i, item in enumerate(pending):
        played = item.played if own is None else own[i]
        values = wins[i, : len(item.moves)]
        found = figures(values, played, settings.thresholds)
        rows.append(decision_row(item, played, found, settings, float(deals[i]),
                                 bool(solved[i])))
        for budget in settings.curve:
            at = figures(values[:, : 2 * budget], played, settings.thresholds)
            curve.append({**key_columns(item, settings), "budget": budget, "loss": at.loss,
                          "loss_full": at.loss_full, "separated": at.separated,
                          "best_is_played": at.best == played, "mark": at.mark.value})
    return rows, curve


def key_columns(item: Pending, settings: AnalyzeSettings) -> dict:
    strategy = "search" if settings.played is Played.SEARCH else item.strategy
    return {"source": item.ref.source, "game_id": item.ref.game, "decision": item.index,
            "strategy": strategy, "players": item.players}


def decision_row(item: Pending, played: int, found: Figures, settings: AnalyzeSettings,
                 deals: float, solved: bool) -> dict:
    names = item.names
    position = item.position
    return {
        **key_columns(item, settings),
        "round": item.round, "turn": item.turn, "seat": item.seat,
        "phase": item.phase.value, "kind": item.kind.value, "moves": len(item.moves),
        "boneyard": position.boneyard, "hand": len(position.hand),
        "played": names[played], "best": names[found.best],
        "win_played": found.win_played, "win_best": found.win_best,
        "loss": found.loss, "loss_full": found.loss_full, "loss_low": found.loss_low,
        "loss_high": found.loss_high, "separated": found.separated,
        "best_separated": found.best_separated, "mark": found.mark.value,
        "budget": settings.budget, "deals": deals, "exact": solved,
        "position": item.position_text(),
    }


__all__ = ["figures", "search"]
