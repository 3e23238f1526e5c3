"""The openings measurement shown: ranked table, heat map, report section, output files.

``sim.openings_play`` measures; this module writes what it measured for people (terminal
text, ``ranking.md``, the heat map) and programs (``openings.parquet``, ``games.parquet``,
``summary.json``), and gives ``sniff report`` its openings section as ``sim.blocks``.
"""

from __future__ import annotations

import io as bytes_io
import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from sim.blocks import Chart, Heading, Paragraph, Table, html_body, to_markdown
from sim.errors import SniffError
from sim.folders import write_atomic
from sim.formatting import signed
from sim.io import write_json
from sim.openings_play import FORMAT, METRIC_TITLES, OpeningsConfig
from sim.tiles import N_PIPS
from sim.version import __version__

OUTPUT_FILES = ("openings.parquet", "games.parquet", "heatmap.png", "ranking.md",
                "summary.json")


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


def heatmap_figure(table: pd.DataFrame, summary: dict | None = None, metric: str = "differential"):
    """7x7 triangular heat map of a per-tile figure: row = one half, column = the other.

    Colours are centred on the average tile (diverging map: above average is blue, below is
    red), each cell is annotated with its value, and the colour bar gives the units.
    """
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    grid = np.full((N_PIPS, N_PIPS), np.nan)
    for _, row in table.iterrows():
        grid[int(row["high"]), int(row["low"])] = row[metric]
    values = table[metric].to_numpy(dtype=np.float64)
    centre = float(values.mean())
    spread = max(float(np.abs(values - centre).max()), 1e-9)
    norm = TwoSlopeNorm(vcenter=centre, vmin=centre - spread, vmax=centre + spread)
    figure = Figure(figsize=(7.6, 6.4), layout="constrained")
    axes = figure.subplots()
    image = axes.imshow(np.ma.masked_invalid(grid), cmap="RdBu", norm=norm)
    for high in range(N_PIPS):
        for low in range(high + 1):
            value = grid[high, low]
            shade = abs(norm(value) - 0.5) > 0.3
            axes.text(low, high, f"{value:+.1f}" if metric == "differential" else f"{value:.2f}",
                      ha="center", va="center", fontsize=9,
                      color="white" if shade else "black")
    axes.set_xticks(range(N_PIPS))
    axes.set_yticks(range(N_PIPS))
    axes.set_xlabel("low half (pips)")
    axes.set_ylabel("high half (pips)")
    for spine in axes.spines.values():
        spine.set_visible(False)
    units = {
        "differential": "round 1 differential, leader's side − others (points)",
        "side_points": "round 1 points of the leader's side (points)",
        "p_out": "P(leader's side goes out in round 1)",
        "p_win": "P(leader's side wins the game)",
    }[metric]
    figure.colorbar(image, ax=axes, label=units, shrink=0.85)
    title = f"Value of each opening tile: {METRIC_TITLES[metric]}"
    if summary is not None:
        title += "\n" + describe_run(summary)
    low, high = f"{metric}_vs_avg_low", f"{metric}_vs_avg_high"
    if low in table:
        half = float(np.median(table[high] - table[low]) / 2)
        sign = "+" if metric == "differential" else ""
        title += (f"\ncolours centred on the average tile ({centre:{sign}.2f}); "
                  f"typical paired 95% interval ±{half:.2f}")
    axes.set_title(title, fontsize=10)
    return figure


def figure_png(figure) -> bytes:
    buffer = bytes_io.BytesIO()
    figure.savefig(buffer, format="png", dpi=120)
    return buffer.getvalue()


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


def is_openings_folder(path: object) -> bool:
    """Whether ``path`` is a ``sniff openings`` output folder (its manifest, summary.json,
    beside openings.parquet), so ``sniff report FOLDER`` can tell it from a run folder."""
    if not isinstance(path, str | Path):
        return False
    folder = Path(path)
    if not (folder / "openings.parquet").is_file() or not (folder / "summary.json").is_file():
        return False
    try:
        record = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and record.get("format", FORMAT) == FORMAT \
        and "config" in record


def load_openings(folder: Path | str) -> tuple[pd.DataFrame, dict]:
    """``openings.parquet`` and ``summary.json`` of an openings output folder."""
    folder = Path(folder)
    if not (folder / "openings.parquet").is_file():
        raise SniffError(f"{folder} holds no openings.parquet (not a sniff openings folder)")
    table = pd.read_parquet(folder / "openings.parquet")
    summary = json.loads((folder / "summary.json").read_text())
    table.attrs["summary"] = summary
    return table, summary


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
              "of the leader's side, colours centred on the average tile.",
              figure_png(figure)),
        Table(list(RANKING_HEADER), ranking_rows(table), text_columns=2),
    ]
    return items, figure


def openings_blocks(source: pd.DataFrame | Path | str, summary: dict | None = None) -> list:
    """The openings section as ``sim.blocks`` (Heading, Paragraph, Chart, Table), from a
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


def _parquet_metadata(config: OpeningsConfig, summary: dict, table: str, command: str) -> dict:
    return {"format": FORMAT, "version": __version__, "table": table, "command": command,
            "config": config.to_dict(), "summary": summary}


def _write_parquet(frame: pd.DataFrame, path: Path, metadata: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    schema_metadata = dict(arrow.schema.metadata or {})
    schema_metadata[b"sniff"] = json.dumps(metadata).encode()
    arrow = arrow.replace_schema_metadata(schema_metadata)
    write_atomic(path, lambda temporary: pq.write_table(arrow, temporary, compression="zstd"))


def write_outputs(folder: Path, config: OpeningsConfig, games: pd.DataFrame,
                  table: pd.DataFrame, summary: dict, command: str = "") -> None:
    """The five output files (docs/openings.md: outputs)."""
    folder.mkdir(parents=True, exist_ok=True)
    _write_parquet(table, folder / "openings.parquet",
                   _parquet_metadata(config, summary, "openings", command))
    _write_parquet(games, folder / "games.parquet",
                   _parquet_metadata(config, summary, "games", command))
    figure = heatmap_figure(table, summary)
    write_atomic(folder / "heatmap.png", lambda t: t.write_bytes(figure_png(figure)))
    write_atomic(folder / "ranking.md", lambda t: t.write_text(ranking_markdown(table, summary)))
    record = {"format": FORMAT, **summary, "command": command, "version": __version__,
              "created_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")}
    write_json(folder / "summary.json", record)
