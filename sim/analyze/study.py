"""``sniff analyze`` from start to end: sample the games, value their decisions part by
part (here or as Dask tasks), record each part, and write the results.

A part is ``part_games`` consecutive games of the sample. Every decision's search seed comes
from (seed, source, game, decision), so a part's rows are the same whichever process plays
it and whatever was played before; ``--resume`` plays the parts the ledger lacks and the
results are those of an uninterrupted analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from sim.analyze import folder as disk
from sim.analyze.decisions import game_decisions
from sim.analyze.output import results, write_results
from sim.analyze.settings import AnalyzeSettings
from sim.analyze.sources import (
    GameReader,
    GameRef,
    Source,
    find_sources,
    sample_games,
    source_of,
    source_record,
)
from sim.analyze.table import arrow_table
from sim.analyze.valuation import value_decisions
from sim.errors import SettingError, SniffError


@dataclass(frozen=True)
class AnalysisPlan:
    """What one analysis values: its settings, sources and sampled games.

    Attributes:
        settings: how the decisions are valued and the games sampled.
        sources: the runs, pairings and trace files sampled.
        games: the sampled games, in order.
        code: the search's generated module: its name carries the code's hash.
    """

    settings: AnalyzeSettings
    sources: tuple[Source, ...]
    games: tuple[GameRef, ...]
    code: str  # the engine's version and the search's behaviour signature (code_name)

    def bounds(self) -> list[tuple[int, int]]:
        step = self.settings.part_games
        return [(lo, min(len(self.games), lo + step)) for lo in range(0, len(self.games), step)]

    def record(self, command: str) -> dict:
        return {"command": command, "settings": self.settings.record(),
                "sources": [source_record(source) for source in self.sources],
                "games": [[ref.source, ref.game] for ref in self.games], "code": self.code}

    @classmethod
    def of(cls, record: dict) -> AnalysisPlan:
        try:
            settings = AnalyzeSettings.of(record["settings"])
            sources = tuple(source_of(item) for item in record["sources"])
            games = tuple(GameRef(str(name), int(game)) for name, game in record["games"])
            return cls(settings, sources, games, str(record["code"]))
        except (KeyError, TypeError, ValueError) as error:
            raise SniffError(f"the analysis record is damaged ({error!r})") from None


def code_name(settings: AnalyzeSettings) -> str:
    """What the analysis records as the code that values its decisions: the engine's
    version and the search's behaviour signature with its settings' policy and endgames
    (``sim.analyze.valuation.search_signature``), never a hash of the search's source."""
    from sim.analyze.settings import Endgame
    from sim.analyze.valuation import search_signature
    from sim.core.identity import ENGINE_VERSION

    exact = settings.endgame is Endgame.EXACT
    return f"engine {ENGINE_VERSION}, search {search_signature(settings.policy, exact)}"


def plan_analysis(paths: list[Path], settings: AnalyzeSettings) -> AnalysisPlan:
    """The sources of ``paths`` and the games sampled from each."""
    settings.check()
    if not paths:
        raise SettingError("give at least one run folder, tournament folder or trace file")
    sources = find_sources([Path(path) for path in paths])
    games = [ref for source in sources for ref in sample_games(source, settings.games,
                                                               settings.seed)]
    if not games:
        raise SniffError("the sources hold no finished game to analyse")
    return AnalysisPlan(settings, tuple(sources), tuple(games), code_name(settings))


def analyse_games(plan: AnalysisPlan, refs: list[GameRef],
                  reader: GameReader | None = None) -> dict[str, list[dict]]:
    """The decisions and curve rows of some games of the plan."""
    reader = reader or GameReader(list(plan.sources))
    settings = plan.settings
    pending = [item for ref in refs for item in game_decisions(
        ref, reader.events(ref), settings.seed, settings.strategies)]
    rows, curve = value_decisions(pending, settings) if pending else ([], [])
    return {"decisions": rows, "curve": curve}


def analyse_trace_game(events: list[dict], ref: GameRef, settings: AnalyzeSettings,
                       seats: tuple[int, ...] = ()) -> dict[str, pd.DataFrame]:
    """Game ``ref.game`` of the trace file named ``ref.source`` (its events given, from its
    ``game_start``) valued as ``sniff analyze FILE`` values it: the same decisions, each
    decision's deals drawn from the same seed, source name and place, the same figures and
    marks. Only the decisions of ``seats`` are kept (every seat's when empty), as
    ``--strategy`` keeps a label's: the others' are never valued. The results' tables by
    name (``strategies`` holds the accuracy), and ``decisions``: a row per decision, the
    columns of the Parquet table. Why here: the browser's analysis of a finished game is
    this call, so its figures are those of ``sniff analyze`` on the game's downloaded trace."""
    settings.check()
    pending = [item for item in game_decisions(ref, events, settings.seed, settings.strategies)
               if not seats or item.seat in seats]
    rows, curve = value_decisions(pending, settings) if pending else ([], [])
    decisions = arrow_table("decisions", rows).to_pandas()
    tables = results(decisions, arrow_table("curve", curve).to_pandas(), settings)
    tables["decisions"] = decisions
    return tables


