"""The shared kernel: every built-in strategy in one kernel, compiled once per machine.

Why: a kernel is compiled per set of strategies, and compiling one takes 20-60 s (the whole
game loop is compiled around the strategies, see ``sim.kernels.generate``), so each new pairing of
built-in strategies used to wait that long. A kernel holding all of them takes minutes to
compile, too long for a first run. So the first run compiles only what it needs and starts
``python -m sim.kernels.precompile`` in the background (lowest priority, once per machine and
version of the code); from then on every lineup of built-in strategies plays in that one
cached kernel and starts at once. A strategy's dispatch id never reaches a result, so the
games are the same in either kernel.

``SNIFF_PRECOMPILE=0`` turns the background compile off (the test suite does, so that it
never competes with the tests for the cores).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sim.kernels import generate as kernels
from strategies import BUILTIN_MODULES, Strategy, available, get

PRECOMPILE_ENV = "SNIFF_PRECOMPILE"
LOCK_NAME = "precompile.lock"
LOG_NAME = "precompile.log"
# A trace compiles the kernel's other function; both must be ready before lineups move over.
FUNCTIONS = ("trace_game", "play_batch")

_own_kernels = False  # set by own_kernels(): every set of strategies in a kernel of its own
# Shared kernels found compiled, by cache folder and strategies (stays so in a process).
_ready: set[tuple[str, tuple[str, ...]]] = set()
_started: set[str] = set()  # cache folders this process started a background compile for
# In every kernel, so that every lineup of the two (the default run, traces, most tests)
# shares one compiled kernel.
ALWAYS_COMPILED = ("greedy", "random")


def builtin_strategies() -> list[Strategy]:
    """Every built-in strategy, in name order (the dispatch ids of the shared kernel)."""
    return [s for s in available().values() if s.module in BUILTIN_MODULES]


def enabled() -> bool:
    return os.environ.get(PRECOMPILE_ENV, "1").strip() not in ("0", "no", "false", "off")


def shared_kernel_ready(builtins: Sequence[Strategy]) -> bool:
    """Whether the kernel of every built-in strategy is compiled and in the cache."""
    key = (str(kernels.cache_dir()), tuple(s.name for s in builtins))
    if key not in _ready:
        path = kernels.kernel_path(list(builtins))[0]
        if kernels.is_compiled(path, FUNCTIONS) and not lock_held(path.parent):
            _ready.add(key)
    return key in _ready


@contextmanager
def own_kernels() -> Iterator[None]:
    """Inside this block every set of strategies plays in a kernel of its own (the bench
    measures what the shared kernel's wider dispatch costs)."""
    global _own_kernels
    previous, _own_kernels = _own_kernels, True
    try:
        yield
    finally:
        _own_kernels = previous


def kernel_set(strategies: Sequence[Strategy]) -> list[Strategy]:
    """The strategies of the kernel to play ``strategies`` in.

    Built-in strategies only: every built-in once the shared kernel is compiled; until
    then ``strategies`` themselves, and the shared kernel's compile is started in the
    background. A plugin among them: ``strategies`` (a plugin gets a kernel of its own).
    """
    strategies = list(strategies)
    if _own_kernels or not all(s.module in BUILTIN_MODULES for s in strategies):
        return strategies
    builtins = builtin_strategies()
    if len(strategies) == len(builtins):
        return strategies
    if shared_kernel_ready(builtins):
        return builtins
    start_background(builtins)
    return strategies


# --- the background process


def lock_held(directory: Path) -> bool:
    """Whether a live process holds the precompile lock (a dead holder's lock is removed)."""
    lock = directory / LOCK_NAME
    try:
        pid = int(lock.read_text().strip() or 0)
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


def failed_marker(path: Path) -> Path:
    return path.with_suffix(".failed")


def start_background(builtins: Sequence[Strategy]) -> bool:
    """Start ``python -m sim.kernels.precompile`` unless it runs, ran, failed or is turned off.

    Returns whether a process was started (and says so through ``kernels.notice``).
    """
    if not enabled():
        return False
    path = kernels.kernel_path(list(builtins))[0]
    # Once per process: the next batch may come before the child has taken its lock.
    if (str(path.parent) in _started or lock_held(path.parent)
            or failed_marker(path).exists()):
        return False
    _started.add(str(path.parent))
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, NUMBA_NUM_THREADS="1", PYTHONPATH=os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p))
    with open(path.parent / LOG_NAME, "ab") as log:
        subprocess.Popen(
            [sys.executable, "-m", "sim.kernels.precompile"], stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT, env=env, cwd=root, start_new_session=True,
        )
    if kernels.notice is not None:
        kernels.notice(
            "compiling every built-in strategy into one kernel in the background (once per "
            "machine, a few minutes at low priority); after that, any lineup of built-in "
            f"strategies starts at once (turn off with {PRECOMPILE_ENV}=0)"
        )
    return True


def kernel_for(strategies: Sequence[Strategy], kernel_strategies: Sequence[Strategy] = (),
               uses: tuple[str, ...] = ("play_batch",), shared: bool = True):
    """The kernel holding these strategies (and ``greedy``, ``random``, ``kernel_strategies``:
    see :func:`compile_lineup`) and its strategies' names in dispatch order. ``shared``
    False keeps them in a kernel of their own (``sim.kernels.batch``: the shared kernel's
    resumable loop would compile every built-in strategy again, for minutes)."""
    by_name = {name: get(name) for name in ALWAYS_COMPILED}
    by_name.update({strategy.name: strategy for strategy in kernel_strategies})
    by_name.update({strategy.name: strategy for strategy in strategies})
    # Python policies (register_python) are decided outside the kernel.
    chosen = [by_name[name] for name in sorted(by_name) if not by_name[name].python]
    if shared:
        chosen = kernel_set(chosen)
    return _load(chosen, uses), [strategy.name for strategy in chosen]


def _load(strategies: list[Strategy], uses: tuple[str, ...]):
    """``load_kernel``, whose compile notice is about ``play_batch``: a caller that uses only
    ``trace_game`` (``sniff play``, ``trace``) is not told of a compile its cache spares it."""
    if (uses == ("play_batch",) or kernels.is_loaded(strategies)
            or not kernels.is_compiled(kernels.kernel_path(strategies)[0], uses)):
        return kernels.load_kernel(strategies)
    said, kernels.notice = kernels.notice, None
    try:
        return kernels.load_kernel(strategies)
    finally:
        kernels.notice = said
