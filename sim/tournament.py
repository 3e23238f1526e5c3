"""``sniff tournament``: every pairing of some strategies, a win-rate matrix and ratings.

Why this shape:

- **Pairings are ordinary simulate runs.** Each pairing is played by ``sim.run.simulation``
  into ``OUT/pairs/NN-A-vs-B/`` (manifest, ``games/``, ``rounds/``), so everything that
  holds for a run holds for a pairing (seat rotation, ``--duplicate``, ``--precision``,
  Ctrl-C and resume, ``sim.load``), and ``sniff report`` reads a pairing, or the whole
  tournament folder, like any run.
- **No compile per pairing.** Every pairing plays in the game loop compiled once, each
  strategy compiled on its own (``sim.kernels.shared``).
- **Pairings.** With 2 players, A against B; with 4, partnership A (seats 0+2) against
  partnership B (seats 1+3); every unordered pair of different strategies once. With 3
  players every seat plays alone, so a pairing is a *triple* of different strategies, every
  triple once (at least 3 strategies); the ratings then use Luce's model (the winner among
  three), and the matrix compares two strategies over the games either of them won.
- **Independent pairings.** Each pairing's seed is derived from the tournament seed and its
  strategies' labels, so pairings do not share deals (the rating model takes games as
  independent), and adding a strategy to a tournament does not change the games of the
  pairings it already had.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING

from sim.checks.integrity import part_record
from sim.core.checks import check_players, check_seed
from sim.display.formatting import slug
from sim.errors import SettingError, SniffError, Stopped
from sim.files import own_folder, refuse_links
from sim.report.tournament import (
    OUTPUT_FILES,
    Tournament,
    recorded_results,
    tournament_result,
)
from sim.run.settings import RunControl
from sim.store.folders import check_writable_folder, remove_unstarted
from sim.store.lock import LOCK_NAME, RunLock
from sim.store.rundata import (
    PAIRS_DIR,
    TOURNAMENT_FORMAT,
    TOURNAMENT_MANIFEST,
    pairing_folders,
    pairing_runs,
    pairing_seed,
    read_tournament_manifest,
    result_problems,
)

__all__ = [
    "load", "output_problems", "pairings", "run_tournament", "TournamentInterrupted"
]

if TYPE_CHECKING:  # imported where a tournament is played or read

    from sim.run.plan import Plan

DEFAULT_GAMES_PER_PAIR = 10_000
DEFAULT_CHUNK = 50_000


def pairings(players: int, labels: list[str]) -> list[tuple[str, ...]]:
    """The lineups of a tournament: pairs (2 and 4 players) or triples (3 players), for a
    checked player count (``TournamentPlan.new``)."""
    if len(set(labels)) != len(labels):
        twice = sorted({label for label in labels if labels.count(label) > 1})
        raise SettingError(f"strategy {', '.join(twice)} is named twice in {{strategies}}")
    size = 3 if players == 3 else 2
    if len(labels) < size:
        need = ("3 players play alone, so a pairing is 3 different strategies: name at least 3"
                if players == 3 else "name at least 2")
        raise SniffError(f"a tournament needs more strategies: {need} (got {len(labels)})")
    return list(combinations(labels, size))


def pairing_name(index: int, lineup: tuple[str, ...]) -> str:
    return f"{index + 1:02d}-" + "-vs-".join(slug(label) for label in lineup)


def default_folder(base: Path = Path("results")) -> Path:
    from sim.store.folders import new_folder

    return new_folder("tournament", base)


@dataclass(frozen=True)
class TournamentPlan:
    """What a tournament plays: its lineup of strategies, and each pairing's games (with a
    ``precision``, the cap of a pairing that plays until every win rate's 95% half-width is
    at most that), seed, deals and chunk size; built from a caller's settings (``new``) or a
    tournament folder's manifest (``recorded``)."""

    players: int
    labels: tuple[str, ...]
    games: int
    seed: int
    duplicate: bool
    chunk_size: int
    precision: float | None = None

    @classmethod
    def new(cls, players: int | None, strategies, games_per_pair: int | None,
            seed: int | None, duplicate: bool | None, precision: float | None,
            chunk_size: int | None) -> TournamentPlan:
        """The settings checked (one line each); None takes the default."""
        from sim.run.precision import DEFAULT_MAX_GAMES, check_precision
        from strategies import parse_lineup_text

        players = check_players(4 if players is None else players)
        seed = check_seed(0 if seed is None else seed)
        if strategies is None:
            raise SettingError("give the strategies to play, e.g. "
                               "{strategies=greedy,random,heavy}")
        specs = parse_lineup_text(strategies if isinstance(strategies, str)
                                  else ",".join(strategies))
        precision = check_precision(precision)
        games = games_per_pair if games_per_pair is not None else (
            DEFAULT_GAMES_PER_PAIR if precision is None else DEFAULT_MAX_GAMES)
        if isinstance(games, bool) or not isinstance(games, int) or games < 1:
            raise SettingError(f"{{games_per_pair}} must be a positive integer, got {games!r}")
        return cls(players, tuple(spec.label for spec in specs), games, seed, bool(duplicate),
                   chunk_size or min(DEFAULT_CHUNK, games), precision)

    @classmethod
    def recorded(cls, folder: Path, config: dict, given: dict) -> TournamentPlan:
        """A folder's tournament; every setting ``given`` (None: not given) must agree."""
        recorded_text = ",".join(config["strategies"])
        differ = [k for k, v in given.items() if v is not None
                  and v != (recorded_text if k == "strategies" else config[k])]
        if differ:
            raise SettingError(f"cannot resume {folder}: it was started with other "
                               f"{', '.join(differ)}; leave them out (or give the recorded "
                               "values), or start again with {overwrite}")
        return cls(config["players"], tuple(config["strategies"]), config["games_per_pair"],
                   config["seed"], config["duplicate"], config["chunk_size"],
                   config["precision"])

    def config(self) -> dict:
        return {"players": self.players, "strategies": list(self.labels),
                "games_per_pair": self.games, "seed": self.seed,
                "duplicate": bool(self.duplicate), "chunk_size": self.chunk_size,
                "precision": self.precision,
                "pairing": "triples" if self.players == 3 else "pairs"}

    @property
    def specs(self) -> list:
        from strategies import parse_lineup_text

        return parse_lineup_text(",".join(self.labels))

    def pairings(self) -> list[tuple[str, tuple[str, ...], Plan]]:
        """(folder name, lineup, plan) of each pairing, in order."""
        from sim.run.plan import Plan

        by_label = {spec.label: spec for spec in self.specs}
        return [(pairing_name(index, lineup), lineup, Plan.build(
            self.players, [by_label[label] for label in lineup], self.games,
            pairing_seed(self.seed, lineup), self.duplicate, self.chunk_size,
            precision=self.precision))
            for index, lineup in enumerate(pairings(self.players, list(self.labels)))]


