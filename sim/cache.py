"""Where sniff's cache goes, and numba's cache of the package's own compiled functions.

``cache_base``: ``SNIFF_CACHE_DIR``, else ``~/.cache/sniff``, else (a home the user cannot
write: a service account, another user's install) a folder of the user's own in the
temporary directory. The generated kernels (``sim.kernels.generate``) and model modules
(``strategies.learned.model_files``) live there. ``use_writable_numba_cache``: numba keeps a
``cache=True`` function's cache beside its code or in the user's cache, and refuses to compile
it ("cannot cache function") where it can write neither; it is then pointed here.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
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
        return Path(configured)
    home = Path.home() / ".cache" / "sniff"
    return home if _writable(home) else _private_temporary("sniff-cache")


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
    numba.config.CACHE_DIR = str(cache_base() / "numba")  # type: ignore[attr-defined]
