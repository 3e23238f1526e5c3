"""A report's files: PNG charts, one self-contained HTML page, Markdown and JSON, written
into a folder made ready for them.

Why both: the HTML embeds every chart as a base64 ``data:`` URI and has its styles inline,
so the one file can be mailed or attached anywhere and still show everything; the Markdown
links the PNGs beside it (for repositories and wikis), and ``report.json`` holds every
number for programs. All three say the same thing: they are written from one list of blocks
(``sim.report.html.blocks``; ``sim.display.blocks`` renders them). A folder is reused only
when it holds a sniff report (``MARKER``), and only the report's own files are removed.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from sim.display.blocks import Chart, to_html, to_markdown
from sim.errors import SettingError
from sim.report.html import blocks

# Justified circle: type-only, never run; build hands its Report in (Report.write imports this).
if TYPE_CHECKING:
    from sim.report.build import Report

__all__: list[str] = []  # nothing here is used outside its room

MARKER = "report.json"


OWN_FILES = ("report.html", "report.md", MARKER, "score-states.csv")


def _prepare(out: Path) -> None:
    """Create ``out``, or clear a previous report there; never touch anything else."""
    if out.exists() and not out.is_dir():
        raise SettingError(f"{{out}} {out} is a file; give a folder for the report")
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise SettingError(f"{out} is not empty and holds no sniff report; choose another "
                               "{out} (nothing was changed)")
        for path in out.iterdir():
            if path.name in OWN_FILES or path.suffix == ".png":
                if path.is_dir():
                    shutil.rmtree(path)
                else:
                    path.unlink()
    out.mkdir(parents=True, exist_ok=True)


def write_report(report: Report, out: Path) -> dict[str, Path]:
    """Write the charts, ``report.html``, ``report.md`` and ``report.json`` into ``out``."""
    _prepare(out)
    items = blocks(report)
    written: dict[str, Path] = {}
    for block in items:
        if isinstance(block, Chart):
            path = out / block.file
            path.write_bytes(block.png)
            written[block.file] = path
    (out / "report.html").write_text(to_html(items), encoding="utf-8")
    (out / "report.md").write_text(to_markdown(items), encoding="utf-8")
    data = _finite(report.to_dict())
    data["files"] = sorted(written)
    (out / MARKER).write_text(json.dumps(data, indent=1, default=_json_default,
                                         allow_nan=False) + "\n", encoding="utf-8")
    written.update({"report.html": out / "report.html", "report.md": out / "report.md",
                    MARKER: out / MARKER})
    if report.score_states is not None:  # the numbers behind score-states.png
        report.score_states.to_csv(out / "score-states.csv", index=False)
        written["score-states.csv"] = out / "score-states.csv"
    return written


def _finite(value):
    """NaN and infinities as null: strict JSON, readable by every parser."""
    import numpy as np

    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    if isinstance(value, float | np.floating) and not math.isfinite(float(value)):
        return None
    return value


def _json_default(value):
    import numpy as np

    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")

