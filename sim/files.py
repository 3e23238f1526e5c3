"""Files written whole: the project's atomic writers, one home for all of them.

- ``write_atomic`` replaces a file (a temporary beside it, synced, renamed into place): a
  run folder's files, a training folder's, a model file.
- ``place_new`` moves a finished temporary file to its name unless a file is already there
  (a run folder's parts, which any of several writers may finish first).
- ``write_once`` writes a file that never changes once there (a temporary linked into
  place): the cache's generated modules and copied model files. Rewriting a generated
  module would change its mtime and void numba's cache beside it, and a concurrent writer
  (another worker, another process) may win the race with an identical file.

And the one safe way to open what a folder holds (``read_regular``, ``open_regular``,
``open_lock_file``): a folder may come from anyone, so a name that is a FIFO, a device, a
folder or (for a file sniff writes) a link is refused with one ``UnsafeFile`` line before a
byte is read or written. Readers open non-blocking and check the type of what they opened,
so a FIFO never blocks them and ``/dev/zero`` is never read; every read is bounded.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "check_replaceable", "kind_of", "link_problem", "link_problems", "link_words",
    "open_lock_file", "open_regular", "own_folder", "own_inode", "place_new", "read_regular",
    "refuse_links", "TEMP_SUFFIX", "UnsafeFile", "write_atomic", "write_once"
]

TEMP_SUFFIX = ".tmp"  # of every temporary file (a killed run's are cleared by resume)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


class UnsafeFile(OSError):
    """A name that is not a regular file where sniff reads or writes one (a FIFO, a device,
    a folder, a link where links are refused), or a file over its size bound. An
    ``OSError``, so every command's error mapping prints it as one line."""

    def __init__(self, path, why: str) -> None:
        super().__init__(errno.EINVAL, why, str(path))

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def kind_of(mode: int) -> str:
    """What a file mode is, in words: ``a FIFO``, ``a device``..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISLNK(mode):
        return "a link"
    if stat.S_ISREG(mode):  # where a folder belongs (own_folder)
        return "a file"
    return "not a regular file"


def _refuse(path, mode: int, what: str) -> UnsafeFile:
    return UnsafeFile(path, f"is {kind_of(mode)}, not a regular {what} (sniff reads and "
                            "writes only regular files)")


def open_regular(path: Path, what: str = "file", follow: bool = True) -> int:
    """A descriptor open for reading on the regular file ``path``, never blocking: opened
    with ``O_NONBLOCK`` (a FIFO does not wait for a writer) and checked with ``fstat``
    (what was opened is what is read; a link to a FIFO or a device is refused).
    ``follow=False`` refuses a link too. ``FileNotFoundError`` passes through."""
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        descriptor = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP and not follow:
            raise UnsafeFile(path, f"is a link, not a regular {what} (sniff never follows "
                                   "one here)") from None
        raise
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", str(path))
        raise _refuse(path, mode, what)
    return descriptor


def read_regular(path: Path, limit: int, what: str = "file", follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (``UnsafeFile``
    if it holds more: at most ``limit + 1`` are ever read), through ``open_regular``."""
    with os.fdopen(open_regular(path, what, follow), "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(path, f"is larger than {size_words(limit)}: not a {what} sniff "
                               "writes")
    return data


def size_words(size: int) -> str:
    return f"{size // 2**20} MiB" if size >= 2**20 else f"{size // 2**10} KiB"


def open_lock_file(path: Path) -> int:
    """A descriptor open for reading and writing on the lock file ``path``, created if
    missing; a link (wherever it points), a FIFO or a device there is ``UnsafeFile``, so a
    shared folder's ``.lock`` can never make a writer truncate a file outside it."""
    try:
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC,
                             0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise UnsafeFile(path, "is a link, not the folder's lock file (sniff never "
                                   "writes through one)") from None
        if error.errno == errno.EISDIR:
            raise UnsafeFile(path, "is a folder, not the folder's lock file") from None
        raise
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise _refuse(path, mode, "lock file")
    return descriptor