def _write_manifest(folder: Path, manifest: dict) -> None:
    from sim.store import io

    io.write_json(folder / TOURNAMENT_MANIFEST, manifest)


def run_tournament(
    players: int | None = None,
    strategies: str | list[str] | None = None,
    games_per_pair: int | None = None,
    seed: int | None = None,
    *,
    duplicate: bool | None = None,
    out: str | Path | None = None,
    precision: float | None = None,
    chunk_size: int | None = None,
    control: RunControl | None = None,
) -> Tournament:
    """Play every pairing into ``out`` and fit the matrix and ratings; see the module doc.

    ``players`` defaults to 4, ``seed`` to 0; ``strategies`` (text as on the command line,
    or a list) must be given. ``games_per_pair`` (default 10,000) is each pairing's game
    count; with ``precision`` a pairing instead plays until every win rate's 95% half-width
    is at most ``precision``, up to ``games_per_pair`` (default 1,000,000). ``control``
    (``sim.run.settings.RunControl``) says how: with mode ``"resume"`` it completes an
    interrupted tournament in ``out`` (settings left as None are the recorded ones; others
    must match); its ``notice`` gets one line per pairing; its ``scheduler``
    (``tcp://HOST:PORT`` or ``local:N``) plays every pairing's chunks on one Dask cluster,
    opened once for all pairings (``sim.cluster.dask``); the folder is the same as a local
    tournament's.
    """
    control = control or RunControl()
    control.check()
    if control.mode == "resume":
        if out is None:
            raise SettingError("{resume} needs {out}, the folder of the tournament to complete")
        folder = Path(out)
        manifest = read_tournament_manifest(folder)
        pairing_runs(folder, manifest)  # its pairings are what the tournament implies
        plan = TournamentPlan.recorded(folder, manifest["config"], {
            "players": players, "strategies": strategies, "games_per_pair": games_per_pair,
            "seed": seed, "duplicate": duplicate, "precision": precision})
    else:
        plan = TournamentPlan.new(players, strategies, games_per_pair, seed, duplicate,
                                  precision, chunk_size)
        folder = Path(out) if out is not None else default_folder()
        _check_new_folder(folder, control.mode == "overwrite")
        manifest = None
    pairs = plan.pairings()
    if manifest is not None:  # each pairing's run id binds the settings it was started with
        from sim.store.rundata import check_run_ids

        check_run_ids(folder, manifest, [run.run_id for _, _, run in pairs])
    new, existed = manifest is None, folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None
    held = RunLock(folder)  # one writer: a second tournament into the folder is one line
    held.acquire(control.command or "sniff tournament")
    unplayed = False
    try:
        if manifest is None:
            manifest = _new_manifest(folder, plan, pairs, control)
        _mark_running(folder, manifest)
        runs = _play_pairings(folder, manifest, pairs, control)
        return _complete(folder, manifest, runs)
    except SniffError:  # a new tournament refused before any pairing wrote: nothing is left
        unplayed = new and not any((folder / PAIRS_DIR).glob("*"))
        raise
    finally:
        held.release()
        if unplayed:
            remove_unstarted(folder, (TOURNAMENT_MANIFEST, PAIRS_DIR), created=not existed)


