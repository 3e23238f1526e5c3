"""The learning curves of docs/learned.md: one panel per training folder of ``sniff learn``.

Usage::

    python scripts/learned_curves.py results/learned-2p-expert results/learned-3p \\
        results/learned-4p-expert -o docs/img/learned-curves.png

Each panel is the folder's ``log.jsonl`` (``sim.learn.curve.read_log``): the win rate on
the held-out duplicate deals against the heuristic per iteration, with its 95% paired
interval, titled by the folder's player count, teacher and inputs (feature version 3:
"record inputs").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sim.learn.curve import plot_curve, read_log


def draw(folders: list[Path], out: Path) -> None:
    figure = Figure(figsize=(4.2 * len(folders), 3.6))
    FigureCanvasAgg(figure)
    for index, folder in enumerate(folders):
        settings = json.loads((folder / "settings.json").read_text())
        axes = figure.add_subplot(1, len(folders), index + 1)
        even = 1 / settings["players"] if settings["players"] == 3 else 0.5
        plot_curve(axes, read_log(folder), even)
        teacher = settings.get("teacher", "none")
        how = "Monte-Carlo returns" if teacher == "none" else f"{teacher}'s values"
        if settings.get("feature_version", 1) != 1:
            how += ", record inputs"
        axes.set_title(f"{settings['players']} players: {how}", fontsize=10)
    figure.tight_layout()
    figure.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("-o", "--out", type=Path, default=Path("results/learned-curves.png"))
    args = parser.parse_args()
    missing = [str(f) for f in args.folders if not (f / "log.jsonl").exists()]
    if missing:
        parser.error(f"not a sniff learn folder (no log.jsonl): {', '.join(missing)}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    draw(args.folders, args.out)
    print(args.out)


if __name__ == "__main__":
    main()
