"""Run folders of ``sniff simulate``: Parquet tables, atomic parts, the manifest, loading.

A run folder holds two Parquet datasets and a manifest::

    NAME/manifest.json                 run configuration, sessions, status, summary
    NAME/games/part-000000.parquet     one row per game, chunk 0
    NAME/rounds/part-000000.parquet    one row per round, chunk 0
    ...

Chunk ``c`` holds the games ``c * chunk_size`` up to the next chunk, in game id order, so
the parts read in name order give the rows sorted by game id (and round). A part is written
to a temporary file in ``NAME/.partial/`` and renamed into place, so a part either exists
whole or not at all; a chunk is finished when its parts are recorded in the run's ledger
(``sim.checks.integrity``), and every reader checks the parts against it. Every column is
documented in docs/data-format.md (tests check that the two agree).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sim.checks.footers import error_text  # noqa: F401 (part of sim.store.io's API)
from sim.checks.integrity import (  # noqa: F401 (part of sim.store.io's API)
    TABLES,
    part_name,
    tables_for,
    tables_of,
)
from sim.errors import SettingError, SniffError
from sim.files import (
    TEMP_SUFFIX,
    UnsafeFile,
    own_folder,
    place_new,
    read_regular,
    refuse_links,
    write_atomic,
)
from sim.store.scan import read_part  # noqa: F401 (part of sim.store.io's API)
from sim.store.summary import Summary, summary_columns
from sim.store.tables import games_table, rounds_table  # noqa: F401 (sim.store.io's API)

__all__ = [
    "clear_run", "COMPRESSION", "error_text", "FORMAT", "games_table", "is_run_folder", "load",
    "MANIFEST", "mark_running", "METADATA_KEY", "open_run", "parquet_options", "part_files",
    "part_name", "PARTIAL_DIR", "read_manifest", "remove_temporaries", "rounds_table", "Run",
    "summary_part", "tables_for", "tables_of", "with_metadata", "write_bytes", "write_chunk",
    "write_json"
]

FORMAT = "sniff-simulate/1"
MANIFEST = "manifest.json"
METADATA_KEY = b"sniff"
PARTIAL_DIR = ".partial"  # temporary parts, before their rename into games/ and rounds/
COMPRESSION = "lz4"
STATISTICS_COLUMNS = ("game_id", "deal_id", "round_number")


# --- building the tables from a played batch


def with_metadata(table: pa.Table, metadata: dict) -> pa.Table:
    """The table with the run's metadata (JSON under the key ``sniff``) in its schema."""
    return table.replace_schema_metadata({METADATA_KEY: json.dumps(metadata).encode()})


# --- writing


def parquet_options(schema: pa.Schema) -> dict:
    """How parts are encoded: integers byte-stream-split, labels as dictionaries, LZ4.

    On a rounds part, faster to write than Parquet's default (a dictionary
    tried on every column, statistics on every column) and a tenth smaller. Byte-stream-
    split integers need a reader of Parquet format 2.11 (pyarrow 17 or newer). LZ4 (raw)
    rather than zstd: 20-25% less CPU per round row written (4-player greedy, pyarrow 26,
    interleaved medians) for 16 instead of 9 bytes per round on disk; writing is what
    ``simulate`` pays beside the engine, and a billion rounds still fit in 17 GB.
    """
    integers = [f.name for f in schema if pa.types.is_integer(f.type)]
    labels = [f.name for f in schema if pa.types.is_dictionary(f.type)]
    return {
        "compression": COMPRESSION,
        "use_dictionary": labels,
        "column_encoding": dict.fromkeys(integers, "BYTE_STREAM_SPLIT"),
        # Min/max statistics where readers filter on them (a game's or a round's rows).
        "write_statistics": [name for name in STATISTICS_COLUMNS if name in schema.names],
        # A CRC-32 per page, verified by every read of ``Run``: a changed byte is an error
        # naming the part, never a wrong number (or a raw "Corrupt Lz4 compressed data").
        "write_page_checksum": True,
    }


