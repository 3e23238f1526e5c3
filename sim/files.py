"""Files written once, whole: the generated modules and copied model files of the cache.

Written once, atomically (a temporary file linked into place): rewriting a generated module
would change its mtime and void numba's cache beside it, and a concurrent writer (another
worker, another process) may win the race with an identical file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_once(path: Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` unless the file exists; the path."""
    if path.exists():
        return path
    with tempfile.NamedTemporaryFile("wb", dir=path.parent, suffix=".tmp", delete=False) as f:
        f.write(data)
    try:
        os.link(f.name, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(f.name)
    return path
