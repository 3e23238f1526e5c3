"""The report as one list of blocks: headings, tables, charts and paragraphs, in the order
the HTML page, the Markdown and the JSON show them (``sim.report.write`` writes them).

Why one list: all three files say the same thing, so they are rendered from the same
blocks (``sim.display.blocks``), and a figure is placed once, here.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from sim.display import charts
from sim.display.blocks import Chart, Heading, Paragraph, Table
from sim.display.formatting import ci, p_value_text, pct, pp, slug
from sim.report.effects import effects_blocks
from sim.stats.ranking import fit_text, rank_text
from sim.stats.score_states import convergence_figure, score_states_figure
from sim.store.summary import stop_text

__all__ = ["blocks"]

# Justified circle: type-only, never run; build hands its Report in (Report.write imports this).
if TYPE_CHECKING:
    from sim.report.build import Report


# --- the report as blocks


def _summary_table(report: Report) -> Table:
    rows = []
    shown = report.summary[~report.summary["run"].isin(report.compact)]
    for _, row in shown.iterrows():
        rows.append([
            row["run"], row["side"], f"{row['games']:,}", f"{row['wins']:,}",
            f"{pct(row['win_rate'], 2)} ({ci(row['low'], row['high'], 2)})",
            f"{row['points_per_round']:.2f} ± {row['points_se']:.2f}",
            f"{row['rounds']:,}", f"{row['unfinished']:,}",
        ])
    return Table(["run", "strategy (side)", "games", "wins", "win rate (95% CI)",
                  "points per round ± SE", "rounds", "undecided games"], rows, 2)


def _position_table(frame: pd.DataFrame) -> Table:
    rows = [[r["run"], r["side"], r["position"], f"{r['games']:,}",
             f"{pct(r['win_rate'])} ({ci(r['low'], r['high'])})"] for _, r in frame.iterrows()]
    return Table(["run", "strategy", "position", "games", "win rate (95% CI)"], rows, 3)


def _difference_table(frame: pd.DataFrame) -> Table:
    rows = []
    for _, r in frame.iterrows():
        unit = "deals, paired" if r["unit"] == "deal" else "games"
        extra = ""
        narrower = r.get("narrower_by", math.nan) if r["unit"] == "deal" else math.nan
        if not math.isnan(narrower):
            extra = (f"{narrower:.0%} narrower than independent games" if narrower >= 0.005
                     else f"{-narrower:.0%} wider than independent games"
                     if narrower <= -0.005 else "as wide as independent games")
        rows.append([r["run"], f"{r['side_a']} − {r['side_b']}", unit,
                     f"{pct(r['win_rate_a'])} vs {pct(r['win_rate_b'])}",
                     f"{pp(r['estimate'])} ({pp(r['low'])} to {pp(r['high'])})",
                     f"{100 * r['se']:.2f} pp", p_value_text(r["p_value"]),
                     p_value_text(r.get("p_holm", math.nan)), f"{r['n']:,}", extra])
    columns = ["run", "difference", "unit", "win rates", "difference (95% CI)", "SE",
               "p-value", "p (Holm)", "n", "paired vs independent"]
    if not (frame["unit"] == "deal").any():  # no paired rows: the last column would be empty
        columns.pop()
        rows = [row[:-1] for row in rows]
    return Table(columns, rows, 3)


def _comparison_table(frame: pd.DataFrame) -> Table:
    rows = [[f"{r['run_a']}: {r['side_a']}", f"{r['run_b']}: {r['side_b']}", r["opposition"],
             f"{pct(r['win_rate_a'])} vs {pct(r['win_rate_b'])}",
             f"{pp(r['estimate'])} ({pp(r['low'])} to {pp(r['high'])})",
             p_value_text(r["p_value"]), p_value_text(r.get("p_holm", math.nan))]
            for _, r in frame.iterrows()]
    return Table(["strategy A", "strategy B", "against", "win rates",
                  "difference A − B (95% CI)", "p-value", "p (Holm)"], rows, 3)


def _ratings_table(table: pd.DataFrame) -> Table:
    if "rank_low" in table.columns:
        rows = [[rank_text(int(r["rank_low"]), int(r["rank_high"])), str(int(r["group"])),
                 r["strategy"], f"{r['rating']:.0f}", f"{r['low']:.0f}–{r['high']:.0f}",
                 f"{r['se']:.1f}", f"{int(r['games']):,}", f"{int(r['wins']):,}"]
                for _, r in table.iterrows()]
        return Table(["rank (95% range)", "group", "strategy", "rating", "95% CI", "SE",
                      "games", "wins"], rows, 3)
    rows = [[str(int(r["rank"])), r["strategy"], f"{r['rating']:.0f}",
             f"{r['low']:.0f}–{r['high']:.0f}", f"{r['se']:.1f}", f"{int(r['games']):,}",
             f"{int(r['wins']):,}"] for _, r in table.iterrows()]
    return Table(["rank", "strategy", "rating", "95% CI", "SE", "games", "wins"], rows, 2)


def _matrix_table(matrix: pd.DataFrame, names: list[str]) -> Table:
    cell = {(r["row"], r["column"]): r for _, r in matrix.iterrows()}
    rows = []
    for a in names:
        row = [a]
        for b in names:
            if a == b:
                row.append("—")
            elif not cell[(a, b)]["games"]:
                row.append("not played")
            else:
                r = cell[(a, b)]
                row.append(f"{pct(r['share'])} ± {100 * (r['high'] - r['low']) / 2:.1f} "
                           f"({r['games']:,})")
        rows.append(row)
    return Table(["row vs column", *names], rows, 1)


def _run_meta(run) -> str:
    info = run.describe()
    parts = [f"{info['players']} players", "lineup " + ", ".join(info["lineup"]),
             f"{info['games']:,} games", f"seed {info['seed']}"]
    if info["duplicate"]:
        parts.append(f"duplicate deals ({run.group} games per deal)")
    stop = info.get("stopped")
    if stop:
        parts.append(stop_text(stop))
    parts.append(f"status {info['status']}")
    where = f"{info['path']}: " if info["path"] else ""
    return where + "; ".join(parts)


def _field_blocks(report: Report) -> list:
    """A tournament in the aggregate: each strategy's win rate against the whole field."""
    table = report.field_table
    assert table is not None  # a report with a tournament has its field table
    rows = [[r["strategy"], str(int(r["runs"])), f"{int(r['games']):,}", f"{int(r['wins']):,}",
             f"{pct(r['win_rate'], 2)} ({ci(r['low'], r['high'], 2)})",
             f"{r['points_per_round']:.2f} ± {r['points_se']:.2f}"]
            for _, r in table.iterrows()]
    frame = pd.DataFrame({"run": "the field", "side": table["strategy"],
                          **{c: table[c] for c in ("win_rate", "low", "high", "games")}})
    compact = len(report.compact)
    detail = (f" The {compact} pairings are shown in these aggregates only; `sniff report "
              "--pairings` adds a section per pairing." if compact else "")
    return [Heading("Strategies against the field"), Paragraph(
        "Each strategy's wins over every game it played, all its pairings pooled (undecided "
        "games count as not won), with the 95% Wilson interval; strongest first (by "
        "rating). Points per round: its placement points per round, mean ± SE." + detail),
        Chart("field.png", "Each strategy's win rate against the field, 95% Wilson intervals.",
              charts.png_bytes(charts.win_rates(frame, report.players,
                                                "Win rate against the field, with 95% "
                                                "Wilson intervals"))),
        Table(["strategy", "pairings", "games", "wins", "win rate (95% CI)",
               "points per round ± SE"], rows, 1)]


