"""What a run folder's parts must be, and the checks that hold every reader to it.

Each finished chunk is recorded in the run's ledger, ``NAME/parts.jsonl``: one JSON line
per chunk (``chunk``, ``run_id``, ``first_game``, ``end_game`` and, per table, the part's
``file``, ``rows``, ``bytes`` and ``sha256``), appended and synced right after the chunk's
parts are renamed into place. A chunk is finished when its line is there. A ledger rather
than the manifest because an append costs the same at chunk 1 and chunk 100,000, where
rewriting a manifest that lists every part would grow with the run.

Three depths of check, each used where its cost fits:

* ``cheap`` (every read: ``sim.load``, ``sniff report``, tournaments, ``--resume``'s
  plan): every chunk the plan needs is recorded (all of them once the run is complete),
  each recorded part exists with its recorded size, its Parquet footer has the recorded
  rows and names this run, this table, this chunk and these games; no other part is in
  the tables' folders. The bytes a reader then decodes are checked by the Parquet page
  checksums (CRC-32, verified on every read). A run of at most ``SMALL_RUN`` bytes of
  parts has their sha256 checked too: a part forged to the same size is refused.
* ``hash`` (``--resume``): the above and the sha256 of every part's bytes.
* ``full`` (``sniff verify``): the above and every page decoded, with its checksum, the
  columns readers need, and the game ids of every row against the chunk's range.

A manifest that names no ledger (a folder of an older sniff, or one whose ledger was
removed) is refused in one line: nothing vouches for its parts' bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from sim.checks.footers import CONFIG_MISMATCH, decode_problem, identity_problem
from sim.checks.shape import record_shape_problem, recorded_bytes
from sim.errors import SniffError
from sim.files import (
    UnsafeFile,
    check_replaceable,
    kind_of,
    link_problem,
    link_problems,
    link_words,
    open_regular,
    own_folder,
    own_inode,
)

__all__ = [
    "absent_problem", "append_record", "check_run", "chunk_record", "expected_chunks",
    "file_problem", "first_missing", "LEDGER", "part_name", "part_record", "read_ledger",
    "require_sound", "run_link_problems", "SET_ASIDE", "set_aside", "TABLES", "tables_for",
    "tables_of",
]

TABLES = ("games", "rounds")  # every table a run can have; a --no-rounds run has games only
LEDGER = "parts.jsonl"
SET_ASIDE = "set-aside"  # where --resume moves a bad part (kept, never deleted)
MAX_LEDGER_LINE = 64 * 2**10  # a ledger line is some 400 bytes
LEDGER_REPLAYS = 16  # ledger lines a chunk of the plan may have (each replay adds one)
HASH = "sha256"  # the CPU's SHA instructions hash it faster than blake2b
SMALL_RUN = 32 * 2**20  # bytes of parts that even the cheap check hashes (some 200k games)


def part_name(chunk: int) -> str:
    """The file name of a chunk's Parquet part."""
    return f"part-{chunk:06d}.parquet"


def chunk_of(name: str) -> int | None:
    """The chunk of a part's file name (``part_name``'s inverse), or None."""
    stem = name.removeprefix("part-").removesuffix(".parquet")
    if f"part-{stem}.parquet" != name or not stem.isdigit() or not stem.isascii():
        return None
    return int(stem) if part_name(int(stem)) == name else None


def first_missing(checked: Checked, n_chunks: int) -> int | None:
    """The first chunk of the plan that is neither good nor bad (not there), or None."""
    known = set(checked.good) | checked.bad_chunks()
    chunk = 0
    while chunk < n_chunks and chunk in known:
        chunk += 1
    return chunk if chunk < n_chunks else None


def tables_for(rounds: bool) -> tuple[str, ...]:
    """The tables a run writes: both, or ``games`` alone for a ``--no-rounds`` run."""
    return TABLES if rounds else ("games",)


def tables_of(config: dict) -> tuple[str, ...]:
    """The tables of a run by its recorded configuration (runs before the option: both)."""
    return tables_for(config.get("rounds", True))


def file_digest(path: Path) -> str:
    """The content hash of a part file, read without following a link or blocking on a FIFO."""
    with os.fdopen(open_regular(path, "part"), "rb") as handle:  # a FIFO never blocks it
        return hashlib.file_digest(handle, HASH).hexdigest()


def part_record(path: Path, rows: int) -> dict:
    """What identifies a written part: its file name, rows, size and content hash."""
    return {"file": Path(path).name, "rows": int(rows), "bytes": os.path.getsize(path),
            HASH: file_digest(path)}


