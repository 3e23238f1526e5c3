"""Output folders: default names, refusals before work starts, disk space.

Shared by every command that writes a folder (``sniff simulate``, ``report``,
``tournament``, ``openings``): each refuses an output it cannot use with one line, before
it plays or traces anything. The files in them are written by ``sim.files``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from sim.errors import SniffError


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
            raise SniffError(
                f"the rest of the run needs about {size_text(need)} ({what}, as {measured} "
                f"took) but {folder} has {size_text(free)} free; the finished chunks are "
                "kept: free some space and complete the run with --resume (or add "
                "--ignore-disk-space)")
        raise SniffError(
            f"the run needs about {size_text(need)} ({what}) but {folder} has "
            f"{size_text(free)} free; play fewer games, or add --ignore-disk-space to go on "
            "anyway")


def size_text(size: float) -> str:
    """A byte count for people: ``1.5 GB``."""
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:,.0f} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1000
    return ""


# The table folders of run and openings folders, and the files that mark those folders: a
# reader of a table folder (pyarrow, pandas, DuckDB) takes every Parquet file below it.
TABLE_FOLDERS = ("games", "rounds")
FOLDER_MARKERS = ("manifest.json", "openings.parquet")


def check_text_path(path: Path, what: str = "path") -> None:
    """Refuse a path whose name is not valid UTF-8 (bytes the file system accepts but that
    Parquet, JSON and HTML cannot carry), before anything is read or written."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise SniffError(f"{what} {shown} is not valid UTF-8: choose a name in UTF-8") from None


def check_folder_path(folder: Path) -> None:
    """Refuse an output folder that is a file, or that could not be created under a file."""
    check_text_path(folder, "--out")
    if folder.exists() and not folder.is_dir():
        raise SniffError(f"--out {folder} is a file; give a folder (it is created if missing)")
    for parent in folder.parents:
        if parent.exists():
            if not parent.is_dir():
                raise SniffError(f"cannot create {folder}: {parent} is a file")
            break
    for inside in (folder, *folder.parents):
        owner = inside.parent
        if inside.name in TABLE_FOLDERS and any(
                (owner / marker).is_file() for marker in FOLDER_MARKERS):
            raise SniffError(f"--out {folder} is inside the {inside.name}/ table of the sniff "
                             f"folder {owner}, whose readers take every file there as a part: "
                             "choose a folder outside it")


def check_writable_folder(folder: Path) -> None:
    """``check_folder_path``, and the folder (or the nearest existing folder above it, where
    it will be created) must be writable: checked before work that would be lost."""
    check_folder_path(folder)
    existing = next((p for p in (folder, *folder.parents) if p.exists()), Path("."))
    try:  # a real write: permissions alone do not tell (root, read-only mounts, /sys)
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise SniffError(f"cannot write to {folder}: {error.strerror or error} "
                         f"({existing})") from None