def _differences_blocks(report: Report) -> list:
    """Differences within runs (stronger − weaker) and comparisons across runs."""
    out: list = [Heading("Differences between strategies"), Paragraph(
        "Within a run both win rates come from the same games, so the difference is the mean "
        "of [A won] − [B won] per game, with its standard error and the two-sided p-value of "
        "McNemar's test of no difference. "
        "Duplicate runs add the estimate paired by deal (the mean of the per-deal "
        "differences): the same cards played both ways cancel the luck of the deal. Each "
        "row reads stronger − weaker (the side with more wins first), strongest strategies "
        "first when there are ratings.")]
    if len(report.differences):
        if "family" in report.differences.columns:
            families = "; ".join(dict.fromkeys(report.differences["family"]))
            out.append(Paragraph(
                f"p (Holm): {families} (the per-game and the paired per-deal estimates are "
                "separate families). Holm's step-down method keeps the chance of any false "
                "'different' at 5%; read a difference as real when its Holm p-value is "
                "below 0.05. The raw p-value is kept beside it."))
        out.append(_difference_table(report.differences))
        out.append(Chart("differences.png", "Win-rate differences with 95% intervals.",
                         charts.png_bytes(charts.differences(report.differences))))
    if len(report.comparisons):
        out.append(Heading("Across runs", 3))
        out.append(Paragraph(
            "Different strategies that met the same opposition in different runs: independent "
            "samples, Newcombe's interval for a difference of proportions, pooled z-test."))
        out.append(_comparison_table(report.comparisons))
    return out


