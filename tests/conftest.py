"""Test-suite settings shared by every test module.

Most of the suite's time is numba compiling kernels (``sim.kernels.generate``), one core per
xdist worker. What keeps a cold run short (issue #50, docs/testing.md):

- The shared kernel of every built-in strategy (minutes to compile) is compiled by ONE
  worker, under a file lock; the other loads it from the cache once it is there, instead of
  compiling it again at the same time. The worker that compiles it compiles the hint search
  and ``compiled_strategies`` right after, in seconds (their callees are compiled by then).
- Files marked ``no_shared_kernel`` (they play only kernels of their own, or none) do not
  wait for it, and the heaviest files run first (``FIRST``, with ``--no-loadscope-reorder``
  in ``pyproject.toml``): while one worker compiles the shared kernel, the other compiles
  the kernels of those files, and no long file is left for the end.
"""

import os
from pathlib import Path

import compiled_strategies
import pytest
from compile_lock import compiling_alone

from sim.kernels import generate as kernels
from sim.kernels.precompile import compile_shared
from sim.kernels.shared import builtin_strategies, shared_kernel_ready

# The background compile of the shared kernel (sim.kernels.shared) would compete with the
# tests for the cores; tests that exercise it turn it back on for themselves.
os.environ["SNIFF_PRECOMPILE"] = "0"

# Files in the order workers take them first, the slowest first (a cold run's compiles, see
# docs/testing.md); every other file follows in name order. The first needs the shared
# kernel, so that its compile starts at once; the next four are no_shared_kernel, for the
# other worker meanwhile.
FIRST = (
    "test_batch.py",
    "test_plugin_safety.py", "test_kernel_cache.py", "test_openspiel.py", "test_env.py",
    "test_hint.py", "test_serve_api.py", "test_store_foreign_folders.py", "test_strategies.py",
    "test_shared_kernel.py", "test_cluster.py", "test_simulate.py", "test_engine_vs_oracle.py",
    "test_dask.py", "test_expert.py", "test_serve_load.py", "test_serve_browser.py",
    "test_learned.py", "test_report_openings.py", "test_run_integrity.py",
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "no_shared_kernel: the file plays no lineup in the shared kernel of every "
        "built-in strategy, so its tests need not wait for that kernel's compile")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The files of ``FIRST`` first, in its order; the rest, and each file's tests, as found."""
    rank = {name: index for index, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(FIRST)))


@pytest.fixture(scope="session")
def shared_kernel_compiled() -> None:
    """Compile (or load) the kernel of every built-in strategy, once for all workers.

    ``test_strategies`` plays in exactly this kernel anyway, and once it is compiled every
    lineup of built-in strategies in every test (and in the CLI processes tests start)
    loads it instead of compiling a kernel of its own: one compile for the whole suite. The
    lock makes a second worker wait for the first's compile and load it from the cache.
    """
    builtins = builtin_strategies()
    folder = kernels.kernel_path(builtins)[0].parent
    with compiling_alone(folder / "tests-shared-kernel.lock"):
        compiles_here = not shared_kernel_ready(builtins)
        compile_shared(builtins)  # else loads what another worker compiled
        if not compiles_here:
            return
        # This process has just compiled every built-in strategy and the engine around them:
        # the hint search, the tests' expert/learned wrapper and ``sniff learn``'s games,
        # which call them, compile here in seconds (a minute or more each in a process that
        # loaded the kernel). Under the lock, so that the other worker loads them.
        _compile_hint_search()
        compiled_strategies.compile_now()
        _compile_learn_games()


@pytest.fixture(scope="module", autouse=True)
def shared_kernel_first(request: pytest.FixtureRequest) -> None:
    """The shared kernel before a module's tests, unless the module is ``no_shared_kernel``
    (module scope: before the module's own fixtures, which may move ``SNIFF_CACHE_DIR``)."""
    if request.node.get_closest_marker("no_shared_kernel") is None:
        request.getfixturevalue("shared_kernel_compiled")


@pytest.fixture(scope="session")
def hint_search_compiled(shared_kernel_compiled: None) -> None:
    """``sniff hint``'s search (a minute of compile, ``sim.hint.kernel``) compiled once for
    both workers: the files that search ask for it (``pytest.mark.usefixtures``); the worker
    that compiles the shared kernel compiles it with it, the other loads it."""
    _compile_hint_search()


def _compile_hint_search() -> None:
    from cli_helpers import POSITION_TEXT

    from sim.hint.estimate import analyse
    from sim.hint.position import parse_position

    with compiling_alone(kernels.cache_dir() / "tests-hint-search.lock"):
        analyse(parse_position(POSITION_TEXT), 2)


def _compile_learn_games() -> None:
    """Compile ``sim.learn.kernel``'s ``play_games`` for the argument types
    ``sim.learn.tasks.play_records`` passes (a training then loads it from the cache)."""
    from numba import types

    from sim.learn import kernel as learn_kernel

    learn_kernel.load().play_games.compile((
        types.uint64, types.int64[::1], types.int64[::1], types.int64[::1], types.int64,
        types.float64[:, ::1], types.int64,
        types.Tuple((types.float32[:, ::1], types.float64[::1], types.float64[::1])),
        types.int64[::1]))