@dataclass(frozen=True)
class PartJob:
    """What a Dask task needs: the plan's record and the folder every machine mounts."""

    record: dict
    folder: str


_readers: dict = {}


def analyse_part_task(job: PartJob, index: int, lo: int, hi: int) -> dict:
    """One part valued and written on a worker; its ledger record."""
    plan = AnalysisPlan.of(job.record)
    if code_name(plan.settings) != plan.code:
        raise SettingError("the search's code changed while the analysis ran; only a new "
                           "analysis ({overwrite}) gives consistent tables")
    key = job.folder
    if key not in _readers:
        _readers[key] = GameReader(list(plan.sources))
    tables = analyse_games(plan, list(plan.games[lo:hi]), _readers[key])
    return disk.write_part(Path(job.folder), index, (lo, hi), tables)


def warm_up_task(job: PartJob) -> dict:
    from sim.analyze.kernel import load
    from sim.cluster.dask import worker_report

    return worker_report(job.record["code"], {}, None, lambda: load())


def _parts_here(plan: AnalysisPlan, folder: Path, todo: list) -> Iterator[dict]:
    reader = GameReader(list(plan.sources))
    for index, (lo, hi) in todo:
        tables = analyse_games(plan, list(plan.games[lo:hi]), reader)
        yield disk.write_part(folder, index, (lo, hi), tables)


def _parts_on_cluster(plan: AnalysisPlan, folder: Path, todo: list, cluster, record: dict,
                      check: Callable[[], None]) -> Iterator[dict]:
    job = PartJob(record, str(Path(folder).resolve()))
    cluster.warm_up(warm_up_task, lambda: job, plan.code)
    yield from cluster.ordered(todo, analyse_part_task,
                               lambda part: (job, part[0], *part[1]), check, name="part")


@dataclass(frozen=True)
class Hooks:
    """What the caller hears: progress (games done, total), a stop check between parts,
    alerts (a part set aside).

    Attributes:
        progress: called with (games done, total) as parts finish.
        check: called between parts; raises to stop the analysis.
        alert: called with one line when a part is set aside.
    """

    progress: Callable[[int, int], None] = lambda done, total: None
    check: Callable[[], None] = lambda: None
    alert: Callable[[str], None] = lambda line: None


def run_analysis(plan: AnalysisPlan | None, folder: Path, *, resume: bool = False,
                 command: str = "", scheduler=None, hooks: Hooks = Hooks()) -> dict:
    """Value every part into ``folder`` (a resume: only those the ledger lacks), then write
    the results; returns the tables by name. ``plan`` is None on a resume (the folder's)."""
    from sim.store.lock import RunLock

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    lock = RunLock(folder)
    lock.acquire(command or "sniff analyze")
    cluster = None
    try:
        if resume:
            record = disk.read_record(folder)
            plan = AnalysisPlan.of(record)
            if plan.code != (now := code_name(plan.settings)):
                raise SettingError(f"cannot resume {folder}: it was valued by {plan.code}; "
                                   f"this code values by {now}, so the remaining parts would "
                                   "not match; start again with {overwrite}")
        else:
            assert plan is not None, "run_analysis needs a plan unless it resumes"
            record = plan.record(command)
            disk.start_record(folder, record)
        bounds = plan.bounds()
        sound = disk.sound_parts(folder, bounds, hooks.alert) if resume else {}
        done = sum(hi - lo for index, (lo, hi) in enumerate(bounds) if index in sound)
        hooks.progress(done, len(plan.games))
        todo = [(index, part) for index, part in enumerate(bounds) if index not in sound]
        if isinstance(scheduler, str):
            from sim.cluster.dask import DaskCluster

            cluster = scheduler = DaskCluster(scheduler)
        parts = (_parts_here(plan, folder, todo) if scheduler is None else
                 _parts_on_cluster(plan, folder, todo, scheduler, record, hooks.check))
        for written in parts:
            disk.finish_part(folder, written)
            sound[written["chunk"]] = written
            done += written["end_game"] - written["first_game"]
            hooks.progress(done, len(plan.games))
            if len(sound) < len(bounds):
                hooks.check()
        decisions, curve = disk.read_tables(folder, sound)
        if decisions.empty:
            raise SniffError("no decision to analyse in the sampled games (no placement with "
                             "a choice by the strategies asked for)")
        tables = results(decisions, curve, plan.settings)
        write_results(folder, tables, record)
        disk.set_status(folder, "complete")
    except BaseException:
        if (folder / disk.RECORD).is_file():
            try:
                disk.set_status(folder, "interrupted")
            except (SniffError, OSError):
                pass
        raise
    finally:
        if cluster is not None:
            cluster.close()
        lock.release()
    return tables


__all__ = [
    "AnalysisPlan", "Hooks", "analyse_games", "analyse_trace_game", "plan_analysis",
    "run_analysis",
]
