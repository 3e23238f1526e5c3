"""A generated module's files in the user's cache: written once, numba's compiled files
checked before they load, imported; and one compile of a module per machine at a time.

Why apart from ``sim.kernels.generate`` (what the generated modules are and when each is
built): the cache folder is the user's own, but what lies in it may have been planted or
damaged (a copied cache, a link, a forged pickle). Every read of it goes through here, so
that only a module of exactly the text sniff wrote is imported, and numba loads only files
sealed by this account's key (``sim.cache.sealed``).
"""

from __future__ import annotations

import importlib.util
import io
import os
import pickletools
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from sim.cache import UnsafeCache, cache_base, check_own, own_folder, seal_numba_writes, sealed
from sim.files import write_once

__all__ = [
    "cache_dir", "check_compiled", "compiling_alone", "import_generated", "is_compiled",
    "write_generated",
]

seal_numba_writes()  # numba's files of the generated modules: sealed as written


def docstring_text(text: str) -> str:
    """``text`` safe inside a generated module's docstring: printable ASCII but quotes and
    backslashes (a model path such as ``x\"\"\"; import os ...`` would otherwise end the
    docstring and run as code); anything else becomes ``?``."""
    return "".join(c if " " <= c <= "~" and c not in '"\\' else "?" for c in text)



def cache_dir() -> Path:
    """Where generated kernel modules and their numba caches live (``SNIFF_CACHE_DIR``): a
    folder of the user's own (``sim.cache.own_folder``)."""
    return own_folder(cache_base() / "kernels")


def write_generated(name: str, source: str) -> Path:
    """Write a generated module ``name`` into the cache folder, once (``sim.files``); its
    path. A file there that is not exactly this text (another text, a link, a FIFO, a
    folder: a forged or damaged cache) is replaced, and numba's files of it removed, so
    that only this text is ever imported; one of another owner is ``UnsafeCache``."""
    directory = cache_dir()
    path = directory / f"{name}.py"
    data = source.encode()
    if not _holds(path, data):
        _remove(path)
        remove_compiled(path)
        write_once(path, data)
        if not _holds(path, data):  # another writer's, in between: never imported unread
            raise UnsafeCache(path, "changed while sniff wrote it: not imported")
    return path


def _holds(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a regular file of the user's own holding exactly ``data`` (read
    without following a link or waiting on a FIFO)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(info.st_mode):
        return False
    check_own(path, info)
    if info.st_size != len(data):
        return False
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                             | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return False
    with os.fdopen(descriptor, "rb") as handle:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode) and \
            handle.read(len(data) + 1) == data


def _remove(path: Path) -> None:
    """Remove a cache entry (never what a link points to: the link itself)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def remove_compiled(path: Path) -> None:
    """Remove numba's cache files of the generated module ``path``: it compiles again."""
    cache = path.parent / "__pycache__"
    if os.path.isdir(cache) and not os.path.islink(cache):
        for entry in cache.glob(f"{path.stem}.*"):
            _remove(entry)


def check_compiled(path: Path) -> None:
    """Before numba loads the compiled files of the generated module ``path``: its
    ``__pycache__`` must be a folder of the user's own, and each of the module's files there
    a regular file of the user's own; a file that is not whole (numba's are pickles: an
    index of two, a data file of one, each parsed here, never loaded), not a regular file,
    or not sealed by this account's key (``sim.cache.sealed``: a copy of someone else's
    cache, a forged pickle) is removed with the module's others, so numba compiles again
    instead of failing or loading it."""
    cache = path.parent / "__pycache__"
    try:
        info = os.lstat(cache)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):  # a link, a file, a FIFO: numba makes a folder anew
        _remove(cache)
        return
    own_folder(cache)
    entries = sorted(cache.glob(f"{path.stem}.*"))
    for entry in entries:
        info = os.lstat(entry)
        if not stat.S_ISREG(info.st_mode):
            remove_compiled(path)
            return
        check_own(entry, info)
    for entry in entries:
        if entry.suffix in (".nbi", ".nbc") and not (sealed(entry) and _whole_pickles(
                entry, 2 if entry.suffix == ".nbi" else 1)):
            remove_compiled(path)
            return


def _whole_pickles(path: Path, count: int) -> bool:
    """Whether ``path`` holds exactly ``count`` whole pickles (parsed, not loaded)."""
    try:
        stream = io.BytesIO(path.read_bytes())
        for _ in range(count):
            for _op in pickletools.genops(stream):
                pass
        return stream.read(1) == b""
    except Exception:  # truncated, or not a pickle at all
        return False


def import_generated(path: Path) -> ModuleType:
    """Import a generated module from its file (numba then finds its cache beside it, once
    ``check_compiled`` found it whole and the user's own)."""
    check_compiled(path)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


@contextmanager
def compiling_alone(path: Path, functions: tuple[str, ...]) -> Iterator[None]:
    """Around a load that may compile: one process of the machine at a time compiles a
    generated module's functions (a lock file beside it); another that comes meanwhile waits,
    then loads what the first wrote to the cache. No lock once they are compiled."""
    if is_compiled(path, functions):
        yield
        return
    try:
        import fcntl
    except ImportError:  # not POSIX: each process compiles for itself
        yield
        return
    # never through a link planted in the cache folder, never waiting on a FIFO there
    flags = os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    try:
        lock = os.open(path.with_suffix(".lock"), flags, 0o600)
    except OSError:  # not a file we may lock: compile without it
        yield
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)  # lets the lock go


def is_compiled(path: Path, functions: tuple[str, ...]) -> bool:
    """Whether numba's cache beside a generated module holds these compiled functions (numba
    writes a function's index file last, so its presence means the entry is complete)."""
    cache = path.parent / "__pycache__"
    return all(any(cache.glob(f"{path.stem}.{name}-*.nbi")) for name in functions)

