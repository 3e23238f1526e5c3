"""Which compiled code a lineup plays in, and the background compile of every built-in.

Every lineup plays in the one game loop (``generate.engine_kernel``), each seat calling its
strategy's own compiled ``choose`` through its address (``generate.chooser``). So a lineup
compiles nothing that another lineup compiled before; the first use on a machine compiles the
loop's entry points it calls (each once) and the strategies it plays (each once).

So that later commands compile nothing at all, the first process that finds something missing
starts ``python -m sim.precompile`` in the background (lowest priority, once per
machine and version of the code): it compiles the loop's other entry points, every built-in
strategy and ``sniff hint``'s search. ``SNIFF_PRECOMPILE=0`` turns it off (the test suite
does, so that it never competes with the tests for the cores).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from sim.children import ROOT, child_env
from sim.files import UnsafeFile, read_regular
from sim.kernels import cachefiles
from sim.kernels import generate as kernels
from strategies import BUILTIN_MODULES, Strategy, available

__all__ = [
    "builtin_strategies", "done_marker", "failed_marker", "held_by_another", "lock_held",
    "LOCK_NAME", "LOG_NAME", "odd_lock", "open_log", "PRECOMPILE_ENV", "start_background"
]

PRECOMPILE_ENV = "SNIFF_PRECOMPILE"
LOCK_NAME = "precompile.lock"
LOG_NAME = "precompile.log"
DONE_NAME = "precompile-{}.done"
_started: set[str] = set()  # cache folders this process started a background compile for


def builtin_strategies() -> list[Strategy]:
    """Every built-in strategy, in name order."""
    return [s for s in available().values() if s.module in BUILTIN_MODULES]


def enabled() -> bool:
    return os.environ.get(PRECOMPILE_ENV, "1").strip() not in ("0", "no", "false", "off")


def kernel_for(strategies: Sequence[Strategy], uses: tuple[str, ...] = ("play_batch",)
               ) -> tuple[ModuleType, dict[str, int]]:
    """The game loop and the address of each of these strategies' compiled ``choose``, by
    name (Python strategies, ``register_python``, are decided outside: none). Starts the
    background compile of the rest when this machine lacks it."""
    kernel = kernels.engine_kernel(uses)
    addresses = {s.name: kernels.chooser(s) for s in strategies if not s.python}
    start_background()
    return kernel, addresses


# --- the background process


def done_marker() -> Path:
    """The file the background compile leaves when it has compiled everything, named by the
    engine's generated module (a new engine compiles again)."""
    return cachefiles.cache_dir() / DONE_NAME.format(kernels.engine_path().stem)


def _read_lock(lock: Path) -> int:
    """The pid the precompile lock names, read without following a link or waiting on a
    FIFO (a cache from someone else may hold anything there: ``UnsafeFile``)."""
    return int(read_regular(lock, 64, "precompile lock", follow=False).strip() or 0)


def odd_lock(directory: Path) -> bool:
    """Whether the precompile lock is there but not a regular file (a link, a FIFO, a
    folder): no background compile is started on such a cache, and nothing waits for one."""
    try:
        _read_lock(directory / LOCK_NAME)
    except (UnsafeFile, IsADirectoryError):
        return True
    except (OSError, ValueError):
        return False
    return False


def held_by_another(directory: Path) -> bool:
    """Whether a live process other than this one holds the precompile lock (the background
    process itself must not wait for its own compile)."""
    try:
        holder = _read_lock(directory / LOCK_NAME)
    except (OSError, ValueError):
        return False
    return holder != os.getpid() and lock_held(directory)


def lock_held(directory: Path) -> bool:
    """Whether a live process holds the precompile lock (a dead holder's lock is removed)."""
    lock = directory / LOCK_NAME
    try:
        pid = _read_lock(lock)
    except (OSError, ValueError):
        return False
    if pid > 0:
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            pass
        except PermissionError:
            return True
    lock.unlink(missing_ok=True)
    return False


def open_log(path: Path):
    """The background compile's log, opened to append without following a link or waiting
    on a FIFO; what is not a regular file there gets no log (``os.devnull``)."""
    flags = (os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        descriptor = os.open(path, flags, 0o600)
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            os.close(descriptor)
            raise UnsafeFile(path, "not a regular file")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "ab")
    except OSError:
        return open(os.devnull, "ab")


def failed_marker() -> Path:
    """The marker file that says the background compile failed on this machine."""
    return done_marker().with_suffix(".failed")


def start_background(first: tuple[str, ...] = ()) -> bool:
    """Start ``python -m sim.precompile`` unless it runs, ran, failed or is turned off;
    ``first``: the parts it compiles first (``sim.precompile.PARTS``).

    Returns whether a process was started (and says so through ``kernels.notice``).
    """
    if not enabled():
        return False
    directory = cachefiles.cache_dir()
    # Once per process: the next batch may come before the child has taken its lock.
    if (str(directory) in _started or done_marker().exists() or lock_held(directory)
            or failed_marker().exists() or odd_lock(directory)):
        return False
    _started.add(str(directory))
    env = child_env(dict(os.environ, NUMBA_NUM_THREADS="1"))
    with open_log(directory / LOG_NAME) as log:
        subprocess.Popen(
            [sys.executable, "-P", "-m", "sim.precompile", *first], stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True,
        )
    if kernels.notice is not None:
        kernels.notice(
            "compiling the rest of the engine and every built-in strategy in the background "
            "(once per machine, a minute or two at low priority; turn off with "
            f"{PRECOMPILE_ENV}=0)"
        )
    return True