def _check_new_folder(folder: Path, overwrite: bool) -> None:
    """A new tournament's folder: absent, empty, or (overwriting) a tournament's."""
    if folder.exists() and not folder.is_dir():
        raise SettingError(f"{{out}} {folder} is a file; give a folder")
    check_writable_folder(folder)  # not inside another run's tables, and writable
    if folder.exists() and any(p.name != LOCK_NAME for p in folder.iterdir()):
        if not (folder / TOURNAMENT_MANIFEST).exists():
            raise SettingError(f"{folder} is not empty and holds no sniff tournament; choose "
                               "another {out} (nothing was changed)")
        if not overwrite:
            state = read_tournament_manifest(folder).get("status")
            raise SettingError(f"{folder} already holds a tournament ({state}); use {{resume}} "
                               "to complete it or {overwrite} to replace it")
        refuse_links(folder, (PAIRS_DIR, TOURNAMENT_MANIFEST, *OUTPUT_FILES),
                     "a tournament")  # nothing removed through one


def _new_manifest(folder: Path, plan: TournamentPlan, pairs: list, control: RunControl) -> dict:
    """A new tournament's manifest; an overwritten tournament's files are removed first."""
    import shutil

    from sim.version import __version__

    if control.mode == "overwrite":
        for name in (PAIRS_DIR, TOURNAMENT_MANIFEST, *OUTPUT_FILES):
            path = folder / name
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
    return {
        "format": TOURNAMENT_FORMAT, "version": __version__, "command": control.command,
        "config": plan.config(),
        "pairings": [{"name": name, "folder": f"{PAIRS_DIR}/{name}",
                      "lineup": list(lineup), "seed": run.seed, "run_id": run.run_id}
                     for name, lineup, run in pairs],
        "started_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        "status": "running",
    }


def _mark_running(folder: Path, manifest: dict) -> None:
    from sim.store import io

    try:
        own_folder(folder / PAIRS_DIR, PAIRS_DIR)  # never a link out of the tournament
        io.mark_running(manifest)
        _write_manifest(folder, manifest)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None


