"""Files written whole: the project's atomic writers, one home for all of them.

- ``write_atomic`` replaces a file (a temporary beside it, synced, renamed into place): a
  run folder's files, a training folder's, a model file.
- ``place_new`` moves a finished temporary file to its name unless a file is already there
  (a run folder's parts, which any of several writers may finish first).
- ``write_once`` writes a file that never changes once there (a temporary linked into
  place): the cache's generated modules and copied model files. Rewriting a generated
  module would change its mtime and void numba's cache beside it, and a concurrent writer
  (another worker, another process) may win the race with an identical file.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Callable
from pathlib import Path

TEMP_SUFFIX = ".tmp"  # of every temporary file (a killed run's are cleared by resume)


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """The one atomic file writer: ``write(temporary)``, synced, then renamed into place.

    The temporary file is hidden and beside ``path`` (``.NAME.PID-RANDOM.tmp``: no dataset
    reader picks it up, and a rename within a folder is atomic), so a reader sees the old
    file or the new one, never part of one. Its name is unique, so two writers of one file
    (two processes, a folder someone else also writes) never write into each other's
    temporary: the last rename wins, whole.
    """
    path = Path(path)
    temporary = path.with_name(
        f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        write(temporary)
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_once(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` unless the file exists; the path."""
    if path.exists():
        return path
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, suffix=TEMP_SUFFIX,
                                     delete=False) as f:
        f.write(data)
    try:
        os.link(f.name, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(f.name)
    return path


def place_new(temporary: Path, final: Path) -> bool:
    """Move ``temporary`` to ``final`` unless a file is there (atomically: a hard link
    fails on an existing name); False, and the temporary removed, if one was."""
    try:
        os.link(temporary, final)
    except FileExistsError:
        return False
    except OSError:  # a file system without hard links: the rename, as before
        os.replace(temporary, final)
        return True
    finally:
        Path(temporary).unlink(missing_ok=True)
    return True