def absent_problem(path: Path) -> str | None:
    """Why a file written with its folder is not there as a regular file (gone, or replaced
    by a FIFO, a device, a folder...), or None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return f"{path}: missing (it was written with this folder)"
    if not stat.S_ISREG(mode):
        return f"{path}: is {kind_of(mode)}, not the regular file written with this folder"
    return None


def run_link_problems(folder: Path, manifest: dict) -> list[str]:
    """A run folder's own files and table folders that are links, one line each (the parts
    themselves are checked with their chunks)."""
    return link_problems(folder, {"manifest.json": "manifest", LEDGER: "ledger",
                                  **{t: f"{t} folder" for t in tables_of(manifest["config"])},
                                  ".partial": ".partial folder",
                                  SET_ASIDE: f"{SET_ASIDE} folder"})


def file_problem(folder: Path, name: str, records: dict | None,
                 where: str = "summary.json") -> str | None:
    """What is wrong with a whole file recorded as ``records[name]`` (``part_record``'s
    bytes and sha256 in the file ``where``: an openings folder's or a tournament's files),
    or None; a file without a record (an older version's folder, or no records at all) is
    not checked."""
    record = (records or {}).get(name)
    if record is None:
        return None
    path = Path(folder) / name
    if (absent := link_problem(folder, name) or absent_problem(path)) is not None:
        return absent
    if path.stat().st_size != record.get("bytes") or file_digest(path) != record.get(HASH):
        return (f"{path}: its bytes changed since it was written (size or {HASH} differs "
                f"from the record in {where})")
    return None


def append_record(folder: Path, record: dict) -> None:
    """Record a finished chunk: one line appended to the ledger and synced."""
    path = Path(folder) / LEDGER
    line = (json.dumps(record, separators=(",", ":")) + "\n").encode()
    check_replaceable(path, "ledger")  # appended to, never through a link or into a FIFO
    own_inode(path)  # nor into a file another folder shares (a hard-linked snapshot)
    with open(path, "ab+") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell():  # a line torn by a crash must not swallow this one
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                line = b"\n" + line
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())


def read_ledger(folder: Path, chunks: int | None = None) -> dict[int, dict]:
    """The recorded chunks (the last line of each wins: a replayed chunk's new parts); a
    line torn by a crash is no record. ``chunks``: the plan's, which bounds the ledger (a
    record of a chunk outside it, or more than ``LEDGER_REPLAYS`` lines a chunk, is one
    ``SniffError`` line: no run writes them), so reading it takes bounded memory."""
    records: dict[int, dict] = {}
    path = Path(folder) / LEDGER
    most = None if chunks is None else LEDGER_REPLAYS * chunks + 1024
    lines = 0
    try:  # never blocks, never reads a device: a FIFO or /dev/zero there is one line
        with os.fdopen(open_regular(path, "ledger"), "rb") as handle:
            while line := handle.readline(MAX_LEDGER_LINE + 1):
                lines += 1
                if most is not None and lines > most:
                    raise SniffError(f"{path}: more than {most:,} lines for a plan of "
                                     f"{chunks:,} chunks, more than any run writes; the run "
                                     "folder is damaged or was edited")
                if len(line) > MAX_LEDGER_LINE:  # no record is this long: skip it, bounded
                    while line and not line.endswith(b"\n"):
                        line = handle.readline(MAX_LEDGER_LINE)
                    continue
                try:
                    record = json.loads(line)
                    chunk = record["chunk"]
                except (ValueError, KeyError, TypeError, RecursionError):
                    continue
                if not isinstance(record, dict) or isinstance(chunk, bool) or not isinstance(
                        chunk, int) or chunk < 0:
                    continue
                records[chunk] = record
                if chunks is not None and chunk >= chunks:
                    raise SniffError(f"{path}: line {lines:,} records chunk {chunk:,}, outside "
                                     f"this run's plan of {chunks:,} chunks; the run folder "
                                     "is damaged or was edited")
    except FileNotFoundError:
        pass
    except IsADirectoryError:  # never "missing": the records are not where they belong
        raise SniffError(f"{path}: is a folder, not a regular ledger: the run folder is "
                         "damaged") from None
    except UnsafeFile as error:
        raise SniffError(f"{error}: the run folder is damaged") from None
    return records


# --- the plan's chunks


def expected_chunks(manifest: dict) -> tuple[int, int, int]:
    """``(chunks, chunk_size, games)`` the run's plan (and a --precision stop) asks for."""
    config = manifest["config"]
    stopped = manifest.get("stopped") or {}
    games = int(stopped.get("games") or config["games"])
    size = int(config["chunk_size"])
    return -(-games // size), size, games


@dataclass
class Problem:
    chunk: int | None
    path: Path
    reason: str

    def line(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class Checked:
    """The outcome of a check: the good chunks and their parts, and what is wrong."""

    folder: Path
    good: dict[int, dict] = field(default_factory=dict)  # chunk -> its record
    problems: list[Problem] = field(default_factory=list)
    unrecorded: dict[int, list[str]] = field(default_factory=dict)  # chunk -> its tables
    checked_bytes: int = 0
    hashed: bool = False  # each good part's sha256 was checked (a small run, or deeper)
    manifest_problem: str | None = None  # the manifest disagrees with every part's footer

    def parts(self, table: str) -> list[Path]:
        """The good parts of ``table``, in chunk (so game id) order."""
        return [self.folder / table / self.good[c]["parts"][table]["file"]
                for c in sorted(self.good)]

    @property
    def games(self) -> int:
        return sum(r["end_game"] - r["first_game"] for r in self.good.values())

    def bad_chunks(self) -> set[int]:
        return {p.chunk for p in self.problems if p.chunk is not None}


@dataclass(frozen=True)
class _Plan:
    """What a run's parts are checked against: its folder, tables, chunks and identity."""

    folder: Path
    tables: tuple[str, ...]
    n_chunks: int
    size: int
    total: int
    run_id: str | None
    config: dict
    depth: str
    hashed: bool  # each part's sha256 checked: any depth but cheap, or a small run

    def games(self, chunk: int) -> tuple[int, int]:
        """The game ids ``lo..hi-1`` of ``chunk``."""
        return chunk * self.size, min(self.total, (chunk + 1) * self.size)


def check_run(folder: Path, manifest: dict, depth: str = "cheap", progress=None) -> Checked:
    """Check the parts of a run folder against its ledger and plan (``depth``: ``cheap``,
    ``hash`` or ``full``, see the module's docstring). Changes nothing. ``progress(done,
    total)`` hears each chunk checked (a full check of a big run takes a while)."""
    folder = Path(folder)
    n_chunks, size, total = expected_chunks(manifest)
    ledger = manifest.get("ledger") == LEDGER
    records = read_ledger(folder, n_chunks) if ledger else {}
    plan = _Plan(folder, tables_of(manifest["config"]), n_chunks, size, total,
                 manifest.get("run_id"), manifest["config"], depth,
                 depth != "cheap" or recorded_bytes(records) <= SMALL_RUN)
    out = Checked(folder, hashed=plan.hashed)
    present = {table: {p.name for p in (folder / table).glob("*.parquet")}
               if (folder / table).is_dir() else set() for table in plan.tables}
    # Only the chunks the folder holds (recorded or on disk): a manifest's plan of 10^12
    # chunks costs what is there, not what it claims.
    on_disk = {chunk_of(name) for names in present.values() for name in names}
    chunks = sorted(c for c in set(records) | on_disk if c is not None and c < n_chunks)
    for step, chunk in enumerate(chunks):
        record = records.get(chunk)
        if record is None:
            have = [t for t in plan.tables if part_name(chunk) in present[t]]
            if have:
                out.unrecorded[chunk] = have
        elif (bad := _recorded_problem(plan, chunk, record, out)) is None:
            out.good[chunk] = record
        else:
            out.problems.append(bad)
        if progress is not None:
            progress(step + 1, len(chunks))
    _blame_manifest(out)
    if not ledger:
        out.manifest_problem = (f"{folder / 'manifest.json'} names no ledger ({LEDGER}): a "
                                "folder of another version of sniff, or its ledger was "
                                "removed; nothing vouches for its parts, so it is not read")
    for table in plan.tables:
        for name in sorted(n for n in present[table]
                           if (index := chunk_of(n)) is None or index >= n_chunks):
            out.problems.append(Problem(None, folder / table / name,
                                        f"is not a part of this run's plan ({n_chunks} "
                                        "chunks)"))
    return out


def _recorded_problem(plan: _Plan, chunk: int, record: dict, out: Checked) -> Problem | None:
    """What is wrong with a recorded chunk (its ledger line, then each part), or None;
    the bytes hashed are counted in ``out``."""
    lo, hi = plan.games(chunk)
    if (why := record_shape_problem(record, plan.tables)) is not None:
        return Problem(chunk, plan.folder / LEDGER, f"the record of chunk {chunk} is not one "
                       f"sniff writes ({why})")
    if (record.get("run_id"), record.get("first_game"), record.get("end_game")) != (
            plan.run_id, lo, hi):
        return Problem(chunk, plan.folder / LEDGER, f"the record of chunk {chunk} does not "
                       f"match the run's plan (games {lo}..{hi - 1} of run {plan.run_id})")
    for table in plan.tables:
        part = (record.get("parts") or {}).get(table) or {}
        path = plan.folder / table / part_name(chunk)
        reason = _part_problem(plan, chunk, table, part, path)
        if reason is not None:
            return Problem(chunk, path, reason)
        out.checked_bytes += part["bytes"] if plan.depth != "cheap" else 0
    return None


def _part_problem(plan: _Plan, chunk: int, table: str, part: dict, path: Path) -> str | None:
    """What is wrong with one recorded part, checked as deep as the plan asks, or None."""
    lo, hi = plan.games(chunk)
    if part.get("file") != path.name:
        return f"chunk {chunk} has no recorded {table} part"
    if plan.depth != "cheap" and path.is_symlink():  # verify and --resume (it sets it aside)
        return (f"is {link_words(path)}, not a part written by this run (sniff never makes "
                "a link in its folders)")
    if not path.is_file():
        return f"missing (chunk {chunk}, games {lo:,}..{hi - 1:,}, was written and recorded)"
    if (actual := path.stat().st_size) != part.get("bytes"):
        return (f"is {actual:,} bytes, {part.get('bytes'):,} were written (altered, "
                "truncated or replaced)")
    if (reason := identity_problem(path, table, chunk, lo, hi, plan.run_id,
                                   part.get("rows"), plan.config)) is not None:
        return reason
    if plan.hashed and file_digest(path) != part.get(HASH):
        return f"its bytes changed since it was written ({HASH} differs from the recorded one)"
    if plan.depth == "full":
        return decode_problem(path, table, lo, hi, plan.config)
    return None


def _blame_manifest(out: Checked) -> None:
    """When no part agrees with the manifest's configuration and some disagree, the
    manifest is what changed (one problem, no chunk to replay); else the parts that
    disagree are the bad ones."""
    mismatched = [p for p in out.problems if p.reason.startswith(CONFIG_MISMATCH)]
    if mismatched and not out.good:
        out.problems = [p for p in out.problems if p not in mismatched]
        first = mismatched[0]
        out.manifest_problem = (
            f"{out.folder / 'manifest.json'} does not match the run's parts: "
            f"{first.reason.split(': ', 1)[1]} ({first.path} and {len(mismatched) - 1} other "
            "part(s) agree); the manifest was edited after the games were written, so the "
            "folder cannot say what was played")


def require_sound(checked: Checked, manifest: dict) -> None:
    """Refuse a run a reader cannot use: a bad or extra part, or a complete run that lacks
    a chunk. One line naming the first problem and what to do."""
    folder = checked.folder
    if checked.manifest_problem is not None:
        raise SniffError(checked.manifest_problem)
    problems = list(checked.problems)
    n_chunks = expected_chunks(manifest)[0]
    chunk = first_missing(checked, n_chunks)
    if manifest.get("status") == "complete" and chunk is not None:
        why = ("is not recorded as written by this run" if chunk in checked.unrecorded
               else "missing")
        problems.append(Problem(chunk, folder / "games" / part_name(chunk),
                                f"{why}: the run is complete but chunk {chunk} is not there"))
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise SniffError(f"{problems[0].line()}{more}; `sniff verify {folder}` lists them, "
                         f"`sniff simulate --out {folder} --resume` replays the bad chunks")


def set_aside(folder: Path, path: Path) -> Path:
    """Move a bad part into ``NAME/set-aside/`` (never deleted); returns where it went."""
    target_dir = own_folder(Path(folder) / SET_ASIDE, SET_ASIDE)  # never a link out
    stem = f"{path.parent.name}-{path.name}"
    target, number = target_dir / stem, 2
    while target.exists():
        target, number = target_dir / f"{stem}.{number}", number + 1
    os.replace(path, target)
    return target


def chunk_record(chunk: int, lo: int, hi: int, run_id: str, parts: dict) -> dict:
    """A ledger line: the chunk, its games and its parts' records."""
    return {"chunk": chunk, "run_id": run_id, "first_game": lo, "end_game": hi,
            "parts": parts}
