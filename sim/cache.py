"""Where sniff's cache goes, and numba's cache of the package's own compiled functions.

``cache_base``: ``SNIFF_CACHE_DIR``, else ``~/.cache/sniff``, else (a home the user cannot
write: a service account, another user's install) a folder of the user's own in the
temporary directory. The generated kernels (``sim.kernels.generate``) and model modules
(``strategies.learned.model_files``) live there. ``use_writable_numba_cache``: numba keeps a
``cache=True`` function's cache beside its code or in the user's cache, and refuses to compile
it ("cannot cache function") where it can write neither; it is then pointed here.

The cache holds code: the generated modules sniff imports and numba's compiled files beside
them (pickles, which numba loads). So a cache folder from someone else is refused like any
code from someone else: every folder of the cache must be a folder of the user's own
(``own_folder``: owned by the user, or by root, and writable by no one else; created private)
and so must every file loaded from it (``check_own``); else one ``UnsafeCache`` line, before
anything in it is read. What these checks cannot tell is a copy of someone else's cache the
user made their own (``cp -r``, a restored CI cache): for that, numba's files of the
generated modules are sealed under a key of the account kept outside the cache (``seal``,
``sealed``, ``seal_numba_writes`` below; docs/data-format.md).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

__all__ = [
    "cache_base", "check_own", "own_folder", "seal_numba_writes", "sealed", "UnsafeCache",
    "use_writable_numba_cache",
]

TRUST = ("sniff imports the code it compiles there, so it uses only a cache of your own "
         "that no one else may write (SNIFF_CACHE_DIR names another)")


class UnsafeCache(OSError):
    """A cache folder or file that is not the user's own (another user's, or writable by
    others) or not of the kind sniff keeps there: one line, as every command prints an
    ``OSError``."""

    def __init__(self, path, why: str) -> None:
        super().__init__(errno.EPERM, f"{path}: {why}")

    def __str__(self) -> str:
        return str(self.strerror)  # always the message given (mypy: OSError's may be None)


def trust_problem(info: os.stat_result) -> str | None:
    """Why a cache folder or file with this ``stat`` is not the user's own, or None: owned
    by another user (root's is fine: an administrator's cache), or writable by every user or
    by a group other than the user's own."""
    if not hasattr(os, "geteuid"):  # not POSIX: no owners to check
        return None
    if info.st_uid not in (os.geteuid(), 0):
        return f"is owned by another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return "may be written by every user"
    if info.st_mode & stat.S_IWGRP and info.st_gid != os.getegid():
        return f"may be written by group {info.st_gid}"
    return None


def own_folder(path: Path) -> Path:
    """``path`` as a folder of the cache: made if missing (private, mode 700), and checked
    (``trust_problem``), through links (a link the user made to a folder elsewhere is fine
    if that folder is theirs). Not a folder, or not the user's own: ``UnsafeCache``."""
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:  # something else by that name: said below
        pass
    except OSError:  # cannot be made (a parent not writable): the first write says why
        return path
    try:
        info = os.stat(path)
    except OSError:
        return path
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeCache(path, "is not a folder: sniff's cache is a folder (SNIFF_CACHE_DIR)")
    problem = trust_problem(info)
    if problem:
        raise UnsafeCache(path, f"{problem}; {TRUST}")
    return path


def check_own(path: Path, info: os.stat_result | None = None) -> None:
    """A file loaded from the cache must be the user's own (``trust_problem``)."""
    info = info or os.lstat(path)
    problem = trust_problem(info)
    if problem:
        raise UnsafeCache(path, f"{problem}; {TRUST}")


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return False
    return True


def _private_temporary(name: str) -> Path:
    return Path(tempfile.gettempdir()) / f"{name}-{os.getuid() if hasattr(os, 'getuid') else 0}"


def cache_base() -> Path:
    """The folder of sniff's cache: ``SNIFF_CACHE_DIR``, else ``~/.cache/sniff`` where it can
    be written, else a folder of this user's in the temporary directory (a home that is not
    writable, or not there: a service account, another user's checkout)."""
    configured = os.environ.get("SNIFF_CACHE_DIR")
    if configured:
        return own_folder(Path(configured))
    home = Path.home() / ".cache" / "sniff"
    return own_folder(home if _writable(home) else _private_temporary("sniff-cache"))


def use_writable_numba_cache(package_folder: Path) -> None:
    """Point numba's cache at sniff's when numba could write it neither beside the code
    (``package_folder``, e.g. installed by another user) nor in the user's cache: numba would
    otherwise refuse to compile a ``cache=True`` function ("cannot cache function")."""
    import numba

    # numba.config sets its settings when imported, out of the type checker's sight
    if numba.config.CACHE_DIR or _writable(package_folder / "__pycache__"):  # type: ignore[attr-defined]
        return
    from numba.misc.appdirs import AppDirs

    if _writable(Path(AppDirs(appname="numba", appauthor=False).user_cache_dir)):
        return
    # numba.config sets its settings when imported, out of the type checker's sight
    numba.config.CACHE_DIR = str(own_folder(cache_base() / "numba"))  # type: ignore[attr-defined]


