"""The openings measurement shown: ranked table, heat map, report section, output files.

``sim.openings.play`` measures; this module writes what it measured for people (terminal
text, ``ranking.md``, the heat map) and programs (``openings.parquet``, ``games.parquet``,
``summary.json``), and gives ``sniff report`` its openings section as ``sim.display.blocks``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from sim.checks.integrity import file_problem, part_record
from sim.core.tiles import N_PIPS
from sim.display.blocks import Chart, Heading, Paragraph, Table, html_body, to_markdown
from sim.display.formatting import signed
from sim.errors import SniffError
from sim.files import write_atomic
from sim.openings.folder import (
    HEATMAP,
    PAIRS,
    SUMMARY,
    TABLE,
    GamesParts,
    is_openings_folder,
    load_openings,
    parquet_metadata,
    write_parquet,
)
from sim.openings.play import FORMAT, METRIC_TITLES, OpeningsConfig
from sim.store.io import write_json
from sim.version import __version__

# Re-exported: the folder's readers, where ``sniff report`` and ``sniff query`` import them.
__all__ = ["is_openings_folder", "load_openings", "openings_blocks", "ranking_text"]


# --- the ranked table


def _points_ci(row, metric: str, with_sign: bool = False) -> str:
    text = signed if with_sign else (lambda v: f"{v:.2f}")
    return (f"{text(row[metric])} [{text(row[metric + '_low'])}, "
            f"{text(row[metric + '_high'])}]")


def _percent_ci(row, metric: str) -> str:
    if not math.isfinite(row[metric]):
        return "n/a"
    return (f"{100 * row[metric]:.1f}% [{100 * row[metric + '_low']:.1f}, "
            f"{100 * row[metric + '_high']:.1f}]")


RANKING_HEADER = ("rank", "tile", "opening pts", "round differential", "vs average tile (paired)",
                  "p vs average (Holm)", "side's round points", "P(side goes out)",
                  "P(side wins game)", "P(chosen when held)")


def _holm(row) -> str:
    """Holm-adjusted p-value of the tile against the average tile (family: the 28 tiles)."""
    value = row.get("differential_vs_avg_p_holm", math.nan)
    if value is None or not math.isfinite(value):
        return "n/a"
    return "< 0.0001" if value < 1e-4 else f"{value:.3g}"


def ranking_rows(table: pd.DataFrame) -> list[list[str]]:
    """The ranked table's cells, best tile first (every figure with its 95% interval)."""
    rows = []
    for _, row in table.sort_values("rank").iterrows():
        rows.append([
            str(row["rank"]), str(row["tile"]), str(row["opening_points"]),
            _points_ci(row, "differential", with_sign=True),
            _points_ci(row, "differential_vs_avg", with_sign=True),
            _holm(row),
            _points_ci(row, "side_points"),
            _percent_ci(row, "p_out"),
            _percent_ci(row, "p_win"),
            _percent_ci(row, "p_chosen"),
        ])
    return rows


def describe_run(summary: dict) -> str:
    config = summary.get("config") or {}
    names = config.get("strategies_from_leader") or []
    who = ", ".join(names) if len(set(names)) > 1 else (names[0] if names else "?")
    return (f"{config.get('players', '?')} players, strategies from the leader: {who}; "
            f"{summary['deals']:,} deals x 28 tiles, seed {config.get('seed', '?')}")


def summary_lines(summary: dict) -> list[str]:
    """The figures that are not per tile, one per line, each with its 95% interval."""
    lead = summary["lead_value"]
    unforced = summary["unforced"]
    half = summary["median_half_width"]
    return [
        f"Value of leading (unforced games, the strategy's own opening): the leader's side "
        f"scores {signed(lead['mean'])} points [{signed(lead['low'])}, "
        f"{signed(lead['high'])}] more than the others in round 1; it wins "
        f"{100 * unforced['p_win']['mean']:.1f}% [{100 * unforced['p_win']['low']:.1f}, "
        f"{100 * unforced['p_win']['high']:.1f}] of the games.",
        f"Average over the 28 forced tiles: differential "
        f"{signed(summary['average_tile']['differential'])}, "
        f"game win {100 * summary['average_tile']['p_win']:.1f}%.",
        f"Median 95% half-width of a tile's figure, plain / paired on the same deals (CRN): "
        f"differential {half['differential']['plain']:.2f} / "
        f"{half['differential']['paired']:.2f} points; P(side wins game) "
        f"{100 * half['p_win']['plain']:.1f} / {100 * half['p_win']['paired']:.1f} "
        f"percentage points.",
    ]


