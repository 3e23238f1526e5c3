"""How a run is played, as one object: threads, resume or overwrite, what is shown, where.

What a run plays (its lineup, its games and its stopping rules: a game count, a precision
target or a sequential test) is its ``sim.run.plan.Plan``; how it is played is a
:class:`RunControl`, built once (by the command line from its flags, or by a notebook user)
and handed down unchanged through ``execute``, ``compare``, ``tune``, ``run_tournament`` and
``measure_openings``, so each option is written once instead of at every level. Changing a
control never changes a table: one seed gives the same games for any threads, scheduler or
chunking.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, get_args

from sim.errors import SettingError

if TYPE_CHECKING:  # Dask's module is imported only for a --scheduler
    from sim.cluster.dask import DaskCluster

__all__ = ["mode_of", "numba_threads", "quiet_notice", "RunControl", "stderr_notice"]

# A run folder's mode: a new run, a run that replaces the one there, or the one there resumed
Mode = Literal["new", "overwrite", "resume"]
MODES: tuple[Mode, ...] = get_args(Mode)


def stderr_notice(message: str) -> None:
    """The default notice: one ``sniff:`` line on stderr, written above a progress bar."""
    from tqdm import tqdm

    from sim.display.formatting import printable

    # a folder's name is data: escaped, on one line
    tqdm.write(printable(f"sniff: {message}", one_line=True), file=sys.stderr)


def quiet_notice(message: str) -> None:
    """A notice that says nothing (``--quiet``)."""


def mode_of(resume: bool, overwrite: bool) -> Mode:
    """The folder mode of the two switches a caller has: ``resume`` and ``overwrite``."""
    if resume and overwrite:
        raise SettingError("{resume} and {overwrite} exclude each other")
    return "resume" if resume else "overwrite" if overwrite else "new"


@dataclass(frozen=True)
class RunControl:
    """How to play a run (never what: that is the ``Plan``).

    ``mode``: ``"new"`` (the folder must be absent or empty), ``"overwrite"`` (replace the run
    there) or ``"resume"`` (play only its missing chunks). ``threads``: numba threads (with a
    scheduler, each task's). ``progress``: a progress bar on stderr. ``command``: the line
    recorded in the manifest. ``notice(line)`` gets what a run says along the way (a kernel
    compile too) and ``alert(line)`` (default ``notice``) what a resume must say even when
    notices are off: a bad part it set aside, and where. ``announce()`` is called once the
    folder is ready, ``on_chunk(chunk)`` after each chunk is written (tests use it to
    interrupt). ``scheduler`` (``tcp://HOST:PORT``, ``local:N``
    or an open ``sim.cluster.dask.DaskCluster`` several runs share) plays the chunks on Dask,
    with the same tables. ``check_space`` refuses a run whose estimated size exceeds the free
    disk space.

    Attributes:
        mode: ``new``, ``overwrite`` or ``resume``.
        threads: numba threads (with a scheduler, each task's).
        progress: a progress bar on stderr.
        command: the line recorded in the manifest.
        notice: called with each notice line.
        alert: called with each alert line (None: the notices').
        announce: called once the folder is ready (None: nothing).
        on_chunk: called with each chunk's number after it is written (None: nothing).
        scheduler: the Dask scheduler: an address, a cluster, or None for this process.
        check_space: check first that the disk holds the run.
    """

    mode: Mode = "new"
    threads: int | None = None
    progress: bool = False
    command: str = ""
    notice: Callable[[str], None] = stderr_notice
    alert: Callable[[str], None] | None = None
    announce: Callable[[], None] | None = None
    on_chunk: Callable[[int], None] | None = None
    scheduler: str | DaskCluster | None = None
    check_space: bool = True

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SettingError(f"{{mode}} must be one of {', '.join(MODES)}, got {self.mode!r}")

    def but(self, **changes) -> RunControl:
        """A copy with ``changes`` (a pairing's folder mode, a caller's ``on_chunk``)."""
        return replace(self, **changes)

    @property
    def alerts(self) -> Callable[[str], None]:
        """Where the lines a resume must say go: ``alert``, else ``notice``."""
        return self.alert or self.notice

    def check(self) -> None:
        """Refuse a bad scheduler (or a missing Dask) or thread count before anything is
        created."""
        if self.scheduler is None:
            check_threads(self.threads)
            return
        from sim.cluster.dask import check_scheduler, check_threads_option

        check_scheduler(self.scheduler)
        check_threads_option(self.threads)


@contextmanager
def numba_threads(threads: int | None) -> Iterator[None]:
    """Within the block, numba's threads are ``threads`` (checked; None leaves them); the
    previous count is restored however it ends."""
    if threads is None:
        yield
        return
    import numba

    check_threads(threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def check_threads(threads: int | None) -> None:
    """Threads of a local run: 1 to this machine's cores (numba's thread count)."""
    import numba

    if threads is None:
        return
    # numba.config sets its settings when imported, out of the type checker's sight
    maximum = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= maximum:
        raise SettingError(f"{{threads}} must be from 1 to {maximum} (this machine's cores), "
                           f"got {threads}")