def own_folder(path: Path, what: str) -> Path:
    """``path`` as a folder of its own (created if missing), never a link or a file: a
    run's ``.partial/`` and ``set-aside/``, which a writer fills and a resume empties, so a
    link there would carry its writes (or its deletions) out of the folder."""
    path = Path(path)
    try:
        path.mkdir()
    except FileExistsError:
        pass
    mode = os.lstat(path).st_mode
    if not stat.S_ISDIR(mode):
        raise UnsafeFile(path, f"is {kind_of(mode)}, not the {what} folder of the run "
                               "(sniff writes only into a real folder of its own)")
    return path


def check_replaceable(path: Path, what: str = "file") -> None:
    """Refuse to replace ``path`` unless it is absent or a regular file (``lstat``: a link
    is refused, wherever it points): a rename over a device node, a FIFO or a link to
    ``/dev/stdout`` would destroy it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise UnsafeFile(path, f"is {kind_of(mode)}, not a {what} sniff may replace")


def link_in(folder: Path, name: str | Path) -> Path | None:
    """The first name of ``folder/name`` below ``folder`` that is a link (a table folder,
    then the file itself), or None. Sniff never makes a link inside its folders (its
    writers refuse one), so a link there was put by hand and reaches outside the record."""
    path = Path(folder)
    for part in Path(name).parts:
        path = path / part
        if path.is_symlink():
            return path
    return None


def link_words(path: Path) -> str:
    """``a link to TARGET``, and what the target is when it is neither a file nor a folder
    (or not there)."""
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return f"a link to {target} (which is not there)"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return f"a link to {target}"
    return f"a link to {target} ({kind_of(mode)})"


def link_problem(folder: Path, name: str, what: str = "regular file") -> str | None:
    """``sniff verify``'s line for a link at ``folder/name`` or at a folder above it inside
    ``folder`` (``what`` the file or folder sniff wrote there), or None. Writers refuse
    links, so a sniff folder never has one: whatever it points to, it is not what was
    written with this folder, even with the same bytes."""
    link = link_in(folder, name)
    if link is None:
        return None
    what = what if link == Path(folder) / name else "folder"
    return (f"{link}: is {link_words(link)}, not the {what} written with this folder (sniff "
            "never makes a link in its folders)")


def link_problems(folder: Path, names: dict[str, str]) -> list[str]:
    """``link_problem`` of each of a folder's own files and folders (``names``: name -> what
    it is, e.g. ``{"games": "games folder"}``), one line each."""
    return [line for line in (link_problem(folder, name, what) for name, what in
                              names.items()) if line]


def refuse_links(folder: Path, names: Iterable[str], kind: str) -> None:
    """Before ``--overwrite`` removes a folder's own files and folders (``names``): a link
    among them is one ``UnsafeFile`` line and nothing is removed. Removing through a link
    would delete what it points to, outside the folder (another run's parts), and sniff
    never makes one, so a link there was put by hand."""
    for name in names:
        path = Path(folder) / name
        if path.is_symlink():
            raise UnsafeFile(path, f"is {link_words(path)}, not a file or folder of {kind}: "
                                   "--overwrite removes nothing through a link (remove the "
                                   "link, or choose another output folder)")


def own_inode(path: Path) -> None:
    """Before appending to ``path`` (a ledger, a training log): if the regular file has
    other hard links (a snapshot made with ``cp -al``, another folder's copy), give this
    name a copy of its own first, so the append changes only this folder. A rename-based
    writer (``write_atomic``) never needs it: it makes a new file."""
    import shutil

    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(info.st_mode) and info.st_nlink > 1:
        write_atomic(path, lambda temporary: shutil.copyfile(path, temporary))


def write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """The one atomic file writer: ``write(temporary)`` (what it returns is not used),
    synced, then renamed into place.

    The temporary file is hidden and beside ``path`` (``.NAME.PID-RANDOM.tmp``: no dataset
    reader picks it up, and a rename within a folder is atomic), so a reader sees the old
    file or the new one, never part of one. Its name is unique, so two writers of one file
    (two processes, a folder someone else also writes) never write into each other's
    temporary: the last rename wins, whole.
    """
    path = Path(path)
    check_replaceable(path)
    temporary = path.with_name(
        f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:  # created here, exclusively and unfollowed: nothing planted is written through
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
                         | _CLOEXEC, 0o644))
        write(temporary)
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        check_replaceable(path)
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
