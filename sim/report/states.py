"""The report's win probability by score state and convergence, from a run's added-up counts.

``sim.stats.score_states`` says what the two tables mean (and draws them); a report never
holds a run's games and rounds tables, so the tables are built here from the counts
``sim.report.aggregate.RunFigures`` kept in its one pass over the parts: the score-state
cells (games and wins per side and cell) and each side's running wins at the chart's marks
(``convergence_marks``, ``field_marks``). These are the only tables of both: what
``score-states.csv``, ``score-states.png`` and ``convergence.png`` show.
"""

from __future__ import annotations

import pandas as pd

from sim.stats.intervals import wilson_interval
from sim.stats.score_states import COLUMNS, merge_states, with_intervals
from sim.store.rundata import RunData

__all__: list[str] = []  # nothing here is used outside its room


def opponents_text(strategies: list[str], side: int) -> str:
    """The other sides' strategies, comma-separated (what side ``side`` played against)."""
    return ", ".join(s for k, s in enumerate(strategies) if k != side)


def score_state_table(run: RunData) -> pd.DataFrame:
    """One run's score-state table (``sim.stats.score_states.COLUMNS``), from its cells."""
    f = run.figures
    strategies = list(run.strategies)
    rows = [{"players": run.players, "side": side, "strategy": strategies[side],
             "opponents": opponents_text(strategies, side), "own_low": own,
             "opponents_low": opp, "bin_size": f.bin_size, "games": games, "wins": wins}
            for (side, own, opp), (games, wins) in sorted(f.cells.items())]
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    table = pd.DataFrame(rows)
    return with_intervals(table)[COLUMNS]


def convergence_table(run: RunData) -> pd.DataFrame:
    """One run's running win rate per side over its first n games (game order), with its
    95% Wilson band, at the marks of ``convergence_marks``: columns ``side``, ``strategy``,
    ``games`` (n), ``wins``, ``win_rate``, ``low``, ``high``."""
    from sim.report.aggregate import convergence_marks

    columns = ["side", "strategy", "games", "wins", "win_rate", "low", "high"]
    marks = convergence_marks(run.n_games)
    wins = run.figures.running_wins(marks)
    rows = []
    for side, strategy in enumerate(run.strategies):
        for index, m in enumerate(marks):
            won = int(wins[index, side])
            low, high = wilson_interval(won, int(m))
            rows.append({"side": side, "strategy": strategy, "games": int(m), "wins": won,
                         "win_rate": won / m, "low": low, "high": high})
    return pd.DataFrame(rows, columns=columns)


def field_convergence_table(members: list[RunData]) -> pd.DataFrame:
    """Each strategy's running win rate against the field, over a tournament's pairings.

    After the first n games of every pairing (game order; a shorter pairing counts all its
    games), a strategy's wins over its games so far, with the 95% Wilson band: how the
    aggregate win rates of a tournament settled as its pairings grew. Columns as
    :func:`convergence_table` (``side`` is the strategy's index) plus ``label`` (the
    strategy); ``games`` is n, games per pairing."""
    import numpy as np

    from sim.report.aggregate import field_marks

    columns = ["side", "strategy", "label", "games", "wins", "win_rate", "low", "high"]
    marks = field_marks([run.n_games for run in members])
    if not marks.size:
        return pd.DataFrame(columns=columns)
    names: list[str] = []
    wins: dict[str, np.ndarray] = {}
    played: dict[str, np.ndarray] = {}
    for run in members:
        upto = np.minimum(marks, run.n_games)
        running = run.figures.running_wins(upto)
        for side, strategy in enumerate(run.strategies):
            if strategy not in wins:
                names.append(strategy)
                wins[strategy] = np.zeros(marks.size, dtype=np.int64)
                played[strategy] = np.zeros(marks.size, dtype=np.int64)
            wins[strategy] += running[:, side]
            played[strategy] += upto
    rows = []
    for index, strategy in enumerate(names):
        for m, won, games in zip(marks, wins[strategy], played[strategy]):
            low, high = wilson_interval(int(won), int(games))
            rows.append({"side": index, "strategy": strategy, "label": strategy,
                         "games": int(m), "wins": int(won), "win_rate": won / games,
                         "low": low, "high": high})
    return pd.DataFrame(rows, columns=columns)


def run_tables(runs: list[RunData]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score states (merged over runs) and convergence (with a ``run`` column) of runs.
    With more than two strategies (a tournament) each strategy's score states are pooled
    against the field."""
    states = [score_state_table(run) for run in runs]
    names = {s for table in states for s in table["strategy"]}
    pool_opponents = len(names) > 2
    merged = merge_states(states, pool_opponents) if len(runs) > 1 or pool_opponents \
        else states[0]
    paths = []
    for run in runs:
        path = convergence_table(run)
        path.insert(0, "run", run.name)
        paths.append(path)
    return merged, pd.concat(paths, ignore_index=True)