def ranking_markdown(table: pd.DataFrame, summary: dict) -> str:
    """``ranking.md``: the run, the summary lines and the ranked table."""
    lines = [
        "# Opening tiles, ranked",
        "",
        describe_run(summary) + ".",
        "",
        *[f"- {line}" for line in summary_lines(summary)],
        "",
        "Ranked by the round 1 point differential (leader's side minus the others, "
        "settlement included). Brackets are 95% intervals: plain ones over independent deals, "
        "and the paired one (tile minus the average tile on the same deals), which is what "
        "tells two tiles apart. p vs average (Holm): the test of the paired difference, "
        "Holm-adjusted over the 28 tile-vs-average differences (raw p-values in "
        "openings.parquet, differential_vs_avg_p). P(chosen when held): how often the "
        "strategy, free to choose, "
        "opened with the tile when its leader held it.",
        "",
        ranking_table_markdown(table),
    ]
    return "\n".join(lines)


def ranking_text(table: pd.DataFrame, summary: dict) -> str:
    """The ranked table for a terminal: the run, the summary lines, aligned columns."""
    rows = [list(RANKING_HEADER), *ranking_rows(table)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(RANKING_HEADER))]
    lines = [describe_run(summary), *summary_lines(summary), ""]
    for index, row in enumerate(rows):
        lines.append("  ".join(
            cell.ljust(width) if i in (1, 2) or index == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths))
        ).rstrip())
    return "\n".join(lines) + "\n"


def ranking_table_markdown(table: pd.DataFrame) -> str:
    """The ranked table alone, as a Markdown table (one line per tile)."""
    lines = [
        "| " + " | ".join(RANKING_HEADER) + " |",
        "|" + "|".join("---" for _ in RANKING_HEADER) + "|",
    ]
    lines += ["| " + " | ".join(cells) + " |" for cells in ranking_rows(table)]
    return "\n".join(lines) + "\n"


def significant(table: pd.DataFrame, metric: str = "differential") -> np.ndarray:
    """Tiles whose paired difference from the average tile is significant, Holm over 28
    (the table's ``{metric}_vs_avg_p_holm`` column)."""
    holm = table[f"{metric}_vs_avg_p_holm"].to_numpy(dtype=np.float64)
    return np.where(np.isfinite(holm), holm < 0.05, False)


HEATMAP_METRICS = ("differential", "p_win")
UNITS = {
    "differential": "round 1 differential, leader's side − others (points)",
    "side_points": "round 1 points of the leader's side (points)",
    "p_out": "P(leader's side goes out in round 1)",
    "p_win": "P(leader's side wins the game)",
}


def _heatmap_axes(figure, axes, table: pd.DataFrame, metric: str) -> None:
    """One 7×7 triangle: the tile's figure, colours centred on the average tile, and an
    outline on every tile that differs from the average (paired, Holm over the 28 tiles)."""
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.patches import Rectangle

    grid = np.full((N_PIPS, N_PIPS), np.nan)
    marked = np.zeros((N_PIPS, N_PIPS), dtype=bool)
    has_test = f"{metric}_vs_avg_low" in table
    flags = significant(table, metric) if has_test else np.zeros(len(table), dtype=bool)
    for flag, (_, row) in zip(flags, table.iterrows()):
        grid[int(row["high"]), int(row["low"])] = row[metric]
        marked[int(row["high"]), int(row["low"])] = flag
    values = table[metric].to_numpy(dtype=np.float64)
    centre = float(values.mean())
    spread = max(float(np.abs(values - centre).max()), 1e-9)
    norm = TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="RdBu", norm=norm)
    for high in range(N_PIPS):
        for low in range(high + 1):
            value = grid[high, low]
            shade = abs(norm(value) - 0.5) > 0.3
            text = (f"{value:+.1f}" if metric == "differential" else
                    f"{100 * value:.1f}%" if metric.startswith("p_") else f"{value:.2f}")
            axes.text(low, high, text, ha="center", va="center", fontsize=8,
                      color="white" if shade else "black")
            if marked[high, low]:
                axes.add_patch(Rectangle((low - 0.46, high - 0.46), 0.92, 0.92, fill=False,
                                         edgecolor="black", linewidth=2.2))
    axes.set_xticks(range(N_PIPS))
    axes.set_yticks(range(N_PIPS))
    axes.set_xlabel("low half (pips)")
    axes.set_ylabel("high half (pips)")
    for spine in axes.spines.values():
        spine.set_visible(False)
    bar = figure.colorbar(image, ax=axes, label=UNITS[metric], shrink=0.8)
    if metric.startswith("p_"):
        from matplotlib.ticker import PercentFormatter

        bar.formatter = PercentFormatter(xmax=1.0)
        bar.update_ticks()
    title = METRIC_TITLES[metric]
    low_column, high_column = f"{metric}_vs_avg_low", f"{metric}_vs_avg_high"
    if low_column in table:
        half = float(np.median(table[high_column] - table[low_column]) / 2)
        scale = 100 if metric.startswith("p_") else 1
        unit = " pp" if metric.startswith("p_") else ""
        sign = "+" if metric == "differential" else ""
        title += (f"\naverage tile {scale * centre:{sign}.2f}{'%' if unit else ''}; typical "
                  f"paired 95% interval ±{scale * half:.2f}{unit}; "
                  f"{int(marked.sum())} outlined")
    axes.set_title(title, fontsize=9)