def _runs_blocks(report: Report) -> list:
    """The report's heading, and one line per run with its notes."""
    out: list = [Heading(report.title, 1),
                 Paragraph(f"Created {report.created_at} by sniff report. All intervals are "
                           "95%; win-rate intervals are Wilson score intervals.")]
    if report.runs:
        out.append(Heading("Runs"))
    for run in report.runs:
        out.append(Paragraph(f"**{run.name}**: {_run_meta(run)}"))
        for note in run.notes:
            out.append(Paragraph(f"{run.name}: {note}", note=True))
    return out


def _summary_blocks(report: Report) -> list:
    """Every side's win rate and points per round, runs shown in full only."""
    shown = report.summary[~report.summary["run"].isin(report.compact)]
    return [Heading("Summary"), Paragraph(
        "Win rates count undecided games (still open at the round cap) as not won. Points "
        "per round are the side's placement points in a round (before settlement "
        "penalties), mean ± standard error over rounds."),
        _summary_table(report),
        Chart("win-rates.png", "Win rate per strategy with 95% Wilson intervals.",
              charts.png_bytes(charts.win_rates(shown, report.players)))]


def _pairwise_blocks(report: Report) -> list:
    """The pairwise matrix, then the ratings (or the note saying why there are none)."""
    matrix = report.matrix
    assert matrix is not None  # a report with pairings has its matrix
    names = (list(report.ratings.table["strategy"]) if report.ratings is not None
             else list(dict.fromkeys(matrix["row"])))
    out: list = [Heading("Pairwise results and ratings"), Paragraph(
        "Each cell: the row strategy's share of the games decided between it and the "
        "column strategy, ± the 95% Wilson half-width, and (in the table) how many games "
        "that is. With 3 players, the share of the games won by either of the two."),
        Chart("matrix.png", "Pairwise win-rate matrix.",
              charts.png_bytes(charts.pairwise_matrix(matrix, names))),
        _matrix_table(matrix, names)]
    if report.ratings is not None:
        out += _ratings_blocks(report)
    elif report.ratings_note:
        out.append(Paragraph(report.ratings_note, note=True))
    return out


def _ratings_blocks(report: Report) -> list:
    """The ratings with their notes and chart, and the rank ranges and groups if fitted."""
    out: list = [Paragraph(
        "Ratings: maximum-likelihood Bradley–Terry strengths (Luce's model with 3 "
        "players) fitted to every decided game, on the Elo scale "
        "(1500 + 400·log10 strength, the field averaging 1500; 100 points ≈ 64% "
        "expected wins head to head). Intervals from the Fisher information, relative "
        "to the field's average; for duplicate deals they are conservative.")]
    ratings = report.ratings
    assert ratings is not None  # shown only when there are ratings
    for note in ratings.notes:
        out.append(Paragraph(note, note=True))
    out.append(Chart("ratings.png", "Ratings with 95% intervals.",
                     charts.png_bytes(charts.ratings(ratings.table))))
    ranking = report.ranking
    if ranking is None:
        return out + [_ratings_table(ratings.table)]
    out.append(Paragraph(
        "Rank (95% range): the 2.5%–97.5% range of each strategy's rank over "
        f"{ranking.draws:,} draws from the ratings' estimated distribution. "
        "Group: strategies sorted by rating; a new group starts where two "
        "neighbours differ significantly (Holm-adjusted over the "
        f"{len(ranking.gaps)} gaps between neighbours, 5%), so members of "
        "a group cannot be ordered by these data. " + fit_text(ranking.fit)
        .replace("fit: ", "Goodness of fit (Pearson): ")
        .replace("warning: ", "Goodness of fit (Pearson): ")))
    for note in ranking.notes:
        if note != ranking.fit.warning:
            out.append(Paragraph(note, note=True))
    return out + [_ratings_table(ranking.table)]