def _write_parquet_temp(table: pa.Table, path: Path) -> Path:
    # Outside the table folders, so that even a reader that takes every file of a folder
    # (polars does) never meets one; same file system, so the rename stays atomic. Unique
    # per attempt: two processes writing the same part (a Dask task retried after its
    # worker was lost, the lost one still running) never share a temporary file; both
    # rename the same content to the same final name.
    temporary = path.parent.parent / PARTIAL_DIR / (
        f"{path.parent.name}-{path.name}.{uuid.uuid4().hex[:16]}{TEMP_SUFFIX}")
    own_folder(temporary.parent, PARTIAL_DIR)  # a real folder of the run, never a link out
    try:
        with open(temporary, "xb") as handle:
            pq.write_table(table, handle, **parquet_options(table.schema))
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return temporary


def write_chunk(folder: Path, chunk: int, tables: dict[str, pa.Table],
                exclusive: bool = False) -> dict[str, dict]:
    """Write a chunk's parts (``tables``: both, or games alone) atomically: all appear, or
    none does. Returns each part's record (``sim.checks.integrity.part_record``) for the ledger.

    Each part goes to a temporary file first; the renames come last (rounds, then games),
    and a failure or interrupt in between takes the renamed part away again.
    ``exclusive`` (a Dask task: a lost worker may still write the same chunk) never
    replaces a part: one already there stays, and the record is of it, so the ledger always
    describes the bytes on disk (the two writes hold the same games; only the timing in
    their metadata differs).
    """
    from sim.checks.integrity import part_record

    records: dict[str, dict] = {}
    temporaries: dict[str, Path] = {}
    renamed: list[Path] = []
    order = [name for name in ("rounds", "games") if name in tables]
    try:
        for name in order:
            own_folder(folder / name, name)  # a table folder never carries a part out of the run
            temporaries[name] = _write_parquet_temp(tables[name], folder / name / part_name(chunk))
            # Hashed from the page cache before the rename: the bytes the ledger vouches for.
            records[name] = {**part_record(temporaries[name], tables[name].num_rows),
                             "file": part_name(chunk)}
        for name in order:
            final = folder / name / part_name(chunk)
            if exclusive and not place_new(temporaries.pop(name), final):
                records[name] = part_record(final, tables[name].num_rows)
                continue
            if not exclusive:
                os.replace(temporaries.pop(name), final)
            renamed.append(final)
    except BaseException:
        for path in list(temporaries.values()):
            path.unlink(missing_ok=True)
        if len(renamed) < len(order):
            for path in renamed:
                path.unlink(missing_ok=True)
        raise
    return records


def write_json(path: Path, data: dict) -> None:
    """Write JSON atomically (temporary file, then rename)."""
    write_bytes(path, (json.dumps(data, indent=2) + "\n").encode())


def write_bytes(path: Path, data: bytes) -> None:
    """Write a whole file atomically (``sim.files.write_atomic``): a Parquet table or a
    PNG built in memory, and JSON."""
    write_atomic(Path(path), lambda temporary: temporary.write_bytes(data))


MAX_MANIFEST = 64 * 2**20  # a manifest is kilobytes; a tournament's, with every pairing, more