def heatmap_figure(table: pd.DataFrame, summary: dict | None = None,
                   metric: str | None = None):
    """7x7 triangular heat maps of per-tile figures: row = one half, column = the other.

    By default two panels, the round-1 differential and the game-win probability (the
    first move's value and what it is worth over the whole game); ``metric`` draws that
    one alone. Colours are centred on the average tile (blue above, red below), each
    cell is annotated with its value, and a black outline marks a tile whose paired
    interval excludes the average tile after the Holm correction over the 28 tiles (its
    Holm-adjusted p below 5%, the ranked table's "p vs average (Holm)").
    """
    from matplotlib.figure import Figure

    metrics = (metric,) if metric else tuple(m for m in HEATMAP_METRICS if m in table)
    figure = Figure(figsize=(7.2 * len(metrics), 6.6), layout="constrained")
    for axes, name in zip(figure.subplots(1, len(metrics), squeeze=False)[0], metrics):
        _heatmap_axes(figure, axes, table, name)
    title = "Value of each opening tile" + ("" if summary is None
                                            else ": " + describe_run(summary))
    figure.suptitle(title + "\noutlined: differs from the average tile (paired test, "
                    "Holm-adjusted over the 28 tiles, 5%)", fontsize=10)
    return figure


def figure_png(figure) -> bytes:
    from sim.display.charts import png_bytes

    return png_bytes(figure, dpi=120, facecolor=figure.get_facecolor())


@dataclass
class ReportSection:
    """A section for ``sniff report``: the same content as Markdown and as HTML.

    ``html`` is self-contained (the heat map inlined as a PNG data URI); ``figure`` is the
    matplotlib Figure, for a report that embeds figures its own way.
    """

    title: str
    markdown: str
    html: str
    figure: object = field(repr=False)


SECTION_TITLE = "Opening tiles"
SECTION_METHOD = (
    "Every tile is led, by force, on the same deals (common random numbers: for a deal, "
    "only the one swap that gives the leader the tile differs between tiles). Round "
    "figures are from the forced-lead round, the win probability from the rest of the "
    "game from 0-0. Brackets are 95% intervals; the paired one compares a tile with the "
    "average tile on the same deals."
)


def _table_and_summary(source: pd.DataFrame | Path | str, summary: dict | None
                       ) -> tuple[pd.DataFrame, dict]:
    if not isinstance(source, pd.DataFrame):
        return load_openings(source)
    summary = summary if summary is not None else source.attrs.get("summary")
    if summary is None:
        raise SniffError("the openings section needs the run summary (table.attrs['summary'])")
    return source, summary


def _section(source: pd.DataFrame | Path | str, summary: dict | None) -> tuple[list, object]:
    """The section's blocks, and the heat map's figure."""
    table, summary = _table_and_summary(source, summary)
    figure = heatmap_figure(table, summary)
    items = [
        Heading(SECTION_TITLE),
        Paragraph(describe_run(summary) + "."),
        Paragraph(SECTION_METHOD),
        *[Paragraph(line) for line in summary_lines(summary)],
        Chart("openings-heatmap.png", "Value of each opening tile: mean round 1 differential "
              "and game-win probability of the leader's side, colours centred on the "
              "average tile; outlined tiles differ from the average tile (paired test, "
              "Holm-adjusted over the 28 tiles, 5%).", figure_png(figure)),
        Table(list(RANKING_HEADER), ranking_rows(table), text_columns=2),
    ]
    if not isinstance(source, pd.DataFrame):
        items += _pairs_blocks(Path(source), table)
    return items, figure


