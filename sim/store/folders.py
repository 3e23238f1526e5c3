"""Paths a user names: output folders and files (default names, the one check of every
output path, refusals before work starts, disk space) and the bounded read of a file a
user names (``read_user_text``).

Shared by every command that writes a folder (``sniff simulate``, ``report``,
``tournament``, ``openings``): each refuses an output it cannot use with one line, before
it plays or traces anything. The files in them are written by ``sim.files``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sim.errors import SettingError, SniffError
from sim.files import UnsafeFile, open_regular

__all__ = [
    "check_disk_space", "check_folder_path", "check_output_file", "check_text_path",
    "check_writable_folder", "free_bytes", "new_folder", "read_user_text", "remove_unstarted",
    "size_text"
]


def new_folder(prefix: str, base: Path = Path("results")) -> Path:
    """``results/PREFIX-YYYYMMDD-HHMMSS``, with ``-2``, ``-3``... so repeated runs never meet."""
    from datetime import datetime

    stem = f"{prefix}-" + datetime.now().strftime("%Y%m%d-%H%M%S")
    folder, number = base / stem, 2
    while folder.exists():
        folder, number = base / f"{stem}-{number}", number + 1
    return folder


def free_bytes(folder: Path) -> int:
    """Free space where ``folder`` is (or will be created)."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    return shutil.disk_usage(existing).free


def check_disk_space(folder: Path, need: float, games: int, per_game: float,
                     measured: str = "") -> None:
    """Refuse a run whose estimated size (``need`` bytes for ``games`` games) exceeds the
    free space: before it starts (a pilot's estimate) or, ``measured``, after the named
    chunk was written (the finished chunks are kept)."""
    free = free_bytes(folder)
    if need > free:
        what = f"{games:,} games of about {per_game:,.0f} bytes each"
        if measured:
            raise SettingError(
                f"the rest of the run needs about {size_text(need)} ({what}, as {measured} "
                f"took) but {folder} has {size_text(free)} free; the finished chunks are "
                "kept: free some space and complete the run with {resume} (or add "
                "{check_space=False})")
        raise SettingError(
            f"the run needs about {size_text(need)} ({what}) but {folder} has "
            f"{size_text(free)} free; play fewer games, or add {{check_space=False}} to go on "
            "anyway")


def size_text(size: float) -> str:
    """A byte count for people: ``1.5 GB``."""
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000
    return ""


# The table folders of run and openings folders, and the files that mark a sniff folder
# (a run's or a tuning run's manifest, an openings folder's table, a tournament's record):
# a reader of a table folder (pyarrow, pandas, DuckDB) takes every Parquet file below it,
# and a resume manages every file of its folder (it empties .partial/, sets parts aside).
TABLE_FOLDERS = ("games", "rounds")
FOLDER_MARKERS = ("manifest.json", "openings.parquet", "tournament.json")
PAIRS = "pairs"  # a tournament's own pairing runs, pairs/NAME, are inside it by design