def read_manifest(folder: Path, name: str = MANIFEST, expected: str = FORMAT,
                  what: str = "run") -> dict:
    """A folder's JSON manifest, checked for its format (also a tournament's, by its names)."""
    path = Path(folder) / name
    try:  # bounded and never blocking, whatever the folder holds (a FIFO, /dev/zero)
        manifest = json.loads(read_regular(path, MAX_MANIFEST, f"{what} manifest"))
    except FileNotFoundError:
        raise SniffError(f"{folder} is not a sniff {what}: it has no {name}") from None
    except IsADirectoryError:
        raise SniffError(f"{path} is a folder: the {what} folder is damaged") from None
    except UnsafeFile as error:
        raise SniffError(f"{error}: the {what} folder is damaged") from None
    except OSError as error:
        raise SniffError(f"cannot read {path}: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise SniffError(f"{path} is not valid JSON (or over {MAX_MANIFEST // 2**20} MiB): "
                         f"the {what} folder is damaged") from None
    if not isinstance(manifest, dict) or manifest.get("format") != expected:
        raise SniffError(f"{path} is not a {expected} manifest")
    if expected == FORMAT:  # a run's: every field a reader uses, of the shape runs write
        from sim.checks.shape import check_run_manifest

        check_run_manifest(manifest, path)
    from sim.store.lock import writer_alive

    if manifest.get("status") == "running" and not writer_alive(Path(folder), manifest):
        # Killed without a chance to record it (SIGKILL, a power cut): nobody plays it now.
        manifest["status"] = "interrupted"
    return manifest


def mark_running(manifest: dict) -> None:
    """Set status ``running`` and name the process that holds the folder (its lock, in
    ``sim.store.lock``, is what tells a live run from one whose process was killed)."""
    manifest["status"] = "running"
    manifest["owner"] = {"host": socket.gethostname(), "pid": os.getpid()}


def is_run_folder(folder: Path) -> bool:
    """Whether a folder holds a readable run manifest."""
    try:
        read_manifest(folder)
    except SniffError:
        return False
    return True


def remove_temporaries(folder: Path) -> None:
    """Delete temporary files a killed process may have left (never a finished part)."""
    partial = folder / PARTIAL_DIR
    if partial.is_symlink() or (partial.exists() and not partial.is_dir()):
        own_folder(partial, PARTIAL_DIR)  # refused in one line: never emptied through a link
    if partial.is_dir():
        shutil.rmtree(partial)
    for path in folder.glob("." + "*" + TEMP_SUFFIX):
        path.unlink(missing_ok=True)


def clear_run(folder: Path) -> None:
    """Remove a run's own files (manifest, ledger and both tables); anything else (parts a
    resume set aside) is left alone."""
    from sim.checks.integrity import LEDGER

    refuse_links(folder, (*TABLES, LEDGER, MANIFEST, PARTIAL_DIR), "this run")
    for name in TABLES:
        if (folder / name).exists():
            shutil.rmtree(folder / name)
    (folder / LEDGER).unlink(missing_ok=True)
    (folder / MANIFEST).unlink(missing_ok=True)
    remove_temporaries(folder)


# --- reading


def part_files(folder: Path, table: str) -> list[Path]:
    """A run table's Parquet parts, in chunk order."""
    return sorted((Path(folder) / table).glob("part-*.parquet"))


def summary_part(folder: Path, name: str, config: dict) -> list[pa.Table]:
    """The columns the summary reads of one chunk's parts (``name``: the part's file name):
    of the games part and, unless the run kept none, of the rounds part."""
    tables = tables_of(config)
    columns = summary_columns(config["players"], "rounds" in tables)
    return [read_part(folder / table / name, columns[table]) for table in tables]


def summarise_folder(folder: Path, manifest: dict, checked=None) -> Summary:
    """Recompute a run's summary from its finished parts (streaming, chunk by chunk);
    ``checked`` (``sim.checks.integrity.Checked``): the parts already checked."""
    from sim.checks.integrity import check_run, require_sound

    config = manifest["config"]
    summary = Summary(config["players"], config["labels"], config["deal_group"],
                      config["round_cap"])
    if checked is None:
        checked = check_run(folder, manifest)
        require_sound(checked, manifest)
    for path in checked.parts("games"):
        summary.add_tables(*summary_part(folder, path.name, config))
    summary.folder = folder
    summary.tables = tables_of(config)
    summary.stopped = manifest.get("stopped")
    return summary


class Run:
    """A finished (or partly finished) run: its tables as pandas DataFrames, lazily.

    ``games`` and ``rounds`` read the whole table into memory on first use (and refuse, in
    one line, a table the memory available cannot hold); for big runs use ``query(SQL)``
    (DuckDB over the checked parts, streamed), ``dataset("games")`` (a
    ``pyarrow.dataset.Dataset``: filter and project before loading), or ``summary``.
    ``tables`` holds the tables of an in-memory run (``path`` None); ``summary`` the one
    its simulation kept (else it is recomputed from the parts when first asked for).
    """

    def __init__(self, path: Path | None, manifest: dict, tables: dict | None = None,
                 summary: Summary | None = None, checked=None) -> None:
        self.path = path
        self.manifest = manifest
        self._tables = dict(tables or {})
        self._frames: dict = {}
        self._summary = summary
        self._checked = checked

    @property
    def checked(self):
        """The folder's parts checked against the run's ledger and plan (``sim.checks.integrity``,
        the cheap check: sizes and footers), once; a bad part is one ``SniffError`` line."""
        if self._checked is None and self.path is not None:
            from sim.checks.integrity import check_run, require_sound

            self._checked = check_run(self.path, self.manifest)
            require_sound(self._checked, self.manifest)
        return self._checked

    def parts(self, name: str) -> list[Path]:
        """The checked parts of a table, in game id order (only these are ever read)."""
        return self.checked.parts(name)

    @property
    def config(self) -> dict:
        return self.manifest["config"]

    @property
    def complete(self) -> bool:
        return self.manifest.get("status") == "complete"

    def table(self, name: str) -> pa.Table:
        if name not in TABLES:
            raise SniffError(f"no table {name!r}; tables: {', '.join(TABLES)}")
        if name not in tables_of(self.config):
            raise SettingError(f"this run was played with {{rounds=False}}: it has no {name} table")
        if name not in self._tables:
            self._require_memory(name, peak=False)
            files = self.parts(name)
            if files:
                self._tables[name] = pa.concat_tables([read_part(path) for path in files])
            else:
                self._tables[name] = pa.table({})
        return self._tables[name]

    def dataset(self, name: str):
        import pyarrow.dataset as ds

        if self.path is None:
            return ds.dataset(self.table(name))
        checksums = ds.ParquetFragmentScanOptions(page_checksum_verification=True)
        return ds.dataset([str(p) for p in self.parts(name)],
                          format=ds.ParquetFileFormat(default_fragment_scan_options=checksums))

    def frame(self, name: str):
        """The table as a pandas DataFrame (read once, then kept); a table that would not
        fit in memory is refused in one line naming the ways to read it in parts."""
        if name not in self._frames:
            self._require_memory(name, peak=True)
            self._frames[name] = self.table(name).to_pandas()
        return self._frames[name]

    def _require_memory(self, name: str, peak: bool) -> None:
        if self.path is not None and name not in self._tables \
                and name in tables_of(self.config):
            from sim.store.scan import require_memory

            require_memory(self, name, peak)

    def query(self, sql: str, lazy: bool = False, progress: bool = False,
              timeout: float | None = None):
        """The answer to ``sql`` (DuckDB SQL over the views ``games`` and ``rounds``: the
        checked parts, page checksums verified) as a pandas DataFrame, or with ``lazy`` a
        DuckDB relation to fetch in pieces; read-only (docs/query.md). ``progress``: a line
        on stderr while it runs; ``timeout``: seconds before it is stopped."""
        from sim.store.query import query

        return query(self, sql, lazy=lazy, progress=progress, timeout=timeout)

    @property
    def games(self):
        """One row per game (pandas DataFrame; columns in docs/data-format.md)."""
        return self.frame("games")

    @property
    def rounds(self):
        """One row per round (pandas DataFrame; columns in docs/data-format.md)."""
        return self.frame("rounds")

    @property
    def summary(self):
        """The run's summary (``sim.store.summary.Summary``), recomputed from the tables."""
        if self._summary is None:
            self._summary = summarise_folder(self.path, self.manifest, self.checked)
        return self._summary

    def __repr__(self) -> str:
        config = self.config
        where = str(self.path) if self.path else "in memory"
        return (
            f"Run({where}: {config['games']:,} games, {config['players']} players, "
            f"{', '.join(config['labels'])}, seed {config['seed']}, "
            f"{self.manifest.get('status')})"
        )


def load(path: str | os.PathLike) -> Run:
    """Open a run folder written by ``sniff simulate`` (or ``sim.simulate(out=...)``); every
    part is checked first, and a run still being written says so (a ``UserWarning``)."""
    run = open_run(path)
    if run.manifest.get("status") == "running":
        import warnings

        warnings.warn(f"{run.path} is still being written (status running): its tables hold "
                      "the chunks finished so far", stacklevel=2)
    from sim.checks.verified import unverified_note

    if (note := unverified_note(Path(path), run.checked)) is not None:  # run.path, as given
        import warnings

        warnings.warn(note, stacklevel=2)
    return run


def open_run(path: str | os.PathLike) -> Run:
    """``load`` without the warning, for callers that say it their own way (a report)."""
    from sim.checks.integrity import check_run, require_sound

    folder = Path(path)
    if not folder.exists():
        raise SniffError(f"no such run folder: {folder}")
    if not folder.is_dir():
        raise SniffError(f"{folder} is a file, not a run folder")
    manifest = read_manifest(folder)
    checked = check_run(folder, manifest)  # every part checked before any is used
    require_sound(checked, manifest)
    return Run(folder, manifest, checked=checked)
