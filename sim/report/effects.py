"""The report's effects section: the value of leading, of each seat, and signed final margins.

Why a module of its own: ``sim.stats.effects`` computes the effects (from the counts
``sim.report.aggregate`` adds up over a run's parts); a report needs them per
run (with the run's side names) and, for a tournament shown in the aggregate, pooled over
its pairings (each strategy against the field), and then as tables.
Both jobs are here, so ``sim.report.build`` (numbers) and ``sim.report.html`` (layout) stay
below their size and share one definition of what the section holds.

Per key (a run's name, or ``tournament NAME`` for pooled pairings) :func:`run_effects` and
:func:`tournament_effects` give a dict of:

- ``leader``: the leader's side's win rate minus the other sides' average
  (:func:`sim.stats.effects.leader_effect_from`, score test);
- ``leader_by_side``: per side (or strategy), win rate when its side led round 1 minus
  when another led (Newcombe interval) — the same numbers the by-position chart draws;
- ``seats``: each table position's win rate minus the average position's, Holm-adjusted
  over the positions (:func:`sim.stats.effects.seat_effects_from`);
- ``margins``: signed final margin per side (own final score − the best other's):
  mean ± SE, share of games ahead, quantiles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from sim.display.blocks import Heading, Paragraph, Table
from sim.display.formatting import p_value_text, pct, pp
from sim.stats.effects import (
    leader_by_side_from,
    leader_effect_from,
    leader_pooled_from,
    margin_row_from,
    margins_pooled_from,
    seat_effects_from,
)
from sim.stats.tally import merged
from sim.store.rundata import RunData

__all__: list[str] = []  # nothing here is used outside its room


def run_effects(run: RunData) -> dict:
    """The effects of one run, its sides named as the report names them (from the counts
    ``sim.report.aggregate`` added up)."""
    f = run.figures
    by_side = leader_by_side_from(f.leader_counts, f.first_labels)
    by_side["side"] = run.sides
    margins = pd.DataFrame([{"side": side, "strategy": strategy,
                             **margin_row_from(f.margins[side])}
                            for side, strategy in enumerate(f.first_labels)])
    margins["side"] = run.sides
    return {"leader": _leader(run.players, [f]),
            "leader_by_side": by_side,
            "seats": _seats(run.players, [f]), "margins": margins}


def _leader(players: int, figures: list) -> dict:
    return leader_effect_from(players, sum(f.games for f in figures),
                              sum(f.leader_won for f in figures),
                              sum(f.others_won for f in figures),
                              merged(f.leader_values for f in figures))


def _seats(players: int, figures: list) -> pd.DataFrame:
    teams = figures[0].sides
    return seat_effects_from(players, sum(f.games for f in figures),
                             sum(f.team_wins for f in figures),
                             [merged(f.seat_values[t] for f in figures) for t in range(teams)])


def tournament_effects(runs: Sequence[RunData], order: Sequence[str] = ()) -> dict[str, dict]:
    """Effects pooled over each tournament's pairings, keyed ``tournament NAME``.

    ``order``: the strategies strongest first (the report's field table), for the rows.
    """
    out = {}
    folders = dict.fromkeys(run.tournament for run in runs if run.tournament is not None)
    for folder in folders:
        members = [run for run in runs if run.tournament == folder]
        figures = [run.figures for run in members]
        by_side = _ordered(leader_pooled_from(
            [(run.figures.leader_counts, list(run.strategies)) for run in members]), order)
        margins = _ordered(margins_pooled_from(
            [(run.figures.margins, list(run.strategies)) for run in members]), order)
        out[f"tournament {folder.name}"] = {
            "leader": _leader(members[0].players, figures), "leader_by_side": by_side,
            "seats": _seats(members[0].players, figures), "margins": margins}
    return out


def _ordered(table: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Rows in ``order`` of their strategy (others after), the strategy as ``side``."""
    place = {name: index for index, name in enumerate(order)}
    table = table.sort_values("strategy", key=lambda s: s.map(place).fillna(len(place)),
                              kind="stable")
    return table.rename(columns={"strategy": "side"}).reset_index(drop=True)


def _difference(row) -> str:
    if not math.isfinite(row["estimate"]):
        return "n/a"
    return f"{pp(row['estimate'])} ({pp(row['low'])} to {pp(row['high'])})"


def effects_table(effects: dict) -> Table:
    """Leading and seats, each as a difference of win rates with its interval."""
    lead = effects["leader"]
    rows = [["leading round 1", "the leader's side − the others' average",
             f"{pct(lead['leader_win_rate'])} vs {pct(lead['others_win_rate'])}",
             _difference(lead), p_value_text(lead["p_value"]), "—"]]
    for _, r in effects["leader_by_side"].iterrows():
        rows.append([f"leading round 1: {r['side']}", "its side led − another led",
                     f"{pct(r['win_rate_leading'])} vs {pct(r['win_rate_not_leading'])}",
                     _difference(r), p_value_text(r["p_value"]), "—"])
    seats = effects["seats"]
    for _, r in seats.iterrows():
        rows.append([r["position"], "its win rate − the average position's",
                     pct(r["win_rate"]), _difference(r), p_value_text(r["p_value"]),
                     p_value_text(r["p_adjusted"])])
    return Table(["effect", "difference", "win rates", "difference (95% CI)", "p-value",
                  "p (adjusted)"], rows, 2)


def margins_table(margins: pd.DataFrame) -> Table:
    """Signed final margin per side: mean ± SE, share ahead, quantiles (points)."""
    quantiles = [c for c in margins.columns if c.startswith("q") and c[1:].isdigit()]
    rows = [[r["side"], f"{int(r['games']):,}", f"{r['mean']:+.1f} ± {r['se']:.1f}",
             pct(r["ahead"]), *[f"{r[q]:+.0f}" for q in quantiles]]
            for _, r in margins.iterrows()]
    names = [f"{int(q[1:])}%" if q != "q50" else "median" for q in quantiles]
    return Table(["side", "games", "mean ± SE (points)", "finished ahead",
                  *[f"{n} quantile" if n != "median" else n for n in names]], rows, 1)


def effects_blocks(report_effects: dict[str, dict]) -> list:
    """The section: per run (or pooled tournament), the effects table and the margins."""
    if not report_effects:
        return []
    out: list = [Heading("Effects: leading, seats and final margins"), Paragraph(
        "The value of leading round 1 and of each seat as differences of win rates, each "
        "with its 95% interval and p-value (the first leader is drawn from the deal, so "
        "leading is randomised; seat rotation spreads the strategies evenly over the seats). "
        "Seat effects: each position against the average position, Holm-adjusted over the "
        "positions, intervals at the matching level (with two positions one comparison, "
        "unadjusted). Signed final margin: the side's final score minus the best other "
        "side's, over all games (negative when it lost), in points.")]
    for name, effects in report_effects.items():
        if len(report_effects) > 1 or name.startswith("tournament "):
            title = (f"{name}: all pairings pooled, each strategy against the field"
                     if name.startswith("tournament ") else name)
            out.append(Heading(title, 3))
        out.append(effects_table(effects))
        family = effects["seats"]["family"].iloc[0] if len(effects["seats"]) else ""
        if family:
            out.append(Paragraph(f"p (adjusted), seats: {family}.", note=True))
        out.append(margins_table(effects["margins"]))
    return out