def _score_state_blocks(report: Report) -> list:
    """Win probability from each round's starting score, and the running win rate."""
    states, convergence = report.score_states, report.convergence
    assert states is not None and convergence is not None  # a report of runs has both
    if report.field_table is not None:  # panels strongest first, as the field table
        place = {name: k for k, name in enumerate(report.field_table["strategy"])}
        states = states.sort_values("strategy", kind="stable", key=lambda column: column.map(
            place).fillna(len(place)))
    return [Heading("Win probability by score"), Paragraph(
        "From each round's starting score (own, opponents'; binned), the share of games "
        "the side went on to win, each game counted once per cell (numbers in "
        "score-states.csv, with 95% Wilson intervals). With more than two strategies each "
        "strategy is shown against the field."),
        Chart("score-states.png", "Win probability from each score state.",
              charts.png_bytes(score_states_figure(states))),
        Chart("convergence.png", "Running win rate with its 95% band.",
              charts.png_bytes(convergence_figure(convergence)))]


def _run_keys(report: Report) -> list[str]:
    """Each run's file-name prefix for its charts, numbered when two names share a form."""
    keys = [slug(run.name) for run in report.runs]
    if len(set(keys)) < len(keys):  # distinct names can share a file-name form
        keys = [f"{number:02d}-{key}" for number, key in enumerate(keys, 1)]
    return keys


def _run_section(report: Report, run, key: str) -> list:
    """One run in full: by seat and leader, points, margins, lengths, placements, endings."""
    name = run.name
    dist = report.distributions[name]
    seat = report.by_seat[report.by_seat["run"] == name]
    leader = report.by_leader[report.by_leader["run"] == name]
    leading = report.effects[name]["leader_by_side"]
    means = {row["side"]: (row["points_per_round"], row["points_se"])
             for _, row in report.summary[report.summary["run"] == name].iterrows()}
    out: list = [
        Heading(f"Run {name}"), Paragraph(_run_meta(run), note=False),
        Chart(f"{key}-by-position.png",
              "Win rate by seat, and the value of leading round 1 as a difference.",
              charts.png_bytes(charts.win_rates_by_position(seat, leading, name))),
        _position_table(pd.concat([seat, leader], ignore_index=True)),
        Chart(f"{key}-points-per-round.png", "Points per round per side (placements only).",
              charts.png_bytes(charts.points_per_round(dist["points_per_round"], name, means))),
        Chart(f"{key}-score-margin.png", "Final score margin of decided games.",
              charts.png_bytes(charts.score_margin(dist["margin"], name, dist["margin_mean"]))),
        Chart(f"{key}-game-length.png", "Game length in rounds.",
              charts.png_bytes(charts.game_length(dist["length"], name, dist["length_mean"])))]
    out += _placement_blocks(report.placements[name], name, key)
    return out + [
        Chart(f"{key}-penalties.png", "Settlement penalties per settled round.",
              charts.png_bytes(charts.penalties(dist["penalties"], name,
                                                dist["penalty_mean"]))),
        Chart(f"{key}-round-endings.png",
              "Domino and blocked-round rates (and rounds cut by the target).",
              charts.png_bytes(charts.round_endings(dist["endings"], name))),
        _endings_table(dist["endings"]), _run_numbers(dist)]


def _placement_blocks(sample: dict, name: str, key: str) -> list:
    """The traced sample's placement scores, or the note saying why there is none."""
    if not sample["games"]:
        return [Paragraph(sample["note"], note=True)]
    return [Paragraph(f"Placement scores are a **sample**: {sample['note']}.", note=True),
            Chart(f"{key}-placement-scores.png",
                  "Frequency of each placement score (traced sample).",
                  charts.png_bytes(charts.placement_scores(sample, name))),
            _placement_table(sample["table"])]


def blocks(report: Report) -> list:
    """The report as a list of blocks, rendered to both HTML and Markdown."""
    out = _runs_blocks(report)
    if report.field_table is not None:
        out += _field_blocks(report)
    if len(report.compact) < len(report.runs):
        out += _summary_blocks(report)
    if report.runs:
        out += _differences_blocks(report)
    if report.matrix is not None:
        out += _pairwise_blocks(report)
    out += effects_blocks(report.effects)
    if report.score_states is not None and len(report.score_states):
        out += _score_state_blocks(report)
    for run, key in zip(report.runs, _run_keys(report)):
        if run.name not in report.compact:
            out += _run_section(report, run, key)
    if report.openings:
        from sim.openings.output import openings_blocks

        for folder in report.openings:
            out += openings_blocks(folder)
    if report.analyses:
        from sim.analyze.section import analysis_blocks

        for analysis in report.analyses:
            out += analysis_blocks(analysis)
    if report.runs or report.openings:
        out.append(Heading("How the numbers are computed"))
        out += [Paragraph(text) for text in METHODS]
    return out