def _pairs_blocks(folder: Path, table: pd.DataFrame) -> list:
    """Neighbours in the ranking, tile against tile, adjusted over all 378 pairs."""
    import pyarrow as pa

    from sim.display.formatting import p_value_text
    from sim.openings.pairs import neighbours, tile_pairs

    files = (table.attrs.get("summary") or {}).get("files")
    for name in ("tile-pairs.csv", "games.parquet"):
        if (problem := file_problem(folder, name, files)) is not None:
            raise SniffError(problem)
    try:
        if (folder / "tile-pairs.csv").is_file():
            pairs = pd.read_csv(folder / "tile-pairs.csv")
        elif (folder / "games.parquet").is_file():
            pairs = tile_pairs(pd.read_parquet(folder / "games.parquet", columns=[
                "deal_id", "forced", "opening_tile_id", "differential", "side_won"]))
        else:
            return []
    except (OSError, ValueError, KeyError, pa.ArrowException) as error:
        return [Paragraph(f"Tile against tile: not shown ({folder}: "
                          f"{str(error).splitlines()[0]}).", note=True)]
    ranked = list(table.sort_values("rank")["tile"])
    rows = [[f"{r['tile_a']} − {r['tile_b']}", f"{signed(r['estimate'])} "
             f"[{signed(r['low'])}, {signed(r['high'])}]", p_value_text(r["p_value"]),
             p_value_text(r["p_adjusted"]), "yes" if r["different"] else "no"]
            for _, r in neighbours(pairs, ranked).iterrows()]
    family = pairs.loc[pairs["metric"] == "differential", "family"].iloc[0]
    different = int(pairs.loc[pairs["metric"] == "differential", "different"].sum())
    return [Paragraph(
        "Tile against tile: each pair of tiles compared on the same deals (per deal, tile A's "
        "round 1 differential minus tile B's; 95% interval; z-test). The p-values are "
        f"{family}, that is all 28 × 27 / 2 pairs (tile-pairs.csv holds them all, and the "
        f"same for the game-win probability): {different} pairs differ at 5%. Holm rather than "
        "Benjamini–Hochberg because the pairs share tiles and deals (dependence in both "
        "directions, where BH's guarantee does not hold) and a reader decides about single "
        "pairs. Below, the tiles next to each other in the ranking (best first)."),
        Table(["tiles (better − worse)", "differential difference [95% CI]", "p-value",
               "p (Holm, 378 pairs)", "different"], rows, text_columns=1)]


def openings_blocks(source: pd.DataFrame | Path | str, summary: dict | None = None) -> list:
    """The openings section as ``sim.display.blocks`` (Heading, Paragraph, Chart, Table), from a
    table (``run_openings``) or a folder, so ``sniff report`` renders it in its own style:
    ``items += openings_blocks(folder)``."""
    return _section(source, summary)[0]


def openings_section(source: pd.DataFrame | Path | str, summary: dict | None = None
                     ) -> ReportSection:
    """The same section rendered: Markdown, and HTML (a ``<section>``, self-contained)."""
    items, figure = _section(source, summary)
    html = '<section id="openings">' + html_body(items) + "</section>"
    return ReportSection(SECTION_TITLE, to_markdown(items), html, figure)


# --- the output folder


def write_results(folder: Path, config: OpeningsConfig, table: pd.DataFrame, summary: dict,
                  pairs: pd.DataFrame, games_records: dict[str, dict],
                  command: str = "") -> dict:
    """Everything but the games (written in parts as they were played, ``games_records``
    their records): the per-tile table, heat map, ranking, pairs, and ``summary.json`` last,
    which records every file. The record written."""
    folder.mkdir(parents=True, exist_ok=True)
    write_parquet(table, folder / TABLE,
                  parquet_metadata(config, command, "openings", summary=summary))
    figure = heatmap_figure(table, summary)
    write_atomic(folder / HEATMAP, lambda t: t.write_bytes(figure_png(figure)))
    write_atomic(folder / "ranking.md", lambda t: t.write_text(ranking_markdown(table, summary)))
    write_atomic(folder / PAIRS, lambda t: pairs.to_csv(t, index=False))
    # Written last, it vouches for the tables: every read checks them against it.
    files = {TABLE: part_record(folder / TABLE, len(table)), **games_records,
             PAIRS: part_record(folder / PAIRS, len(pairs)),
             HEATMAP: part_record(folder / HEATMAP, 0)}  # a picture: bound by its hash
    record = {"format": FORMAT, **summary, "command": command, "version": __version__,
              "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "files": files}
    write_json(folder / SUMMARY, record)
    return record


def write_outputs(folder: Path, config: OpeningsConfig, games: pd.DataFrame,
                  table: pd.DataFrame, summary: dict, command: str = "") -> None:
    """The output files (docs/openings.md: outputs) from a games table held in memory
    (``play_openings``): its parts, then the rest as ``write_results``."""
    from sim.openings.pairs import tile_pairs
    from sim.openings.play import PART_DEALS, chunk_ranges

    folder.mkdir(parents=True, exist_ok=True)
    parts = GamesParts(folder, config, PART_DEALS, command)
    deal_ids = games["deal_id"].to_numpy()
    for lo, hi in chunk_ranges(config.deals, PART_DEALS, PART_DEALS):
        parts.add(lo, hi, games[(deal_ids >= lo) & (deal_ids < hi)])
    write_results(folder, config, table, summary, tile_pairs(games), parts.records, command)
