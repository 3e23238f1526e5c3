"""An openings output folder on disk: the games table in parts, the record, the checked reads.

Why a module of its own: the games of a long run (10^8 deals are 2.9 * 10^9 games) cannot
be held until the end, so they are written as they are played, in parts of ``PART_DEALS``
deals (``games/part-000000.parquet``, ...; each written whole by ``sim.files.write_atomic``,
so a part is there complete or not at all). ``summary.json`` is written last and records
every file (``rows``, ``bytes``, ``sha256``): a folder without it is not a result (a run that
was stopped), and every reader checks what it reads against it. :func:`table_files` is the
one way for other code (``sniff query``, reports) to find an openings folder's tables.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Literal, get_args

import pandas as pd

from sim.checks.footers import config_field, error_text
from sim.checks.integrity import (
    SET_ASIDE,
    absent_problem,
    file_problem,
    part_name,
    part_record,
)
from sim.errors import SniffError
from sim.files import (
    TEMP_SUFFIX,
    link_problem,
    link_problems,
    own_folder,
    read_regular,
    write_atomic,
)
from sim.openings.play import FORMAT, OpeningsConfig
from sim.store.lock import LOCK_NAME
from sim.version import __version__

SUMMARY = "summary.json"
TABLE = "openings.parquet"
PAIRS = "tile-pairs.csv"
GAMES_DIR = "games"
HEATMAP = "heatmap.png"  # recorded (size, sha256) in summary.json, as every output file
# How table_files checks each file against its record: its size, or its size and sha256
Check = Literal["size", "hash"]
CHECKS: tuple[Check, ...] = get_args(Check)
OUTPUT_FILES = (TABLE, HEATMAP, "ranking.md", SUMMARY, PAIRS)  # and games/
STUDY = "study.json"  # a study under way: what decides it (sim.openings.parts)
LEDGER = "parts.jsonl"  # and its finished parts, one line each
UNDER_WAY = (STUDY, LEDGER, SET_ASIDE)  # removed when it ends (set-aside/ is kept)
OWN_NAMES = (*OUTPUT_FILES, GAMES_DIR, *UNDER_WAY)  # what --overwrite may remove


def part_key(index: int) -> str:
    """A games part's name in the folder and in ``summary.json``'s ``files``."""
    return f"{GAMES_DIR}/{part_name(index)}"


def parquet_metadata(config: OpeningsConfig, command: str, table: str, **extra) -> dict:
    """What every Parquet file of the folder carries under the schema key ``sniff``."""
    return {"format": FORMAT, "version": __version__, "table": table, "command": command,
            "config": config.to_dict(), **extra}


def write_parquet(frame: pd.DataFrame, path: Path, metadata: dict) -> int:
    """Write ``frame`` whole (atomically) with ``metadata`` in its schema; its rows."""
    import pyarrow as pa

    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    return write_arrow(arrow, path, metadata)


def write_arrow(arrow, path: Path, metadata: dict) -> int:
    import pyarrow.parquet as pq

    schema_metadata = dict(arrow.schema.metadata or {})
    schema_metadata[b"sniff"] = json.dumps(metadata).encode()
    arrow = arrow.replace_schema_metadata(schema_metadata)
    write_atomic(path, lambda temporary: pq.write_table(arrow, temporary, compression="zstd"))
    return arrow.num_rows


def is_openings_file(path: Path) -> bool:
    """Whether ``path`` (an entry of a folder) is one an openings run writes: its outputs,
    its ``games/`` of parts, a temporary of either. ``--overwrite`` replaces a folder of
    these only (a run folder's ``manifest.json``, ``rounds/`` or own files are never)."""
    name = path.name
    if name == LOCK_NAME or (name.startswith(".") and name.endswith(TEMP_SUFFIX)):
        return True
    if name == GAMES_DIR and path.is_dir():
        return all(part.name.startswith(("part-", ".part-")) for part in path.iterdir())
    return name in OUTPUT_FILES or name in UNDER_WAY


def clear_outputs(folder: Path) -> None:
    """Remove what a previous run wrote here (``--overwrite``), the record first: a folder
    is never left vouching for files that are not its own. Only the openings files go."""
    folder = Path(folder)
    (folder / SUMMARY).unlink(missing_ok=True)
    for name in OUTPUT_FILES + (STUDY, LEDGER):
        (folder / name).unlink(missing_ok=True)
    parts = folder / GAMES_DIR
    if parts.is_dir():
        for path in parts.iterdir():
            if path.name.startswith(("part-", ".part-")) and (
                    path.name.endswith(".parquet") or ".parquet." in path.name
                    and path.name.endswith(TEMP_SUFFIX)):
                path.unlink()


class GamesParts:
    """The games table written as it is played: one part per ``part_deals`` deals.

    ``add(lo, hi, games)`` takes each chunk in deal order; a part is written once its last
    deal is in (chunks never straddle a part: ``sim.openings.play.chunk_ranges``), so at
    most one part's games (as Arrow, some 30 MB) are held. ``records`` are the parts'
    ``part_record`` entries for ``summary.json``.
    """

    def __init__(self, folder: Path, config: OpeningsConfig, part_deals: int,
                 command: str = "") -> None:
        self.folder = Path(folder)
        self.config = config
        self.part_deals = part_deals
        self.command = command
        self.pending: list = []
        self.first_deal: int | None = None
        self.records: dict[str, dict] = {}
        self.rows = 0

    def add(self, lo: int, hi: int, games: pd.DataFrame) -> None:
        import pyarrow as pa

        if self.first_deal is None:
            self.first_deal = lo
        self.pending.append(pa.Table.from_pandas(games, preserve_index=False))
        if hi % self.part_deals == 0 or hi == self.config.deals:
            self._write(hi)

    def _write(self, end_deal: int) -> None:
        import pyarrow as pa

        first_deal = self.first_deal
        assert first_deal is not None  # set by the add that has a part to write
        index = first_deal // self.part_deals
        path = self.folder / part_key(index)
        own_folder(path.parent, GAMES_DIR)  # never a link out of the folder
        metadata = parquet_metadata(self.config, self.command, "games", part=index,
                                    first_deal=first_deal, end_deal=end_deal)
        rows = write_arrow(pa.concat_tables(self.pending), path, metadata)
        self.records[part_key(index)] = part_record(path, rows)
        self.rows += rows
        self.pending, self.first_deal = [], None


# --- reading


MAX_SUMMARY = 16 * 2**20  # a summary is kilobytes, with one record per games part


def read_summary(folder: Path) -> dict:
    """``summary.json`` of an openings folder, or a one-line ``SniffError``."""
    path = Path(folder) / SUMMARY
    try:  # bounded and never blocking, whatever the folder holds
        summary = json.loads(read_regular(path, MAX_SUMMARY, SUMMARY))
    except FileNotFoundError:
        raise SniffError(f"{folder} has no {SUMMARY}: not a finished sniff openings "
                         "folder (a run stopped before the end writes none)") from None
    except IsADirectoryError:
        raise SniffError(f"{path} is a folder: the openings folder is damaged") from None
    except (OSError, ValueError, RecursionError) as error:
        raise SniffError(f"cannot read {path}: {str(error).splitlines()[0]}") from None
    if not isinstance(summary, dict) or "config" not in summary or summary.get(
        "format", FORMAT
    ) != FORMAT:
        raise SniffError(f"{path} is not the summary of a sniff openings folder")
    if (problem := _shape_problem(summary)) is not None:
        raise SniffError(f"{path}: {problem}; the openings folder is damaged or was edited")
    return summary


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _figures(value, keys) -> bool:
    return isinstance(value, dict) and all(_number(value.get(k)) for k in keys)


INTERVAL = ("mean", "low", "high")


def _shape_problem(summary: dict) -> str | None:
    """The first figure of ``summary.json`` that is not of the shape an openings run writes
    (what reports print from it), or None."""
    half = summary.get("median_half_width")
    unforced = summary.get("unforced")
    checks = {
        "config": isinstance(summary["config"], dict),
        "deals": isinstance(summary.get("deals"), int) and not isinstance(summary["deals"],
                                                                          bool),
        "games": isinstance(summary.get("games"), int) and not isinstance(summary["games"],
                                                                          bool),
        "lead_value": _figures(summary.get("lead_value"), INTERVAL),
        "unforced": isinstance(unforced, dict) and _figures(unforced.get("p_win"), INTERVAL),
        "average_tile": _figures(summary.get("average_tile"), ("differential", "p_win")),
        "median_half_width": isinstance(half, dict) and all(
            _figures(half.get(k), ("plain", "paired")) for k in ("differential", "p_win")),
        "files": isinstance(summary.get("files", {}), dict),
    }
    bad = next((name for name, good in checks.items() if not good), None)
    if bad is None:
        return None
    text = json.dumps(summary.get(bad))
    return f"its {bad} is {text if len(text) <= 60 else text[:57] + '...'}, which no run writes"


PART_KEY = re.compile(rf"{GAMES_DIR}/part-(\d{{6}})\.parquet")


def _recorded(summary: dict, folder: Path) -> dict[str, dict]:
    """``summary.json``'s record of the files, checked before any name in it is opened:
    only the folder's own file names (no path leads out of it), and the games parts
    numbered 0, 1, ... without a gap, their rows adding up to the run's games."""
    files = summary.get("files")
    where = Path(folder) / SUMMARY
    if files is None:  # every version that writes summary.json records them
        raise SniffError(f"{where}: records no files (every openings folder sniff writes "
                         "records its files' sizes and sha256); the summary was edited or is "
                         "not sniff's")
    if not isinstance(files, dict) or not all(isinstance(v, dict) for v in files.values()):
        raise SniffError(f"{where}: its files record is not a table of files")
    unrecorded = [name for name in (TABLE, PAIRS, HEATMAP) if name not in files] + (
        [] if any(PART_KEY.fullmatch(name) for name in files) else [f"{GAMES_DIR}/"])
    if unrecorded:
        raise SniffError(f"{where}: records no {unrecorded[0]} (every openings folder sniff "
                         "writes records it); the summary was edited or is not sniff's")
    numbers = []
    for name in files:
        match = PART_KEY.fullmatch(name)
        if match is None and name not in (TABLE, PAIRS, HEATMAP):
            raise SniffError(f"{where}: records a file that is not an openings file: {name!r}")
        if match is not None:
            numbers.append(int(match.group(1)))
    if sorted(numbers) != list(range(len(numbers))):
        raise SniffError(f"{where}: the recorded games parts are not numbered 0.."
                         f"{len(numbers) - 1} without a gap")
    rows = [files[name].get("rows") for name in files if PART_KEY.fullmatch(name)]
    games = summary.get("games")
    if rows and (not all(isinstance(r, int) for r in rows) or sum(rows) != games):
        raise SniffError(f"{where}: its games parts' rows do not add up to its {games} games")
    return files


NOT_FIGURES = ("format", "command", "version", "created_at", "files")  # summary.json's own


def summary_problem(folder: Path, summary: dict, files: dict) -> str | None:
    """What in ``summary.json`` disagrees with the tables it vouches for, or None.

    The record binds the files' bytes; this binds the summary's figures and configuration
    the other way: ``openings.parquet`` carries the summary it was written with, and every
    games part the configuration, in their Parquet footers. So an edited summary (a seed,
    a strategy, the best tile) is one line naming the field."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    stated = {k: v for k, v in summary.items() if k not in NOT_FIGURES}
    for name in [TABLE, *game_part_keys(files)]:
        try:
            raw = (pq.read_metadata(folder / name).metadata or {}).get(b"sniff")
            meta = json.loads(raw) if raw else {}
        except (OSError, ValueError, pa.ArrowException) as error:
            return f"{folder / name}: not a readable Parquet file ({error_text(error)})"
        recorded = meta.get("summary") if name == TABLE else None
        if name == TABLE and not isinstance(recorded, dict):
            return (f"{folder / name}: its footer carries no summary of the run (every "
                    "openings table sniff writes carries one); the table is not sniff's")
        if isinstance(recorded, dict):
            key = config_field({k: v for k, v in recorded.items() if k not in NOT_FIGURES},
                               stated)
        elif "config" in meta:
            key = config_field({"config": meta["config"]}, {"config": summary.get("config")})
        else:
            return (f"{folder / name}: its footer carries no configuration (every games "
                    "part sniff writes carries one); the part is not sniff's")
        if key is not None:
            return (f"{folder / SUMMARY}: its {key} does not match {folder / name}, which "
                    "was written with the run; the summary was edited afterwards")
    return None


def _size_problem(folder: Path, name: str, record: dict) -> str | None:
    path = Path(folder) / name
    if (absent := link_problem(folder, name) or absent_problem(path)) is not None:
        return absent
    if path.stat().st_size != record.get("bytes"):
        return f"{path}: its size differs from the record in {SUMMARY}"
    return None


def game_part_keys(files: dict[str, dict]) -> list[str]:
    """The recorded games parts, in deal order (their names are zero-padded)."""
    prefix = GAMES_DIR + "/"
    return sorted(name for name in files if name.startswith(prefix))


def table_files(folder: Path | str, check: Check = "hash") -> dict[str, list[Path]]:
    """The tables of an openings folder by name, each as the files that hold it, checked.

    For readers that go to the files themselves (``sniff query``'s DuckDB views, reports):

    - ``"openings"``: ``[openings.parquet]``, the per-tile table (28 rows);
    - ``"games"``: the games table, one row per game in game id order, as its parts in
      deal order (``games/part-000000.parquet``, ...; read them together, e.g.
      ``read_parquet([...])``);
    - ``"pairs"``: ``[tile-pairs.csv]``, tile against tile.

    Every file listed is one ``summary.json`` records, checked against its record before
    it is returned: ``check="hash"`` (the default, what ``sniff report`` does) compares
    size and sha256, ``"size"`` the size alone (for a quick look at a big folder). A
    games part in ``games/`` that is not recorded (left by another run) is refused too:
    a reader that globs the folder would read it. Anything wrong is one ``SniffError``
    naming the file. A folder from before the record (no ``files``) is listed unchecked.
    """
    if check not in CHECKS:
        raise ValueError(f"check must be one of {CHECKS}, got {check!r}")
    folder = Path(folder)
    summary = read_summary(folder)
    files = _recorded(summary, folder)
    problem = (lambda name: file_problem(folder, name, files)) if check == "hash" else (
        lambda name: _size_problem(folder, name, files[name]) if name in files else None)
    parts = game_part_keys(files)
    if files:
        stray = sorted(set(_parts_on_disk(folder)) - set(parts))
        if stray:
            raise SniffError(f"{folder / stray[0]}: a games part that {SUMMARY} does not "
                             "record (not written with this folder's run)")
    tables: dict[str, list[Path]] = {}
    for table, names in (("openings", [TABLE]),
                         ("games", parts),
                         ("pairs", [PAIRS])):
        present = [name for name in names if name in files or (folder / name).is_file()]
        for name in present:
            if (message := problem(name)) is not None:
                raise SniffError(message)
        if present:
            tables[table] = [folder / name for name in present]
    if "openings" not in tables:
        raise SniffError(f"{folder} holds no {TABLE} (not a sniff openings folder)")
    if files and (message := summary_problem(folder, summary, files)) is not None:
        raise SniffError(message)
    return tables


def _parts_on_disk(folder: Path) -> list[str]:
    directory = Path(folder) / GAMES_DIR
    if not directory.is_dir():
        return []
    return [f"{GAMES_DIR}/{path.name}" for path in directory.iterdir()
            if path.name.endswith(".parquet") and not path.name.startswith(".")]


def folder_problems(folder: Path | str) -> tuple[int, int, list[str]]:
    """``sniff verify`` of an openings folder: (files recorded, of them sound, one line per
    problem): every recorded file hashed against ``summary.json``, and a games part that the
    record does not name is a problem too (a reader globbing ``games/`` would take it)."""
    folder = Path(folder)
    try:
        summary = read_summary(folder)
        files = _recorded(summary, folder)
    except SniffError as error:  # a record not to be followed is the folder's one problem
        return 0, 0, [str(error)]
    problems = [p for p in (file_problem(folder, name, files) for name in files) if p]
    if not problems and (message := summary_problem(folder, summary, files)):
        problems.append(message)
    sound = len(files) - len(problems)
    # a games/ that is a link is named once, not once per part under it
    problems = link_problems(folder, {SUMMARY: SUMMARY, "ranking.md": "ranking.md"}) + list(
        dict.fromkeys(problems))
    recorded = set(game_part_keys(files))
    problems += [f"{folder / name}: not recorded in {SUMMARY} (not written with this "
                 "folder's run)" for name in sorted(_parts_on_disk(folder))
                 if files and name not in recorded]
    return len(files), sound, problems


def is_openings_folder(path: object) -> bool:
    """Whether ``path`` is a ``sniff openings`` output folder (its manifest, summary.json,
    beside openings.parquet), so ``sniff report FOLDER`` can tell it from a run folder."""
    if not isinstance(path, str | Path):
        return False
    folder = Path(path)
    if not (folder / TABLE).is_file() or not os.path.lexists(folder / SUMMARY):
        return False
    try:
        record = json.loads(read_regular(folder / SUMMARY, MAX_SUMMARY, SUMMARY))
    except (OSError, ValueError, RecursionError):  # a FIFO, a device, too big, not JSON:
        return True  # an openings folder whose summary its readers refuse, saying why
    # a summary of another shape ([], no config) too: named by its readers, never taken
    # for a run without a manifest; only another format (a later version's) is not ours
    return not isinstance(record, dict) or record.get("format", FORMAT) == FORMAT


def load_openings(folder: Path | str) -> tuple[pd.DataFrame, dict]:
    """``openings.parquet`` and ``summary.json`` of an openings output folder."""
    folder = Path(folder)
    if not (folder / TABLE).is_file():
        raise SniffError(f"{folder} holds no {TABLE} (not a sniff openings folder)")
    import pyarrow as pa

    try:
        summary = read_summary(folder)
        files = _recorded(summary, folder)  # none recorded is one line, never "older"
        problem = file_problem(folder, TABLE, files) or summary_problem(folder, summary, files)
        if problem:
            raise SniffError(problem)
        table = pd.read_parquet(folder / TABLE)
    except (OSError, ValueError, pa.ArrowException) as error:
        raise SniffError(f"cannot read the openings folder {folder}: "
                         f"{str(error).splitlines()[0]}") from None
    missing = [c for c in ("tile", "low", "high", "rank", "differential") if c not in table]
    if missing:
        raise SniffError(f"{folder}/{TABLE} lacks column(s) {', '.join(missing)}: "
                         "not a sniff openings table")
    if not isinstance(summary, dict) or "config" not in summary:
        raise SniffError(f"{folder}/{SUMMARY} has no run configuration: not a sniff "
                         "openings folder")
    table.attrs["summary"] = summary
    return table, summary


def read_games(folder: Path | str, columns: list[str] | None = None) -> pd.DataFrame:
    """The whole games table of a folder (its checked parts read together), for small runs
    and tests: a big run's games are for streaming readers (``table_files``)."""
    import pyarrow.parquet as pq

    paths = table_files(folder).get("games")
    if not paths:
        raise SniffError(f"{folder} holds no games table")
    return pd.concat([pq.read_table(path, columns=columns).to_pandas() for path in paths],
                     ignore_index=True)


__all__ = [
    "folder_problems", "GAMES_DIR", "HEATMAP", "is_openings_folder", "load_openings",
    "read_summary", "STUDY", "table_files",
]
