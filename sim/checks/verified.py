"""Whether a run folder was verified since it last changed: readers say so when not.

Readers (``sniff query``, ``sniff report``, ``sim.load``) check a run cheaply: every part
present with its recorded size and a footer naming its chunk, every page's CRC. They hash
the parts of a small run only (``sim.checks.integrity.SMALL_RUN``; at 10 M games that is 1.4
GB to read whatever the question), so in a big run a part replaced by another of the same
size and a consistent footer would be read. Rather than
take the ledger's word silently, a reader says in one line when the folder was not verified
since it last changed, and names the command that does it.

"Since it last changed" is the state of the manifest, the ledger and every part as the
file system reports it (size, inode, modification and *change* time: the change time
cannot be set back by a user, and any write or rename sets it). ``sniff verify`` (which
hashes every part against the ledger) and the writer of a run (which hashed each part as
it wrote it) record that state in the user's cache (``sim.cache``), never in the folder: a
folder cannot vouch for itself. A copied or moved folder reads as unverified until
verified again; that is the honest answer, since the copy is what is read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sim.cache import cache_base, own_folder
from sim.files import write_once

__all__ = ["mark_verified", "unverified_note"]


def _state(folder: Path, parts: list[Path]) -> str:
    """A digest of the folder's files as the file system reports them now."""
    folder = Path(folder).resolve()
    digest = hashlib.sha256(str(folder).encode())
    for path in [folder / "manifest.json", folder / "parts.jsonl", *parts]:
        try:
            info = os.stat(path)
        except OSError:
            digest.update(b"-")
            continue
        digest.update(f"{Path(path).name}:{info.st_size}:{info.st_ino}:{info.st_dev}:"
                      f"{info.st_mtime_ns}:{info.st_ctime_ns};".encode())
    return digest.hexdigest()


def _stamp(folder: Path, parts: list[Path]) -> Path:
    """The stamp's name, in a folder of the user's own (``sim.cache.own_folder``: a cache
    anyone else may write could vouch for any folder)."""
    return own_folder(cache_base() / "verified") / _state(folder, parts)


def _parts(checked) -> list[Path]:
    tables = sorted({table for record in checked.good.values() for table in record["parts"]})
    return [path for table in tables for path in checked.parts(table)]


def mark_verified(folder: Path, checked) -> None:
    """Record that the folder, as it is now, was verified (or written) by this user."""
    try:
        stamp = _stamp(folder, _parts(checked))
        write_once(stamp, str(Path(folder).resolve()).encode())
    except OSError:  # a cache that cannot be written: readers keep saying so, no harm
        pass


def is_verified(folder: Path, checked) -> bool:
    try:
        return os.path.isfile(_stamp(folder, _parts(checked)))
    except OSError:  # a cache not the user's own: its word is not taken
        return False


def unverified_note(folder: Path, checked) -> str | None:
    """The one line a reader adds for a folder not verified since it changed, or None."""
    if is_verified(folder, checked):
        return None
    if getattr(checked, "hashed", False):  # a small run: hashed, not decoded in full
        return (f"{folder} was not verified since it last changed: its parts were hashed, "
                f"not decoded in full; `sniff verify {folder}` checks every page")
    return (f"{folder} was not verified since it last changed: its parts are checked by size "
            f"and footer, not hashed; `sniff verify {folder}` hashes them")
