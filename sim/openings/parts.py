"""An openings study played part by part: here or on a Dask cluster, and resumed.

Why parts: a study of millions of deals takes hours, so it must survive a stop and spread
over machines. Its games table is already written in parts of ``part_deals`` deals
(``sim.openings.folder``), and every figure comes from exact integer sums that do not
depend on the order deals are added in (``sim.openings.tally``). So a part is the unit of
work: it is played whole (here, chunk by chunk, or as one Dask task that writes it and
hands back the part's sums), written atomically, then recorded by one line appended to
the ledger ``parts.jsonl`` (its file, rows, bytes, sha256). ``study.json``, written at the
start, records what decides the games (the options and the code's digest).

``--resume`` reads ``study.json``, checks every recorded part against its line (a part
that changed is set aside in ``set-aside/``, never deleted, and played again), adds the
sound parts' games to the sums by reading them back, and plays the parts that are missing.
The tables are then those of an uninterrupted study. Once ``summary.json`` (which records
every file) is written, ``study.json`` and the ledger are removed: the finished folder is
the one a study without a stop writes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from sim.checks.integrity import (
    append_record,
    file_problem,
    part_record,
    read_ledger,
    set_aside,
)
from sim.errors import SettingError, SniffError
from sim.files import UnsafeFile, own_folder, read_regular
from sim.openings.folder import (
    GAMES_DIR,
    LEDGER,
    STUDY,
    SUMMARY,
    parquet_metadata,
    part_key,
    write_arrow,
)
from sim.openings.play import FORMAT, OpeningsConfig, iter_openings, make_config
from sim.openings.tally import OpeningsTally

MAX_STUDY = 2**20  # a study.json sniff writes is some 1 KiB


def part_bounds(deals: int, part_deals: int) -> list[tuple[int, int, int]]:
    """``(index, first deal, end deal)`` of every part of a study."""
    return [(index, lo, min(deals, lo + part_deals))
            for index, lo in enumerate(range(0, deals, part_deals))]


def config_record(config: OpeningsConfig) -> dict:
    """What rebuilds the config anywhere (``make_config``'s arguments; each strategy with
    every parameter written out, and its module for a plugin)."""
    from sim.run.plan import spec_text

    seats = config.lineup.seats
    return {"players": config.players, "strategies": [spec_text(spec) for spec in seats],
            "deals": config.deals, "seed": config.seed, "round_cap": config.round_cap,
            "strategy_names": [spec.strategy.name for spec in seats],
            "modules": [spec.strategy.module for spec in seats]}


def config_of(record: dict, import_plugins: bool = False) -> OpeningsConfig:
    from sim.run.plan import require_plugins

    require_plugins(zip(record["strategy_names"], record["modules"]), import_plugins)
    return make_config(record["players"], record["strategies"], record["deals"],
                       record["seed"], record["round_cap"])


def kernel_of(config: OpeningsConfig) -> str:
    """The key of the compiled code the study's games run (loads, or compiles, its kernel):
    compared by every worker and part, never recorded (the study records its identity,
    ``sim.run.signature``)."""
    from sim.kernels.runner import lineup_code

    return lineup_code(config.lineup)


# --- the record of a study under way


def start_study(folder: Path, config: OpeningsConfig, part_deals: int, identity: dict,
                command: str) -> None:
    """``study.json``: what a resume must play with (the ledger starts empty); ``identity``:
    the engine's version and the strategies' behaviour signatures
    (``sim.run.signature.lineup_identity``)."""
    from sim.store.io import write_json
    from sim.version import __version__

    (folder / LEDGER).unlink(missing_ok=True)
    write_json(folder / STUDY, {
        "format": FORMAT, "version": __version__, "command": command,
        "config": config_record(config), "part_deals": part_deals, "identity": identity,
        "started_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")})


def read_study(folder: Path) -> dict:
    """``study.json`` of a study to resume, or a one-line error that says why not."""
    import json

    path = folder / STUDY
    if not os.path.lexists(path):  # a FIFO, a device or a link there is named below
        if (folder / SUMMARY).is_file():
            raise SniffError(f"{folder} holds a finished openings study: nothing to resume")
        raise SniffError(f"nothing to resume: {folder} holds no openings study under way "
                         f"(no {STUDY})")
    try:  # bounded, never blocking (sim.files): a study.json is some 1 KiB
        study = json.loads(read_regular(path, MAX_STUDY, STUDY).decode("utf-8"))
        config_of(study["config"])  # plugins are refused here, as for any folder
        int(study["part_deals"])
    except UnsafeFile as error:  # a FIFO, a device, a folder, too big: named as such
        raise SniffError(f"cannot resume {folder}: {error}") from None
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as error:
        raise SniffError(f"cannot resume {folder}: {path} is damaged ({error})") from None
    return study


def finished_study(folder: Path) -> bool:
    """Whether ``folder`` holds a study that ended (``summary.json``, nothing under way)."""
    return (folder / SUMMARY).is_file() and not (folder / STUDY).is_file()


def finish_study(folder: Path) -> None:
    """After ``summary.json``: the folder is a finished one, as a study without a stop
    (a worker killed while writing a part may have left its temporary file)."""
    from sim.files import TEMP_SUFFIX

    (folder / LEDGER).unlink(missing_ok=True)
    (folder / STUDY).unlink(missing_ok=True)
    games = folder / GAMES_DIR
    for path in games.iterdir() if games.is_dir() else ():
        if path.name.startswith(".part-") and path.name.endswith(TEMP_SUFFIX):
            path.unlink(missing_ok=True)


def sound_parts(folder: Path, parts: list, alert: Callable[[str], None]) -> dict[int, dict]:
    """The recorded parts whose file is as recorded, by index; a part that is not is set
    aside (said in one line through ``alert``) and will be played again. A ``games/`` that
    is a link or not a folder is refused first: nothing is read or moved through it."""
    own_folder(Path(folder) / GAMES_DIR, GAMES_DIR)
    records = read_ledger(folder)
    sound = {}
    for index, lo, hi in parts:
        record = records.get(index)
        if record is None or (record.get("first_deal"), record.get("end_deal")) != (lo, hi):
            continue
        key = part_key(index)
        if (problem := file_problem(folder, key, {key: record})) is None:
            sound[index] = record
            continue
        moved = ""
        if (folder / key).is_file():
            moved = f"; set aside: {set_aside(folder, folder / key)}"
        alert(f"part {index}: {problem.split(': ', 1)[-1]}; played again{moved}")
    return sound


def check_kept(run: PartsRun, parts: list, sound: dict[int, dict]) -> None:
    """Refuse a resume whose ``study.json`` does not match the parts it keeps: each
    recorded part must be one of the study's parts (its deals as ``part_deals`` cuts them)
    and each kept part's footer must carry the study's configuration. Else the record was
    edited (a seed, a part size) and the rest would be played otherwise than the kept
    parts, or as millions of tiny parts: one line, nothing played."""
    bounds = {index: (lo, hi) for index, lo, hi in parts}
    for index, record in sorted(read_ledger(run.folder).items()):
        why = None
        if bounds.get(index) != (record.get("first_deal"), record.get("end_deal")):
            lo, hi = bounds.get(index, (None, None))
            why = (f"it holds deals {record.get('first_deal')}..{record.get('end_deal')}, "
                   f"where {STUDY}'s {run.config.deals:,} deals in parts of "
                   f"{run.part_deals:,} give " + (f"deals {lo}..{hi}" if lo is not None
                                                   else f"no part {index}"))
        elif index in sound:
            why = footer_difference(run.folder, index, run.config)
        if why is not None:
            raise SettingError(f"cannot resume {run.folder}: {STUDY} does not match the part "
                               f"it keeps, {part_key(index)} ({why}): the study record was "
                               "edited; start again with {overwrite}")


def kept_parts_match(folder: Path, config: OpeningsConfig) -> None:
    """Refuse (as ``check_kept``) when a recorded part's footer carries another
    configuration than ``config``, the one ``study.json`` records."""
    for index in sorted(read_ledger(folder)):
        if os.path.isfile(Path(folder) / part_key(index)) and (
                why := footer_difference(folder, index, config)) is not None:
            raise SettingError(f"cannot resume {folder}: {STUDY} does not match the part it "
                               f"keeps, {part_key(index)} ({why}): the study record was "
                               "edited; start again with {overwrite}")


def footer_difference(folder: Path, index: int, config: OpeningsConfig) -> str | None:
    """How the configuration in part ``index``'s footer differs from ``config``, in words
    (``its footer's seed is 0``), or None."""
    import pyarrow as pa

    from sim.checks.footers import read_footer

    wanted = config.to_dict()
    try:
        found = read_footer(Path(folder) / part_key(index))[1].get("config")
    except (OSError, ValueError, pa.ArrowException):  # a damaged part: its hash says so
        return None
    found = found if isinstance(found, dict) else {}
    differ = [key for key in wanted if found.get(key) != wanted[key]]
    return f"its footer's {differ[0]} is {found.get(differ[0])!r}" if differ else None


def add_part_back(tally: OpeningsTally, folder: Path, key: str) -> None:
    """A sound part's games added to the sums again, read from its file."""
    import pyarrow.parquet as pq

    tally.add(pq.read_table(folder / key).to_pandas())


# --- playing a part


def write_part(folder: Path, config: OpeningsConfig, command: str, index: int, lo: int,
               hi: int, tables: list) -> dict:
    """Write a part (atomically, as ``GamesParts``) and return its ledger record."""
    import pyarrow as pa

    path = folder / part_key(index)
    own_folder(path.parent, GAMES_DIR)  # never a link out of the folder
    metadata = parquet_metadata(config, command, "games", part=index, first_deal=lo,
                                end_deal=hi)
    rows = write_arrow(pa.concat_tables(tables), path, metadata)
    return {"chunk": index, "first_deal": lo, "end_deal": hi, **part_record(path, rows)}


def play_part(config: OpeningsConfig, lo: int, hi: int, sizes: tuple[int, int],
              tally: OpeningsTally, after_chunk: Callable[[int, int], None] | None = None
              ) -> list:
    """Deals ``lo..hi-1`` chunk by chunk (``sizes``: deals per chunk and per part, so the
    chunks are those of a study played in one go): their games added to ``tally``, as
    Arrow tables. ``after_chunk(first deal, end deal)`` follows each chunk (progress, a
    stop)."""
    import pyarrow as pa

    tables = []
    # the study cut at the part's end: the same chunks up to there, none past it
    for first, end, games in iter_openings(replace(config, deals=hi), *sizes, lo):
        tally.add(games)
        tables.append(pa.Table.from_pandas(games, preserve_index=False))
        if after_chunk is not None:
            after_chunk(first, end)
    return tables


@dataclass(frozen=True)
class PartJob:
    """What a Dask task needs besides its part: small, pickled with every task."""

    config: dict  # config_record(config)
    folder: str  # the study folder, as every machine mounts it
    command: str
    sizes: tuple[int, int]  # deals per chunk, per part
    kernel: str
    threads_by_host: dict
    threads: int | None


_configs: dict = {}  # per worker process: the config of a job, built once


def _job_config(job: PartJob) -> OpeningsConfig:
    import json

    key = json.dumps(job.config, sort_keys=True)
    if key not in _configs:
        # the job comes from the user's own client (not a folder): import its plugins
        _configs[key] = config_of(job.config, import_plugins=True)
    return _configs[key]


def warm_up_task(job: PartJob) -> dict:
    """Load (or compile) the study's kernel on this worker; report what it runs with."""
    from sim.cluster.dask import worker_report

    config = _job_config(job)
    return worker_report(kernel_of(config), job.threads_by_host, job.threads,
                         lambda: iter_openings(config, 1, 1).__next__())


def play_part_task(job: PartJob, index: int, lo: int, hi: int) -> tuple[dict, OpeningsTally]:
    """Play and write one part on a worker; hand back its record and its sums."""
    from sim.cluster.dask import worker_threads

    _, address, _ = worker_threads(job.threads_by_host, job.threads)
    folder = Path(job.folder)
    if not (folder / STUDY).is_file():
        raise SettingError(
            f"the Dask worker {address} cannot see the openings folder {folder}: on a "
            "cluster of several machines, {out} must be on storage that every machine "
            "mounts at the same path")
    config = _job_config(job)
    if kernel_of(config) != job.kernel:
        raise SettingError("the simulator's code (sim/ or strategies/) changed while the "
                           "study was playing; the finished parts are kept, but only a new "
                           "study ({overwrite}) can give consistent tables")
    tally = OpeningsTally()
    tables = play_part(config, lo, hi, job.sizes, tally)
    return write_part(folder, config, job.command, index, lo, hi, tables), tally


# --- the whole study


@dataclass(frozen=True)
class PartsRun:
    """How the parts of one study are played: the folder, the sizes, where.

    Attributes:
        folder: the study's folder.
        config: what the study plays.
        command: the command line recorded with each part.
        chunk_deals: deals per compiled call.
        part_deals: deals per part (the unit of resume and of Dask).
        kernel: the digest of the code the study's games run.
    """

    folder: Path
    config: OpeningsConfig
    command: str
    chunk_deals: int
    part_deals: int
    kernel: str


def play_here(run: PartsRun, todo: list, tally: OpeningsTally,
              after_chunk: Callable[[int, int], None]) -> Iterator[dict]:
    """The parts of ``todo`` played in this process, in order; each one's record."""
    for index, lo, hi in todo:
        tables = play_part(run.config, lo, hi, (run.chunk_deals, run.part_deals), tally,
                           after_chunk)
        yield write_part(run.folder, run.config, run.command, index, lo, hi, tables)


def play_on_cluster(run: PartsRun, todo: list, tally: OpeningsTally, cluster,
                    progress: Callable[[int], None], check: Callable[[], None]
                    ) -> Iterator[dict]:
    """The parts of ``todo`` as Dask tasks (``sim.cluster.dask``), taken in part order."""
    def job() -> PartJob:
        return PartJob(config_record(run.config), str(run.folder.resolve()), run.command,
                       (run.chunk_deals, run.part_deals), run.kernel,
                       dict(cluster.threads_by_host),
                       cluster.threads_option)

    cluster.warm_up(warm_up_task, job, run.kernel)
    made = job()
    done = [0]

    def finished(part) -> None:
        done[0] += part[2] - part[1]
        progress(done[0])

    for record, sums in cluster.ordered(todo, play_part_task,
                                        lambda part: (made, *part), check, finished,
                                        name="part"):
        tally.merge(sums)
        yield record


def play_parts(run: PartsRun, tally: OpeningsTally, resume: bool, *, scheduler=None,
               progress: Callable[[int], None] | None = None,
               between_chunks: Callable[[], None] | None = None,
               alert: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Play the study's missing parts into ``run.folder`` (after the sound ones, on a
    resume, are added back to ``tally``); the parts' records for ``summary.json``."""
    parts = part_bounds(run.config.deals, run.part_deals)
    sound = sound_parts(run.folder, parts, alert or (lambda line: None)) if resume else {}
    if resume:
        check_kept(run, parts, sound)
    for index in sorted(sound):
        add_part_back(tally, run.folder, part_key(index))
    deals_done = sum(hi - lo for index, lo, hi in parts if index in sound)
    if progress is not None and deals_done:
        progress(deals_done)
    todo = [part for part in parts if part[0] not in sound]
    check = between_chunks or (lambda: None)

    so_far = [0]  # deals played here in this call

    def after_chunk(first: int, end: int) -> None:
        so_far[0] += end - first
        if progress is not None:
            progress(deals_done + so_far[0])
        if end < run.config.deals:
            check()

    if scheduler is None:
        played = play_here(run, todo, tally, after_chunk)
    else:
        played = play_on_cluster(run, todo, tally, scheduler,
                                 lambda done: progress(deals_done + done) if progress else None,
                                 check)
    records = dict(sound)
    for record in played:
        append_record(run.folder, record)  # the part is finished once its line is there
        records[record["chunk"]] = record
        if scheduler is not None and len(records) < len(parts):
            check()  # results that came at once: between parts, as between chunks here
    return {part_key(index): {k: records[index][k] for k in ("file", "rows", "bytes", "sha256")}
            for index in sorted(records)}


__all__ = ["finished_study"]
