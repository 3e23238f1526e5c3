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
user made their own (``cp -r``, a restored CI cache): sniff checks the text of its own
modules and that numba's files are whole, not who compiled them (docs/data-format.md).
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

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
