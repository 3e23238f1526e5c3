"""Test-suite settings shared by every test module.

Most of a cold suite's time is numba compiling (docs/testing.md). The game loop is compiled
once (``sim.kernels.generate.engine_kernel``) and each strategy on its own, all cached under
``SNIFF_CACHE_DIR``; what keeps a cold run short is that each is compiled by ONE of the two
xdist workers, under a file lock, while the other waits and then loads it from the cache
(``engine_compiled``, ``hint_search_compiled``, ``tests/helpers/compiled_strategies.py``).
"""

import os
from pathlib import Path

import pytest

from sim.kernels import cachefiles
from sim.kernels import generate as kernels
from tests.helpers.compile_lock import compiling_alone, try_alone

# The background compile (sim.kernels.shared) would compete with the tests for the cores;
# tests that exercise it turn it back on for themselves.
os.environ["SNIFF_PRECOMPILE"] = "0"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", action="store_true",
                     help="write each test file's total duration to tests/durations.txt (keyed "
                          "by its path under tests/), slowest first (the order later runs "
                          "take the files in)")


_durations: dict[str, float] = {}


def file_key(nodeid: str) -> str:
    """A test file's key in ``durations.txt``: its path relative to ``tests/``
    (``sim/stats/test_tally.py``), from a node id (relative to the repository's root, where
    pyproject.toml is). Basenames alone collide: the tree mirrors the packages, and two
    rooms may each have a ``test_study.py``."""
    return nodeid.split("::", 1)[0].removeprefix("tests/")


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Add up each file's time (setup, call and teardown; reports reach the xdist
    controller too)."""
    key = file_key(report.nodeid)
    _durations[key] = _durations.get(key, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not session.config.getoption("--record-durations") or hasattr(session.config,
                                                                      "workerinput"):
        return
    lines = ["# seconds  file (relative to tests/)   "
             "(pytest --record-durations; tests/conftest.py reads it)"]
    lines += [f"{seconds:8.1f}  {name}" for name, seconds in
              sorted(_durations.items(), key=lambda item: -item[1])]
    Path(__file__).with_name("durations.txt").write_text("\n".join(lines) + "\n")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slowest files first (``SLOWEST``: ``durations.txt`` beside this file, as the last
    ``pytest --record-durations`` measured them), so that no long file is left for the end;
    the rest, and each file's tests, as found."""
    rank = {key: index for index, key in enumerate(SLOWEST)}
    items.sort(key=lambda item: rank.get(file_key(item.nodeid), len(SLOWEST)))


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
    workers, in two halves (whole games and traces; a batch's resumable games), each under
    its own lock: a worker compiles the half no one holds first, so the two workers compile
    the halves at once on their two cores, then each loads the other's from the cache."""
    halves = {"tests-engine-whole.lock": _compile_whole_games,
              "tests-engine-batch.lock": _compile_batches}
    folder = cachefiles.cache_dir()
    while halves:
        name = next((n for n in halves if try_alone(folder / n)), next(iter(halves)))
        with compiling_alone(folder / name):
            halves.pop(name)()


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
    from sim.hint.estimate import analyse
    from sim.hint.position import parse_position
    from tests.helpers.cli import POSITION_TEXT

    with compiling_alone(cachefiles.cache_dir() / "tests-hint-search.lock"):
        analyse(parse_position(POSITION_TEXT), 2)


def _lineup():
    from sim.kernels.runner import lineup_of
    from strategies import parse_spec

    return lineup_of(2, [parse_spec("greedy"), parse_spec("random")])


def _compile_whole_games() -> None:
    """Whole games (``play_batch``), a trace (``trace_game``) and ``sniff openings``' deals
    (``first_deals``, ``opening_points``)."""
    import numpy as np

    from sim.kernels.runner import play_batch, trace_events

    play_batch(_lineup(), 1, np.arange(4, dtype=np.int64))
    trace_events(_lineup(), 1, 0)
    engine = kernels.engine_kernel(("first_deals", "opening_points"))
    engine.first_deals(np.uint64(1), np.arange(2, dtype=np.int64), 2)
    engine.opening_points()


def _compile_batches() -> None:
    """A batch's step and a one-game batch (``step_batch``, ``advance_serial``, ...)."""
    from sim.kernels.batch import GameBatch

    for n_games in (1, 2):
        batch = GameBatch(2, [_lineup().seats[0], None], n_games, 1)
        while not batch.done:
            batch.advance(batch.pending().moves[:, 0].copy())
