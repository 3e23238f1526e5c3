"""Test-suite settings shared by every test module.

Most of a cold suite's time is numba compiling (docs/testing.md). The game loop is compiled
once (``sim.kernels.generate.engine_kernel``) and each strategy on its own, all cached under
``SNIFF_CACHE_DIR``; what keeps a cold run short is that each is compiled by ONE of the two
xdist workers, under a file lock, while the other waits and then loads it from the cache
(``engine_compiled``, ``hint_search_compiled``, ``tests/compiled_strategies.py``).
"""

import os
from pathlib import Path

import pytest
from compile_lock import compiling_alone

from sim.kernels import generate as kernels

# The background compile (sim.kernels.shared) would compete with the tests for the cores;
# tests that exercise it turn it back on for themselves.
os.environ["SNIFF_PRECOMPILE"] = "0"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", action="store_true",
                     help="write each test file's total duration to tests/durations.txt, "
                          "slowest first (the order later runs take the files in)")


_durations: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each file's time (setup, call and teardown; reports reach the xdist
    controller too)."""
    name = Path(report.fspath).name
    _durations[name] = _durations.get(name, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not session.config.getoption("--record-durations") or hasattr(session.config,
                                                                      "workerinput"):
        return
    lines = ["# seconds  file   (pytest --record-durations; tests/conftest.py reads it)"]
    lines += [f"{seconds:8.1f}  {name}" for name, seconds in
              sorted(_durations.items(), key=lambda item: -item[1])]
    Path(__file__).with_name("durations.txt").write_text("\n".join(lines) + "\n")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (``SLOWEST``: ``durations.txt`` beside this file, as the last
    ``pytest --record-durations`` measured them), so that no long file is left for the end;
    the rest, and each file's tests, as found."""
    rank = {name: index for index, name in enumerate(SLOWEST)}
    items.sort(key=lambda item: rank.get(Path(str(item.fspath)).name, len(SLOWEST)))


def _slowest() -> tuple[str, ...]:
    path = Path(__file__).with_name("durations.txt")
    try:
        return tuple(line.split()[1] for line in path.read_text().splitlines()
                     if line.strip() and not line.startswith("#"))
    except (OSError, IndexError):
        return ()


SLOWEST = _slowest()


@pytest.fixture(scope="session")
def engine_compiled() -> None:
    """The game loop's entry points and the default strategies compiled once for both
    workers: the first worker to need them compiles under the lock, the other waits and
    loads them from the cache."""
    with compiling_alone(kernels.cache_dir() / "tests-engine.lock"):
        compile_engine()


@pytest.fixture(scope="module", autouse=True)
def engine_first(request: pytest.FixtureRequest) -> None:
    """The engine before a module's tests (module scope: before the module's own fixtures,
    which may move ``SNIFF_CACHE_DIR``)."""
    request.getfixturevalue("engine_compiled")


@pytest.fixture(scope="session")
def hint_search_compiled(engine_compiled: None) -> None:
    """``sniff hint``'s search (a minute of compile, ``sim.hint.kernel``) compiled once for
    both workers: the files that search ask for it (``pytest.mark.usefixtures``)."""
    _compile_hint_search()


def _compile_hint_search() -> None:
    from cli_helpers import POSITION_TEXT

    from sim.hint.estimate import analyse
    from sim.hint.position import parse_position

    with compiling_alone(kernels.cache_dir() / "tests-hint-search.lock"):
        analyse(parse_position(POSITION_TEXT), 2)


def compile_engine() -> None:
    """Play a game of each kind the suite plays (whole games, a trace, a batch's step and a
    one-game batch) with greedy and random: every entry point of the loop compiles here."""
    import numpy as np

    from sim.kernels.batch import GameBatch
    from sim.kernels.runner import lineup_of, play_batch, trace_events
    from strategies import parse_spec

    lineup = lineup_of(2, [parse_spec("greedy"), parse_spec("random")])
    play_batch(lineup, 1, np.arange(4, dtype=np.int64))
    trace_events(lineup, 1, 0)
    for n_games in (1, 2):
        batch = GameBatch(2, [lineup.seats[0], None], n_games, 1)
        while not batch.done:
            batch.advance(batch.pending().moves[:, 0].copy())


@pytest.fixture(scope="session")
def learn_games_compiled(engine_compiled: None) -> None:
    """``sniff learn``'s games compiled once for both workers."""
    with compiling_alone(kernels.cache_dir() / "tests-learn.lock"):
        _compile_learn_games()


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
