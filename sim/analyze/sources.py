"""Where the analysed games come from, and each one's events.

A source is a run folder of ``sniff simulate``, each pairing of a tournament folder, or a
JSON Lines trace file (``sniff trace``, or a game a person played with ``sniff play`` or at
the browser table). Games are sampled from each source deterministically: the ids are drawn
by a generator seeded from the analysis seed and the source's name, so the same seed
samples the same games whatever the parts, threads or machines.

A run's game is played again from its recorded seed, lineup and game id (its deal and
seat rotation follow from the id), by the same compiled engine that played it: its trace
is the game of the run. So the run must have been played by this code (its kernel
digest), as ``sniff verify --replay`` requires; a trace file's games are checked against
the rules first, as ``sniff replay`` does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import numpy as np

from sim.errors import SniffError


class SourceKind(StrEnum):
    RUN = "run"
    TRACE = "trace"


@dataclass(frozen=True)
class Source:
    """One source of games: ``name`` labels its rows (a run's folder name, a pairing's
    name, a trace file's name)."""

    kind: SourceKind
    name: str
    path: str
    games: int  # games it holds


@dataclass(frozen=True)
class GameRef:
    """One sampled game: its source and its id there (a run's game id, or the game's
    place in a trace file from 0).

    Attributes:
        source: the source the game was sampled from (a run, a pairing, a trace file).
        game: its id there: a run's game id, or its place in a trace file from 0.
    """

    source: str
    game: int


def source_seed(seed: int, name: str) -> int:
    """A 63-bit number from the analysis seed and a name (a source's, a decision's key)."""
    digest = hashlib.sha256(f"{seed}|{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def find_sources(paths: list[Path]) -> list[Source]:
    """The sources of the folders and files given; anything else is one line."""
    from sim.store.io import is_run_folder
    from sim.store.rundata import TOURNAMENT_MANIFEST, pairing_runs

    sources: list[Source] = []
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise SniffError(f"no such run folder, tournament or trace: {path}")
        if path.is_file():
            sources.append(_trace_source(path))
        elif (path / TOURNAMENT_MANIFEST).is_file():
            for _, run_path in pairing_runs(path):
                sources.append(_run_source(run_path, f"{path.name}/{run_path.name}"))
        elif is_run_folder(path):
            sources.append(_run_source(path, path.name))
        else:
            raise SniffError(f"{path} is not a run folder, a tournament folder or a trace "
                             "file of sniff")
    names = [source.name for source in sources]
    if len(set(names)) != len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise SniffError(f"two sources are both named {twice!r}: give each once")
    return sources


def _run_source(path: Path, name: str) -> Source:
    from sim.store.io import open_run

    run = open_run(path)
    return Source(SourceKind.RUN, name, str(path), run.checked.games)


def _trace_source(path: Path) -> Source:
    from sim.table.replay import count_games, read_trace

    events = read_trace(path)
    return Source(SourceKind.TRACE, path.name, str(path), count_games(events))


def sample_games(source: Source, count: int, seed: int) -> list[GameRef]:
    """``count`` games of the source (all when it holds fewer), in id order."""
    if source.kind is SourceKind.TRACE:
        ids = np.arange(min(count, source.games))
        if count < source.games:
            rng = np.random.default_rng(source_seed(seed, source.name))
            ids = np.sort(rng.choice(source.games, size=count, replace=False))
        return [GameRef(source.name, int(game)) for game in ids]
    from sim.audit.reproduce import sample_ids
    from sim.store.io import open_run

    good = open_run(source.path).checked.good
    rng = np.random.default_rng(source_seed(seed, source.name))
    ids = np.sort(sample_ids(good, count, rng))
    return [GameRef(source.name, int(game)) for game in ids]


class GameReader:
    """The events of sampled games: a run's played again, a trace's read (once per file)."""

    def __init__(self, sources: list[Source]) -> None:
        self.sources = {source.name: source for source in sources}
        self._plans: dict[str, object] = {}
        self._traces: dict[str, list[dict]] = {}

    def events(self, ref: GameRef) -> list[dict]:
        """The game's trace events, ``game_start`` first; its labels are per seat."""
        source = self.sources[ref.source]
        if source.kind is SourceKind.TRACE:
            return self._trace_game(source, ref.game)
        return self._run_game(source, ref.game)

    def _trace_game(self, source: Source, game: int) -> list[dict]:
        from sim.hint.tracker import game_slice
        from sim.table.replay import read_trace

        if source.name not in self._traces:
            self._traces[source.name] = read_trace(Path(source.path))
        events = self._traces[source.name]
        check_traced_game(events, game, Path(source.path))
        return game_slice(events, game)

    def _run_game(self, source: Source, game: int) -> list[dict]:
        from sim.kernels.runner import trace_events
        from sim.kernels.trace import EventDecoder, start_event

        plan = self._plan(source)
        rotation = game % plan.players
        rows, _ = trace_events(plan.lineup, plan.seed, game, plan.round_cap,
                               deal_id=game // plan.group, rotation=rotation)
        decoder = EventDecoder(plan.players)
        start = start_event(plan.lineup, plan.seed, game, plan.round_cap)
        seats = plan.lineup.seats
        start["strategies"] = [seats[(seat + rotation) % plan.players].label
                               for seat in range(plan.players)]
        return [start] + [decoder.decode(row) for row in rows]

    def _plan(self, source: Source):
        """The run's plan, once; refused when this code would not play its games."""
        if source.name not in self._plans:
            from sim.run.plan import Plan
            from sim.run.signature import identity_problem, lineup_identity
            from sim.store.io import read_manifest

            manifest = read_manifest(Path(source.path))
            plan = Plan.from_config(manifest["config"])
            if problem := identity_problem(manifest, lineup_identity(plan.lineup)):
                raise SniffError(
                    f"cannot analyse {source.path}: {problem}, so its games cannot be played "
                    "again here; analyse it with the release that played it")
            self._plans[source.name] = plan
        return self._plans[source.name]


def check_traced_game(events: list[dict], game: int, path: Path) -> None:
    """Game ``game`` of a trace checked against the rules, as ``sniff replay`` checks it;
    a game of the browser table played to a house target (lower than the rules') ends
    where a placement reached it: its events up to there are checked, and its end must
    carry that placement's scores. Its positions are valued for the rules' target, as the
    browser's own analysis values them."""
    from sim.table.check import check_game
    from sim.table.replay import check_trace_game

    starts = [i for i, event in enumerate(events) if event.get("event") == "game_start"]
    end = starts[game + 1] if game + 1 < len(starts) else len(events)
    start, last = events[starts[game]] if starts else {}, events[end - 1]
    scores = last.get("scores") if isinstance(last, dict) else None
    house = (last.get("event") == "game_end" and last.get("reason") == "target"
             and isinstance(scores, list) and scores
             and max(scores) < int(start.get("target") or 0))
    if not house:
        check_trace_game(events, game, path)
        return
    check_game(events[starts[game]:end - 1], first=starts[game] + 1, what=str(path),
               finished=False)
    plays = [event for event in events[starts[game]:end - 1] if event["event"] == "play"]
    if not plays or plays[-1].get("scores") != scores:
        raise SniffError(f"{path}: event {end} (game_end) is impossible: it ends the game at "
                         "a target no placement reached; not a game the rules allow (edited?)")


def source_record(source: Source) -> dict:
    return {"kind": source.kind.value, "name": source.name, "path": source.path,
            "games": source.games}


def source_of(record: dict) -> Source:
    return Source(SourceKind(record["kind"]), str(record["name"]), str(record["path"]),
                  int(record["games"]))


__all__ = ["GameRef"]