METHODS = [
    "Every number is computed from the runs' Parquet tables (games/ and rounds/), not from "
    "the manifests. A side is a lineup position (with 4 players a partnership), followed "
    "wherever seat rotation put it.",
    "Win rate: wins / games played, 95% Wilson score interval. By seat: where the side sat "
    "(seat rotation spreads every side over every seat). By first leader: the side's turn in "
    "round 1, whose leader is drawn at random.",
    "Points per round: placement points of the side in each round (settlement penalties are "
    "shown separately), mean ± standard error (sample standard deviation / √rounds). "
    "Penalties: the side's seats' settlement penalties in rounds that were settled (ended "
    "by domino or block; a round cut short by the target is not settled).",
    "Final score margin: the winner's final score minus the best other score, decided games "
    "only. Game length: rounds per game, the last possibly cut short by the target.",
    "Placement scores: the tables keep per-round totals only, so the run's first games are "
    "played again by the same compiled engine with event traces on (the same seed, deal, "
    "game id and rotation give the same game; each is checked against the run's final "
    "scores). It is a sample and is labelled as one.",
    "Differences: within a run, mean of [A won] − [B won] per game with a normal interval "
    "(standard error with n − 1); the two-sided p-value is the score test of no difference "
    "(McNemar's: z = (wins A − wins B) / √(wins A + wins B)). For duplicate deals the same "
    "on the per-deal means (z = mean / √(mean of squares / deals)). Across runs: Newcombe's "
    "hybrid score interval and the pooled two-proportion z-test. Each family of tests (the "
    "per-game differences, the paired ones, the comparisons across runs) gets Holm-adjusted "
    "p-values beside the raw ones (statsmodels' multipletests).",
    "Against the field (a tournament): a strategy's wins over every game it played, all its "
    "pairings pooled, Wilson interval. Differences read stronger − weaker (the side with "
    "more wins in the run first).",
    "Effects: leading round 1 is the leader's side's win rate minus the other sides' "
    "average (per game, score test), and per side its win rate when its side led minus "
    "when another led (Newcombe interval); seats are each position's win rate minus the "
    "average position's, Holm-adjusted over the positions; the signed final margin is a "
    "side's final score minus the best other side's, in every game. A tournament's are "
    "pooled over its pairings.",
    "Ratings fit: Pearson χ² of every pairing's wins against the ratings' prediction, "
    "df = pairings − (strategies − 1); when p < 0.05 the ratings do not summarise the matrix "
    "and the report says so. Rank ranges: a parametric bootstrap of the ratings (their "
    "covariance, widened by χ²/df when that exceeds 1).",
]


def _placement_table(table: pd.DataFrame) -> Table:
    sides = list(dict.fromkeys(table["side"]))
    values = sorted(table["points"].unique())
    share = {(r["side"], r["points"]): r["share"] for _, r in table.iterrows()}
    rows = [[f"{v}" if v else "0 (no score)"] + [pct(share.get((s, v), 0.0))
                                                 for s in sides] for v in values]
    return Table(["points of a placement", *[f"{s}: share of placements" for s in sides]],
                 rows, 1)


def _endings_table(table: pd.DataFrame) -> Table:
    rows = []
    for _, r in table.iterrows():
        what = f"domino by {r['side']}" if r["side"] else r["ending"]
        share = f"{pct(r['share'], 2)} ({ci(r['low'], r['high'], 2)})"
        rows.append([what, f"{r['rounds']:,}", share])
    return Table(["round ending", "rounds", "share of rounds (95% CI)"], rows, 1)


def _run_numbers(dist: dict) -> Table:
    length, length_se = dist["length_mean"]
    rows = [["game length (rounds)", f"{length:.2f} ± {length_se:.2f}"],
            ["final score margin (points)",
             f"{dist['margin_mean'][0]:.1f} ± {dist['margin_mean'][1]:.1f}"]]
    for side, (mean, se) in dist["penalty_mean"].items():
        rows.append([f"penalty per settled round, {side} (points)", f"{mean:.2f} ± {se:.2f}"])
    return Table(["quantity", "mean ± SE"], rows, 1)





