"""What one part's Parquet footer and pages must say, checked without its ledger.

Every part (``NAME/games/part-NNNNNN.parquet``, ``NAME/rounds/...``) carries in its footer
the run, table, chunk, games and configuration it was written for: a part copied from
another run, another chunk or a manifest edited afterwards is found from the footer alone
(``sim.checks.integrity`` adds the ledger's sizes and hashes). ``decode_problem`` reads
every page, with its checksum, for ``sniff verify``.
"""

from __future__ import annotations

import json
from pathlib import Path

from sim.core.seating import team_count

__all__ = ["config_field", "error_text", "read_footer", "required_columns"]


def error_text(error: BaseException) -> str:
    """A library's error message on one line (Arrow's span several)."""
    return " ".join(str(error).split())


def read_footer(path: Path) -> tuple[int, dict]:
    """A part's rows and the ``sniff`` metadata its footer carries (empty when none)."""
    import pyarrow.parquet as pq

    metadata = pq.read_metadata(path)
    raw = (metadata.metadata or {}).get(b"sniff")
    return metadata.num_rows, json.loads(raw) if raw else {}


def config_field(recorded: object, stated: object) -> str | None:
    """The first field (sorted) in which a part's recorded configuration and the manifest's
    disagree, or None: every part's footer carries the configuration it was played with,
    so a manifest edited afterwards (labels swapped, players, seed) does not match it.
    Either may be anything a JSON file holds: what is not a table differs as ``config``."""
    if not isinstance(recorded, dict) or not isinstance(stated, dict):
        return "config"
    for key in sorted(set(recorded) | set(stated)):
        if key not in recorded or key not in stated or recorded[key] != stated[key]:
            inner = recorded.get(key), stated.get(key)
            if all(isinstance(value, dict) for value in inner):
                return f"{key}.{config_field(*inner)}"
            return key
    return None


CONFIG_MISMATCH = "records another configuration"  # the start of that problem's reason

GAME_COLUMNS = ["game_id", "deal_id", "rotation", "players", "first_leader", "winner_team",
                "winner_side", "rounds", "cap_hit"]
ROUND_COLUMNS = ["game_id", "round_number", "end_reason", "domino_seat"]


def required_columns(players: int) -> dict[str, list[str]]:
    """The columns of each table that a report reads (for the run's player count)."""
    teams = team_count(players)
    return {
        "games": GAME_COLUMNS + [f"team{t}_score" for t in range(teams)]
        + [f"seat{s}_strategy" for s in range(players)],
        "rounds": ROUND_COLUMNS + [f"team{t}_points" for t in range(teams)]
        + [f"team{t}_score" for t in range(teams)]
        + [f"seat{s}_penalty" for s in range(players)],
    }


def identity_problem(path: Path, table: str, chunk: int, lo: int, hi: int,
                     run_id: str | None, rows: int | None,
                     config: dict | None = None) -> str | None:
    """What is wrong with a part's footer for ``chunk`` (games lo..hi-1), or None.
    ``config``: the manifest's, checked against the one the footer carries."""
    import pyarrow as pa

    try:
        num_rows, meta = read_footer(path)
    except (OSError, ValueError, pa.ArrowException) as error:
        return f"not a readable Parquet file ({error_text(error)})"
    info = meta.get("chunk") or {}
    if meta.get("run_id") != run_id:
        return f"belongs to another run ({meta.get('run_id')}, not {run_id})"
    if config is not None and "config" in meta and (
            key := config_field(meta["config"], config)) is not None:
        recorded = meta["config"].get(key) if isinstance(meta["config"], dict) else None
        return (f"{CONFIG_MISMATCH} than manifest.json: config.{key} is {_short(recorded)} "
                f"in the parts, {_short(config.get(key))} in the manifest")
    if meta.get("table", table) != table:
        return f"is a {meta.get('table')} part, not a {table} part"
    if (info.get("index"), info.get("first_game"), info.get("end_game")) != (chunk, lo, hi):
        return (f"holds chunk {info.get('index')} (games {info.get('first_game')}.."
                f"{_last(info.get('end_game'))}), not chunk {chunk} (games {lo}..{hi - 1})")
    want = hi - lo if table == "games" else rows
    if want is not None and num_rows != want:
        return f"has {num_rows:,} rows, not {want:,}"
    return None


def _short(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _last(end) -> str:
    return str(end - 1) if isinstance(end, int) else "?"


def decode_problem(path: Path, table: str, lo: int, hi: int,
                   config: dict | None = None) -> str | None:
    """Decode every page (checking its checksum), the columns readers need (of a run of
    ``config``'s players) and the game ids against the chunk."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        data = pq.read_table(path, page_checksum_verification=True)
    except (OSError, ValueError, pa.ArrowException) as error:
        return f"its content cannot be decoded ({error_text(error)})"
    players = (config or {}).get("players")
    if isinstance(players, int) and (missing := [
            c for c in required_columns(players)[table] if c not in data.column_names]):
        return (f"lacks column(s) {', '.join(missing)} (not the {table} table sniff writes: "
                "rewritten)")
    ids = np.asarray(data.column("game_id").to_numpy()) if "game_id" in data.column_names \
        else None
    if ids is None:
        return "has no game_id column"
    if table == "games":
        if not np.array_equal(ids, np.arange(lo, hi)):
            return f"its game ids are not {lo}..{hi - 1} in order"
    elif ids.size and (ids.min() < lo or ids.max() >= hi or np.any(np.diff(ids) < 0)):
        return f"its rounds are not of games {lo}..{hi - 1} in order"
    return None
