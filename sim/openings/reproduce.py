"""``sniff verify --replay N`` of an openings folder: its games played again.

Every game of a study is a function of its deal, its slot (a forced tile, or the unforced
game), the lineup, the seed, the round cap and the code, whatever the chunks and parts
(``sim.openings.play.iter_openings``). So the deals of N games chosen at random are played
again with the configuration ``summary.json`` records, and their rows are compared with
the games parts, field by field. A part forged with its hash updated in ``summary.json``
(a column no figure reads, such as ``rounds``), and a study forged consistently (games,
table, summary and hashes together), fail here. As for a run (``sim.audit.reproduce``), the
proof is as good as the code it runs with: a folder played by another release of sniff
may differ without being forged.
"""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from sim.audit.reproduce import first_difference
from sim.openings.folder import read_summary, table_files
from sim.openings.play import SLOTS_PER_DEAL, iter_openings, make_config

__all__ = ["replay_problem"]


def _played(config, deals: list[int]) -> pd.DataFrame:
    """The games rows of ``deals``, played again one deal at a time."""
    frames = [games for deal in deals
              for _, _, games in iter_openings(replace(config, deals=deal + 1), 1, 1, deal)]
    return pd.concat(frames, ignore_index=True)


def _recorded(paths: list[Path], deals: list[int]) -> pd.DataFrame:
    """The parts' rows of ``deals`` (row groups without them are skipped by their stats)."""
    import pyarrow.parquet as pq

    frames = [pq.read_table(path, filters=[("deal_id", "in", deals)]).to_pandas()
              for path in paths]
    return pd.concat(frames, ignore_index=True)


def replay_problem(folder: Path | str, count: int,
                   rng: np.random.Generator | None = None) -> tuple[int, int, str | None]:
    """Play the deals of ``count`` games chosen at random (without repeats; all of them if
    the folder holds fewer) again and compare their rows with the folder's games parts:
    ``(games replayed, games drawn, the first difference or None)``; a deal replayed is
    all its games. The folder's files are checked against ``summary.json`` first
    (``table_files``)."""
    folder = Path(folder)
    tables = table_files(folder)
    config = read_summary(folder)["config"]
    study = make_config(config["players"], config["strategies_from_leader"],
                        config["deals"], config["seed"], config["round_cap"])
    if count == 0 or "games" not in tables:
        return 0, 0, None
    rng = rng or np.random.default_rng(secrets.randbits(64))  # a forger cannot know which
    total = study.deals * SLOTS_PER_DEAL
    games = rng.choice(total, size=min(count, total), replace=False)
    deals = sorted({int(game) // SLOTS_PER_DEAL for game in games})
    played = pa.Table.from_pandas(_played(study, deals), preserve_index=False)
    recorded = pa.Table.from_pandas(_recorded(tables["games"], deals), preserve_index=False)
    difference = first_difference(played, recorded, "games", "sniff openings")
    return len(deals) * SLOTS_PER_DEAL, len(games), difference
