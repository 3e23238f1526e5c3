"""One writer per run folder: an OS file lock that dies with its process.

A run folder being written holds ``NAME/.lock`` locked with ``fcntl.flock`` for the whole
session. The kernel drops the lock when the process ends however it ends (SIGKILL, a
crash), so a lock never outlives its writer, and unlike a pid in the manifest it cannot be
fooled by a reused pid or a second process of the same program. The file's text names the
holder (pid, host, command) for the one-line refusal a second writer gets; readers ask
:func:`holder` to tell a live run from a stopped one.

Where ``fcntl`` does not exist (Windows) there is no lock: the refusals below never fire.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import BinaryIO

from sim.errors import SniffError
from sim.files import UnsafeFile, open_lock_file, open_regular

__all__ = ["LOCK_NAME", "RunLock"]

if sys.platform != "win32":
    import fcntl
else:  # pragma: no cover - no fcntl on Windows
    fcntl = None

LOCK_NAME = ".lock"
# A reader's probe holds a shared lock for microseconds: a writer that meets one tries again.
ATTEMPTS = 20
PAUSE = 0.02


def _try(handle, mode: int) -> bool:
    try:
        fcntl.flock(handle.fileno(), mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _describe(info: dict | None) -> str:
    if not info:
        return "another process"
    where = f" on {info['host']}" if info.get("host") not in (None, socket.gethostname()) else ""
    command = f" ({info['command']})" if info.get("command") else ""
    return f"process {info.get('pid', '?')}{where}{command}"


MAX_INFO = 64 * 2**10  # the holder's JSON is a hundred bytes


def _read_info(path: Path) -> dict | None:
    try:
        with os.fdopen(open_regular(path, "lock file", follow=False), "rb") as handle:
            info = json.loads(handle.read(MAX_INFO))
    except (OSError, ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) else None


def holder(folder: Path) -> dict | None:
    """Who holds ``folder``'s lock (``{"pid", "host", "command", ...}``), or None when no
    live process does (or the folder has no lock file)."""
    path = Path(folder) / LOCK_NAME
    if fcntl is None or not path.exists():
        return None
    try:  # never blocks: a FIFO, a device or a link there is nobody's lock
        with os.fdopen(open_regular(path, "lock file", follow=False), "rb") as handle:
            if _try(handle, fcntl.LOCK_SH):
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
                return None
    except OSError:
        return None
    return _read_info(path) or {}


def has_lock_file(folder: Path) -> bool:
    return (Path(folder) / LOCK_NAME).exists()


class RunLock:
    """The writer's lock of a run folder, held from ``acquire`` to ``release``."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._handle: BinaryIO | None = None

    def acquire(self, command: str = "") -> None:
        """Take the lock, or refuse in one line naming the process that holds it."""
        if fcntl is None:
            return
        path = self.folder / LOCK_NAME
        try:  # never through a link or into a FIFO or device (sim.files.open_lock_file)
            handle = os.fdopen(open_lock_file(path), "r+b")
        except UnsafeFile as error:
            raise SniffError(f"cannot lock {self.folder}: {error}; remove it (nothing was "
                             "changed)") from None
        except OSError as error:
            raise SniffError(f"cannot write to {self.folder}: "
                             f"{error.strerror or error}") from None
        for _ in range(ATTEMPTS):
            if _try(handle, fcntl.LOCK_EX):
                break
            time.sleep(PAUSE)
        else:
            shared = os.fstat(handle.fileno()).st_nlink > 1
            handle.close()
            info = _read_info(path)
            if shared:  # a hard-linked copy (cp -al) shares the lock of the folder copied
                raise SniffError(f"{path} is also the lock of another folder (this one or "
                                 "that is a hard-linked copy, as cp -al makes), which a "
                                 f"process is writing now; remove {path} (it holds nothing "
                                 "but the lock) and run again (nothing was changed)")
            raise SniffError(f"{self.folder} is being written by {_describe(info)}; wait for "
                             "it to finish or stop it (nothing was changed)")
        self._handle = handle
        if os.fstat(handle.fileno()).st_nlink > 1:  # shared with a hard-linked copy of the
            return  # folder (cp -al): locked, but its holder line is not written into both
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(info).encode())
        handle.flush()

    def release(self) -> None:
        if self._handle is not None:
            try:
                fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            finally:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def writer_alive(folder: Path, manifest: dict) -> bool:
    """Whether a process is writing the folder now: its lock is held; a folder of an older
    version, without a lock file, by the pid its manifest names."""
    if has_lock_file(folder):
        return holder(folder) is not None
    return owner_alive(manifest.get("owner"))


def owner_alive(owner: dict | None) -> bool:
    """Whether the process a manifest names (``sim.store.io.mark_running``) may still be running
    (a process on another machine cannot be checked, so it counts as alive)."""
    if not isinstance(owner, dict) or owner.get("host") != socket.gethostname():
        return True
    try:
        os.kill(int(owner["pid"]), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, KeyError, TypeError, ValueError):
        return True
    return True