def _play_pairings(folder: Path, manifest: dict, pairs: list, control: RunControl) -> list:
    """Each pairing's run, in order, on one Dask cluster if a scheduler is given; a stop or
    failure is recorded in the manifest."""
    from sim.run.chunks import RunInterrupted

    runs = []
    cluster = None
    try:
        if isinstance(control.scheduler, str):  # one cluster for every pairing
            from sim.cluster.dask import DaskCluster

            cluster = DaskCluster(control.scheduler, control.threads)
            control = control.but(scheduler=cluster)
        for index, (name, lineup, plan) in enumerate(pairs):
            title = f"pairing {index + 1}/{len(pairs)}: {' vs '.join(lineup)}"
            runs.append(_play_pairing(folder / PAIRS_DIR / name, title, plan, control))
    except RunInterrupted as stopped:
        manifest["status"] = "interrupted"
        _write_manifest(folder, manifest)
        raise TournamentInterrupted(folder, len(runs), len(pairs), stopped.signum) from None
    except BaseException:
        manifest["status"] = "failed"
        _write_manifest(folder, manifest)
        raise
    finally:
        if cluster is not None:
            cluster.close()
    return runs


def _play_pairing(pair_folder: Path, title: str, plan, control: RunControl):
    """One pairing's run: played, completed, or (finished and its parts checked) opened."""
    from sim.run.simulation import execute
    from sim.store import io

    say = control.notice
    if io.is_run_folder(pair_folder) and io.read_manifest(pair_folder).get(
            "status") == "complete":
        # its parts checked (sim.checks.integrity); a bad one: the resume replays it
        try:
            run = io.open_run(pair_folder)
            say(f"{title}: already played")
            return run
        except SniffError as error:
            say(f"{title}: {str(error).split('; ')[0]}")
    mode = "resume" if io.is_run_folder(pair_folder) else "new"
    say(title)
    return execute(plan, pair_folder, control.but(mode=mode))


def _complete(folder: Path, manifest: dict, runs: list) -> Tournament:
    result = tournament_result(folder, manifest, runs)
    manifest["status"] = "complete"
    manifest["finished_at"] = datetime.now().astimezone().isoformat(timespec="seconds")
    manifest.update(recorded_results(result))
    manifest["files"] = {name: part_record(folder / name, 0) for name in OUTPUT_FILES}
    _write_manifest(folder, manifest)
    return result


def output_problems(folder: str | Path) -> list[str]:
    """``sniff verify`` of a complete tournament's result: the ratings, fit and ranking
    in ``tournament.json``, ``matrix.csv`` and ``ranking.csv`` recomputed from the
    pairings' checked runs, and every output file against its recorded size and sha256
    (``sim.store.rundata.result_problems``). One line per difference; [] when all match."""
    from sim.stats.ranking import csv_table

    result = load(folder)
    texts = {"matrix.csv": result.matrix.to_csv(index=False)}
    if result.ranking is not None:
        texts["ranking.csv"] = csv_table(result.ranking).to_csv(index=False)
    return result_problems(Path(folder), result.manifest, recorded_results(result), texts,
                           OUTPUT_FILES)


class TournamentInterrupted(Stopped):
    """A tournament stopped by Ctrl-C or SIGTERM: how many pairings it finished, and where."""

    def __init__(self, folder: Path, done: int, total: int, signum: int) -> None:
        super().__init__(signum)
        self.folder, self.done, self.total = folder, done, total

    def hint(self) -> str:
        return (f"stopped after {self.done} of {self.total} pairings in {self.folder}; "
                f"complete it with: sniff tournament --out {shlex.quote(str(self.folder))} "
                "--resume")


def load(folder: str | Path) -> Tournament:
    """Open a tournament folder: its pairing runs, matrix and ratings (recomputed)."""
    from sim.store import io

    folder = Path(folder)
    manifest = read_tournament_manifest(folder)
    runs = [io.load(path) for path in pairing_folders(folder)]
    return tournament_result(folder, manifest, runs, write=False)
