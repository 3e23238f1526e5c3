"""An analysis folder on disk: its record, its parts and ledger, and the result files.

Layout (docs/analyze.md)::

    analysis.json           what the analysis values and how (settings, sources, the games
                            sampled, the search's code), its status; written first
    parts.jsonl             the ledger: one line per finished part (file, rows, bytes, sha256)
    decisions/part-N.parquet  every analysed decision of part N's games
    curve/part-N.parquet      their budget-curve rows (with --budget-curve)
    summary.json            every figure, and each result file's size and sha256; written last
    strategies.csv, phases.csv, kinds.csv, players.csv, curve.csv, costliest.md,
    positions/NN.txt        the tables and the costliest positions (sniff hint reads them)

A part is finished once its line is in the ledger, so a stop loses at most the part under
way, and ``--resume`` plays only the parts not recorded (or whose file changed: set aside).
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from sim.analyze.table import TABLES, arrow_table
from sim.checks.integrity import (
    append_record,
    file_problem,
    part_name,
    part_record,
    read_ledger,
    set_aside,
)
from sim.errors import SniffError
from sim.files import own_folder, read_regular, write_atomic

FORMAT = "sniff-analyze/1"
RECORD = "analysis.json"
LEDGER = "parts.jsonl"
SUMMARY = "summary.json"
# the CSV tables an analysis writes: its losses by strategy, phase, kind and player, the curve
CSV_FILES = ("strategies.csv", "phases.csv", "kinds.csv", "players.csv", "curve.csv")
POSITIONS = "positions"
COSTLIEST = "costliest.md"
OWN_NAMES = (RECORD, LEDGER, SUMMARY, *CSV_FILES, POSITIONS, COSTLIEST, *TABLES, "set-aside")
MAX_RECORD = 64 * 2**20


def is_analysis_folder(path: Path) -> bool:
    """Whether a folder is an analysis (it holds the analysis's record)."""
    return (Path(path) / RECORD).is_file()


def check_folder(folder: Path, overwrite: bool) -> None:
    """A new analysis goes into an absent or empty folder, or (``overwrite``) replaces an
    analysis's own files; anything else is one line."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise SniffError(f"{folder} is a file; give a folder for the analysis")
    if not folder.exists() or not any(folder.iterdir()):
        return
    if not overwrite:
        raise SniffError(f"{folder} is not empty: give another --out, --overwrite to replace "
                         "an analysis there, or --resume to complete it")
    strangers = [entry.name for entry in folder.iterdir() if entry.name not in OWN_NAMES]
    if strangers or not is_analysis_folder(folder):
        raise SniffError(f"{folder} holds files that are not an analysis's "
                         f"({', '.join(sorted(strangers)[:3]) or 'no ' + RECORD}): "
                         "--overwrite replaces only an analysis folder")
    for name in OWN_NAMES:
        path = folder / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif os.path.lexists(path):
            path.unlink()


def write_json(path: Path, data: dict) -> None:
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    write_atomic(path, lambda temporary: temporary.write_text(text, encoding="utf-8"))


def start_record(folder: Path, record: dict) -> None:
    """``analysis.json`` of a new analysis (status running)."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    write_json(Path(folder) / RECORD, {"format": FORMAT, **record, "status": "running",
                                       "started_at": stamp})


def read_record(folder: Path) -> dict:
    """``analysis.json``, or one line saying why it cannot be read."""
    path = Path(folder) / RECORD
    if not path.is_file():
        raise SniffError(f"nothing to resume: {folder} holds no analysis (no {RECORD})")
    try:
        record = json.loads(read_regular(path, MAX_RECORD, RECORD).decode("utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        raise SniffError(f"{path} is damaged ({error})") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise SniffError(f"{path} is not a record of sniff analyze ({FORMAT})")
    return record


def set_status(folder: Path, status: str, **more) -> None:
    """Write an analysis's status (and any other fields given) into its record."""
    record = read_record(folder)
    record.update(status=status, **more)
    write_json(Path(folder) / RECORD, record)


def part_key(table: str, index: int) -> str:
    return f"{table}/{part_name(index)}"


def write_part(folder: Path, index: int, bounds: tuple[int, int],
               tables: dict[str, list[dict]]) -> dict:
    """Write one part's tables atomically; its ledger record (not yet appended)."""
    import pyarrow.parquet as pq

    parts = {}
    for name, rows in tables.items():
        path = Path(folder) / part_key(name, index)
        own_folder(path.parent, name)
        arrow = arrow_table(name, rows)
        write_atomic(path, partial(pq.write_table, arrow, compression="zstd"))
        parts[name] = part_record(path, arrow.num_rows)
    return {"chunk": index, "first_game": bounds[0], "end_game": bounds[1], "parts": parts}


def finish_part(folder: Path, record: dict) -> None:
    append_record(folder, record)


def sound_parts(folder: Path, bounds: list[tuple[int, int]], alert) -> dict[int, dict]:
    """The recorded parts whose files are as recorded; a changed file is set aside (said
    through ``alert``) and its part played again."""
    sound = {}
    for index, record in read_ledger(folder, len(bounds)).items():
        if index >= len(bounds) or (record.get("first_game"), record.get("end_game")) != \
                bounds[index]:
            continue
        parts = record.get("parts") or {}
        problems = [file_problem(folder, part_key(name, index),
                                 {part_key(name, index): part}, LEDGER)
                    for name, part in parts.items()]
        if parts and not any(problems):
            sound[index] = record
            continue
        for name in parts:
            path = Path(folder) / part_key(name, index)
            if path.is_file():
                set_aside(folder, path)
        alert(f"part {index}: {next(p for p in problems if p)}; analysed again")
    return sound


def part_files(folder: Path, table: str, records: dict[int, dict]) -> list[Path]:
    return [Path(folder) / part_key(table, index) for index in sorted(records)
            if table in records[index].get("parts", {})]


def table_files(folder: Path) -> dict[str, list[Path]]:
    """The tables ``sniff query`` may name in an analysis folder: its recorded parts."""
    folder = Path(folder)
    read_record(folder)
    records = read_ledger(folder)
    for index, record in records.items():
        for name, part in (record.get("parts") or {}).items():
            key = part_key(name, index)
            if (problem := file_problem(folder, key, {key: part}, LEDGER)) is not None:
                raise SniffError(problem)
    return {name: files for name in TABLES if (files := part_files(folder, name, records))}


def read_tables(folder: Path, records: dict[int, dict]):
    """The decisions and curve tables of the recorded parts, as DataFrames."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    frames = {}
    for name in TABLES:
        files = part_files(folder, name, records)
        tables = [pq.read_table(path) for path in files]
        frames[name] = (pa.concat_tables(tables).to_pandas() if tables
                        else arrow_table(name, []).to_pandas())
    return frames["decisions"], frames["curve"]


__all__ = ["check_folder", "is_analysis_folder", "read_record", "set_status", "table_files"]