def check_text_path(path: Path, what: str = "path") -> None:
    """Refuse a path whose name is not valid UTF-8 (bytes the file system accepts but that
    Parquet, JSON and HTML cannot carry), before anything is read or written. ``what``
    names the path in the refusal: words, or a setting in braces (``"{out}"``, a
    ``SettingError``'s, worded by the caller: ``out`` in Python, ``--out`` on the command
    line), as in every check of this module."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise SettingError(f"{what} {shown} is not valid UTF-8: choose a name in UTF-8") from None


def sniff_folder_above(path: Path, run_id: str | None = None) -> Path | None:
    """The sniff folder ``path`` would be inside (a folder above it holding a run's, a tuning
    run's, an openings folder's, a tournament's or a training folder's marker files),
    followed through links as well as taken as written; None if none. A tournament's
    ``pairs/NAME`` is not inside it for the run of that pairing only (``run_id``, the id
    its ``tournament.json`` records for ``pairs/NAME``): no other command writes a folder
    there."""
    path = Path(path)
    for route in dict.fromkeys((path.absolute(), path.resolve())):
        for above in route.parents:
            if any((above / marker).is_file() for marker in FOLDER_MARKERS) or (
                    (above / "settings.json").is_file() and (above / "snapshots").is_dir()):
                # (a training folder: its settings and snapshots, from its first moment)
                relative = route.relative_to(above).parts
                if run_id is not None and len(relative) == 2 and relative[0] == PAIRS \
                        and run_id == pairing_run_id(above, relative[1]):
                    continue
                return above
    return None


def pairing_run_id(tournament: Path, name: str) -> str | None:
    """The run id ``tournament``'s ``tournament.json`` records for its pairing ``pairs/NAME``
    (None: no such pairing, or no tournament sniff can read there)."""
    import json

    from sim.files import read_regular

    try:  # bounded, never blocking; its shape is checked below, entry by entry
        manifest = json.loads(read_regular(tournament / "tournament.json", 64 * 2**20,
                                           "tournament.json"))
    except (OSError, ValueError, RecursionError):
        return None
    entries = manifest.get("pairings") if isinstance(manifest, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and entry.get("folder") == f"{PAIRS}/{name}":
            return entry.get("run_id") if isinstance(entry.get("run_id"), str) else None
    return None


def check_not_inside(path: Path, what: str, run_id: str | None = None) -> None:
    """Refuse an output inside another sniff folder (one line naming it): its readers take
    every part in its tables, and its ``--resume`` empties ``.partial/`` and moves parts.
    ``run_id``: of the run to be written there (a tournament's pairing is let in)."""
    owner = sniff_folder_above(path, run_id)
    if owner is None:
        return
    route = Path(path).resolve().relative_to(owner.resolve()) if Path(path).resolve() \
        .is_relative_to(owner.resolve()) else Path(path).absolute().relative_to(owner)
    table = route.parts[0] if route.parts and route.parts[0] in TABLE_FOLDERS else None
    where = (f"the {table}/ table of the sniff folder {owner}, whose readers take every "
             "file there as a part") if table else (
        f"the sniff folder {owner}, whose files its own commands manage")
    raise SettingError(f"{what} {path} is inside {where}: choose a place outside it")


def check_folder_path(folder: Path, run_id: str | None = None) -> None:
    """Refuse an output folder that is a file or a link, that could not be created under a
    file, or that is inside another sniff folder (``run_id``: as ``check_not_inside``)."""
    check_text_path(folder, "{out}")
    if folder.is_symlink():
        raise SettingError(f"{{out}} {folder} is a link; give the folder itself (sniff never "
                           "writes through a link)")
    if folder.exists() and not folder.is_dir():
        raise SettingError(f"{{out}} {folder} is a file; give a folder (it is created if "
                           "missing)")
    for parent in folder.parents:
        if parent.exists():
            if not parent.is_dir():
                raise SniffError(f"cannot create {folder}: {parent} is a file")
            break
    check_not_inside(folder, "{out}", run_id)


OWN_KINDS = {"parquet": (b"PAR1",), "trace": (b"{",), "json": (b"{",)}


def check_output_file(path: Path, what: str, kind: str, overwrite: bool = True) -> Path:
    """The one check of a file a command writes (``trace -o``, ``query --parquet``, ``bench
    -o``): its folder exists, it is not inside a sniff folder, and if it exists it is a
    regular file (never a link, a device or a FIFO: the rename that puts the new file in
    place would destroy it) of the command's own ``kind`` (``OWN_KINDS``: its first bytes),
    replaced only with ``overwrite``."""
    import os
    import stat

    from sim.files import kind_of

    path = Path(path)
    check_text_path(path, what)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise SettingError(f"{what} {path} is {kind_of(mode)}; sniff writes only a new or "
                           "regular file (never through a link, over a device or a FIFO)")
    if not path.parent.is_dir():
        raise SniffError(f"cannot write {path}: its folder {path.parent} does not exist")
    check_not_inside(path, what)
    if mode is not None:
        if not overwrite:
            raise SettingError(f"{path} exists (a file); give a new file name or {{overwrite}}")
        with open(path, "rb") as handle:
            head = handle.read(8)
        if head and not head.lstrip().startswith(OWN_KINDS[kind]):
            raise SettingError(f"{what} {path} exists and is not a {kind} file; sniff "
                               "replaces only a file of its own kind: give a new file name")
    return path


def check_writable_folder(folder: Path, run_id: str | None = None) -> None:
    """``check_folder_path``, and the folder (or the nearest existing folder above it, where
    it will be created) must be writable: checked before work that would be lost."""
    check_folder_path(folder, run_id)
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    try:  # a real write: permissions alone do not tell (root, read-only mounts, /sys)
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise SniffError(f"cannot write to {folder}: {error.strerror or error} "
                         f"({existing})") from None


MAX_USER_FILE = 256 * 2**20  # a trace of thousands of games; /dev/zero is refused, not read


def read_user_text(path: Path, kind: str, described: str, limit: int | None = None) -> str:
    """The text of a file a user named (a trace, a position): a missing file, a folder, one
    over ``limit`` bytes (``/dev/zero`` among them) or bytes that are not UTF-8 is one
    ``SniffError`` line (``described``: what it should be). At most ``limit + 1`` bytes are
    ever read, so memory stays bounded whatever the file is (default ``MAX_USER_FILE``)."""
    limit = MAX_USER_FILE if limit is None else limit
    try:  # never blocks: a FIFO or a device is refused before a byte is read
        with os.fdopen(open_regular(Path(path), f"{kind} file"), "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise SniffError(f"no such {kind} file: {path}") from None
    except IsADirectoryError:
        raise SniffError(f"{path} is a folder, not a {kind} file") from None
    except UnsafeFile as error:
        raise SniffError(str(error)) from None
    except OSError as error:
        raise SniffError(f"cannot read {kind} file {path}: {error.strerror or error}") from None
    if len(data) > limit:
        raise SniffError(f"{path} is larger than {limit // 2**20} MiB: not a {described} "
                         "sniff can read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SniffError(f"{path} is not a {described} (not UTF-8 text)") from None


def remove_unstarted(folder: Path, names: tuple[str, ...], created: bool) -> None:
    """Undo a new study or tournament that failed before it played anything (a Python
    player that raises at its first game): its files ``names`` (a folder among them only
    when empty) and its ``.lock`` go, and ``folder`` too when this command created it and it
    is empty now. Nothing else is touched; what cannot be removed stays, silently (the
    failure's own line is what the user reads)."""
    from sim.store.lock import LOCK_NAME

    for name in (*names, LOCK_NAME):
        path = Path(folder) / name
        try:
            if path.is_dir() and not path.is_symlink():
                path.rmdir()  # only an empty one
            elif os.path.lexists(path):
                path.unlink()
        except OSError:
            pass
    if created:
        try:
            Path(folder).rmdir()
        except OSError:
            pass