# --- seals: numba's files in the cache, as this user's sniff wrote them
#
# numba loads its compiled files as pickles, and a pickle can run any code. The checks above
# refuse a cache that is someone else's, but not a copy of someone else's cache the user made
# their own (``cp -r``, a restored CI cache). So each file numba writes for a generated module
# is sealed: beside it, ``NAME.seal`` holds an HMAC of its name and bytes under a key that
# lives outside the cache (``seal_key``) and never leaves this account. A file without a
# seal that this key makes is never loaded: its module is compiled again
# (``sim.kernels.cachefiles.check_compiled``).

SEAL_SUFFIX = ".seal"
SEALED_PREFIX = "sniff_"  # the generated modules' names: only their files are sealed
_KEY_BYTES = 32
_key: bytes | None = None


def _key_folder() -> Path:
    """``$XDG_CONFIG_HOME/sniff`` (else ``~/.config/sniff``) where it can be written, else a
    folder of this user's in the temporary directory: never inside the cache."""
    configured = os.environ.get("XDG_CONFIG_HOME")
    try:
        config = Path(configured) if configured else Path.home() / ".config"
    except RuntimeError:  # no home at all
        config = Path(tempfile.gettempdir())
    folder = config / "sniff"
    return own_folder(folder if _writable(folder) else _private_temporary("sniff-key"))


def seal_key_path() -> Path:
    """Where this account's sealing key lives: ``cache.key`` in ``_key_folder()``."""
    return _key_folder() / "cache.key"


def seal_key() -> bytes:
    """This account's sealing key (``cache.key``, 32 random bytes, mode 600), made at its
    first use; read once per process. One that is not a regular file of the user's own is
    ``UnsafeCache``."""
    global _key
    if _key is not None:
        return _key
    path = seal_key_path()
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(50):
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                                 | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(os.urandom(_KEY_BYTES))
        try:
            descriptor = os.open(path, flags)
        except OSError as error:
            raise UnsafeCache(path, f"cannot be read as sniff's cache key ({error.strerror})") \
                from None
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise UnsafeCache(path, "is not a file: sniff's cache key is a file")
            check_own(path, info)
            key = handle.read(_KEY_BYTES + 1)
        if len(key) == _KEY_BYTES:
            _key = key
            return key
        import time

        time.sleep(0.01)  # another process is writing it
    raise UnsafeCache(path, f"is not {_KEY_BYTES} bytes: remove it, and sniff makes a new key")


def _seal_of(path: Path, data: bytes) -> bytes:
    import hashlib
    import hmac

    return hmac.new(seal_key(), path.name.encode() + b"\0" + data, hashlib.sha256) \
        .hexdigest().encode()


def seal(path: Path) -> None:
    """Seal the file numba just wrote at ``path`` (its bytes as they are now)."""
    from sim.files import write_atomic

    data = _read_regular(path)
    if data is not None:
        mark = _seal_of(path, data)
        write_atomic(path.with_name(path.name + SEAL_SUFFIX),
                     lambda temporary: temporary.write_bytes(mark))


def sealed(path: Path) -> bool:
    """Whether ``path`` is a regular file whose seal this account's key made for its name and
    its bytes as they are now."""
    import hmac

    data = _read_regular(path)
    mark = _read_regular(path.with_name(path.name + SEAL_SUFFIX))
    return data is not None and mark is not None and hmac.compare_digest(
        mark, _seal_of(path, data))


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file (never through a link, never waiting on a FIFO), or None."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read()


def seal_numba_writes() -> None:
    """Make numba seal every file it writes for a generated module (``SEALED_PREFIX``): its
    index and data files are written by ``IndexDataCacheFile._save_index`` and ``_save_data``
    (numba 0.60 to 0.68), wrapped here once per process. Should numba rename them, nothing is
    sealed and every generated module compiles afresh in each process: slow, never unsafe
    (a test fails first)."""
    from numba.core import caching

    cache_file = caching.IndexDataCacheFile
    if getattr(cache_file, "_sniff_sealed", False):
        return
    save_index, save_data = cache_file._save_index, cache_file._save_data

    def _save_index(self, overloads):
        save_index(self, overloads)
        _seal_written(Path(self._index_path))

    def _save_data(self, name, data):
        save_data(self, name, data)
        _seal_written(Path(self._data_path(name)))

    # numba's class, wrapped on purpose (the type checker rightly frowns on both lines)
    cache_file._save_index, cache_file._save_data = _save_index, _save_data  # type: ignore[method-assign]
    cache_file._sniff_sealed = True  # type: ignore[attr-defined]


def _seal_written(path: Path) -> None:
    if path.name.startswith(SEALED_PREFIX):
        try:
            seal(path)
        except OSError:  # no seal: the file is compiled again next time, never trusted
            pass
