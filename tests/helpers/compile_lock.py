"""One compile for all the suite's processes: a file lock around a first compile.

pytest-xdist runs two workers; two that need the same cached numba function at once would
both compile it (minutes of one core each). Under this lock the first compiles and writes
numba's cache; the second waits, then loads what the first wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: each process compiles for itself
    fcntl = None


@contextmanager
def compiling_alone(lock_file: Path) -> Iterator[None]:
    """Hold ``lock_file`` (created if absent) exclusively for the block."""
    if fcntl is None:
        yield
        return
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def try_alone(lock_file: Path) -> bool:
    """Whether no other process holds ``lock_file`` now (it is taken and let go at once: a
    hint of which compile is free, not a claim)."""
    if fcntl is None:
        return True
    lock_file.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_file, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
        return True
