"""The tuning folder of ``sniff tune``: manifest, trials, best.json and the learning curve.

Every file is written whole or not at all (``sim.store.io.write_bytes``: a temporary file, then a
rename), and ``trials.parquet`` is rewritten after every generation, so an interrupted run
leaves the finished generations readable and ``--resume`` picks up from them. A folder
holding anything but a tuning run is never written to.
"""

from __future__ import annotations

import io as bytes_io
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from sim.errors import SettingError, SniffError
from sim.files import open_regular, read_regular
from sim.store import folders, io
from sim.store.lock import LOCK_NAME, RunLock
from sim.tune.setup import (
    BEST,
    CURVE,
    DECIDING,
    FORMAT,
    MANIFEST,
    TRIALS,
    TuneConfig,
    TuneResult,
    Validation,
    import_cma,
)

__all__ = ["load", "read"]


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def default_folder() -> Path:
    return folders.new_folder("tune")


def check_new(folder: Path) -> None:
    """Refuse a folder for a new tuning run that holds anything (but its writer's lock)."""
    folders.check_writable_folder(folder)
    if folder.exists() and any(path.name != LOCK_NAME for path in folder.iterdir()):
        if (folder / MANIFEST).exists() and _is_tuning(folder):
            raise SniffError(f"{folder} already holds a tuning run: complete it with "
                             f"sniff tune --resume -o {folder}, or choose another folder")
        raise SniffError(f"{folder} is not empty and holds no tuning run; choose another "
                         "folder")


def create(folder: Path, config: TuneConfig, command: str | None) -> dict:
    """A new tuning folder with its manifest; refuses a folder that holds anything."""
    check_new(folder)
    folder.mkdir(parents=True, exist_ok=True)
    from sim.version import __version__

    manifest: dict[str, Any] = {
        "format": FORMAT, "version": __version__, "command": command,
        "config": config.to_dict(),
        "optimiser": {"name": "cma", "version": import_cma().__version__},
        "status": "running", "started_at": utc_now(), "finished_at": None,
        "generations": config.generations, "generations_done": 0, "games_done": 0,
        "sessions": [],
    }
    write_manifest(folder, manifest)
    return manifest


def lock(folder: Path, command: str | None) -> RunLock:
    """The one writer's lock of a tuning folder (created if missing), held for the session:
    a second ``sniff tune`` into it, new or ``--resume``, is refused in one line."""
    folders.check_writable_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    held = RunLock(folder)
    held.acquire(command or "sim.tune.tune")
    return held


def _is_tuning(folder: Path) -> bool:
    try:
        read(folder)
    except SniffError:
        return False
    return True


def read(folder: Path) -> dict:
    """The manifest of a tuning folder; one-line errors for anything else."""
    folder = Path(folder)
    if not folder.is_dir():
        raise SniffError(f"no such tuning folder: {folder}")
    manifest = io.read_manifest(folder, MANIFEST, FORMAT, "tuning run")
    problem = _shape_problem(manifest)
    if problem is not None:
        raise SniffError(f"{folder / MANIFEST}: {problem}; the tuning folder is damaged or "
                         "was edited")
    return manifest


def _shape_problem(manifest: dict) -> str | None:
    """What makes a tuning manifest one no ``sniff tune`` writes, or None: its settings
    must build (``TuneConfig.build``'s own checks), its bookkeeping be of the right types."""
    config = manifest.get("config")
    if not isinstance(config, dict) or any(key not in config for key in DECIDING):
        return ("config does not hold the tuning's settings (a folder of another version of "
                "sniff is not read)")
    try:
        recorded = TuneConfig.from_dict(config)
        TuneConfig.build(**{key: getattr(recorded, key) for key in DECIDING})
    except SniffError as error:
        return f"its config is not one sniff tune records ({error})"
    except (TypeError, ValueError, AttributeError):
        return "its config is not one sniff tune records"
    if not isinstance(manifest.get("sessions", []), list):
        return "sessions is not a list"
    if not isinstance(manifest.get("optimiser"), dict) or not isinstance(
            manifest["optimiser"].get("version"), str):
        return "optimiser does not name the cma version"
    for name in ("generations_done", "games_done", "generations"):
        value = manifest.get(name, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return f"{name} is {value!r}, not a count"
    return None


def check_resume(folder: Path, manifest: dict, config: TuneConfig, given: dict) -> None:
    """Refuse a resume whose options differ from the recorded ones, or another cma."""
    merged = config.to_dict()
    merged.update(given)
    try:
        asked = TuneConfig.build(**{key: merged[key] for key in DECIDING})
        shown = {key: getattr(asked, key) for key in DECIDING}
    except SettingError:  # no valid run, so not the recorded one: name what differs
        shown = {key: given.get(key, getattr(config, key)) for key in DECIDING}
        if all(shown[key] == getattr(config, key) for key in DECIDING):
            raise
    differ = [key for key in DECIDING if shown[key] != getattr(config, key)]
    if differ:
        key = differ[0]
        raise SettingError(f"{{{key}}} differs from the run in {folder} "
                           f"({_show(shown[key])} given, "
                           f"{_show(getattr(config, key))} recorded); leave it out to use the "
                           "recorded one")
    recorded = manifest["optimiser"]["version"]
    if recorded != import_cma().__version__:
        raise SniffError(f"{folder} was tuned with cma {recorded}, this is cma "
                         f"{import_cma().__version__}: a resume would not replay its search")


def _show(value) -> str:
    return ",".join(value) if isinstance(value, tuple) else str(value)


def write_manifest(folder: Path, manifest: dict) -> None:
    io.write_json(folder / MANIFEST, manifest)


MAX_BEST = 16 * 2**20  # best.json is kilobytes
TRIALS_FORMAT = "sniff-tune-trials/1"


def read_best(folder: Path) -> dict | None:
    """``best.json``, bounded and never blocking; None when there is none."""
    path = folder / BEST
    if not path.exists():
        return None
    try:
        best = json.loads(read_regular(path, MAX_BEST, BEST))
    except (OSError, ValueError, RecursionError) as error:
        raise SniffError(f"cannot read {path}: {error}; the tuning folder is damaged") from None
    keys = ("strategy", "params", "spec")
    if not isinstance(best, dict) or any(key not in best for key in keys) or not isinstance(
            best.get("validation", []), list):
        raise SniffError(f"{path} is not a best.json of sniff tune; the folder is damaged")
    return best


def read_trials(folder: Path, config: TuneConfig | None = None) -> pd.DataFrame | None:
    """The trials so far, checked to be this tuning run's (their format, and the columns
    ``config``'s parameters and opponents give); None when there are none."""
    path = folder / TRIALS
    if not path.exists():
        return None
    try:
        os.close(open_regular(path, TRIALS))  # a FIFO or a device is one line, not a hang
        meta = json.loads((pq.read_schema(path).metadata or {}).get(io.METADATA_KEY, b"{}"))
        trials = pd.read_parquet(path)
    except (OSError, ValueError, RecursionError, pa.ArrowException) as error:
        raise SniffError(f"cannot read {path}: {io.error_text(error)}; the tuning folder is "
                         "damaged") from None
    wanted = ["generation", "candidate", "win_rate"]
    if config is not None:
        wanted += [*config.params, *(f"wins_vs_{i}" for i in range(len(config.against)))]
    missing = [name for name in wanted if name not in trials.columns]
    numeric = all(pd.api.types.is_numeric_dtype(trials[n]) for n in wanted if n not in missing)
    if not isinstance(meta, dict) or meta.get("format") != TRIALS_FORMAT or missing or not numeric:
        raise SniffError(f"{path} is not the trials of this tuning run (" + (
            f"no column {missing[0]}" if missing else "not of sniff tune's format")
            + "); the folder is damaged or was edited")
    return trials


def write_trials(folder: Path, trials: pd.DataFrame, metadata: dict) -> None:
    """All trials so far, with the run's configuration in the Parquet metadata."""
    table = pa.Table.from_pandas(trials, preserve_index=False)
    table = table.replace_schema_metadata(
        {**(table.schema.metadata or {}), io.METADATA_KEY: json.dumps(metadata).encode()})
    buffer = bytes_io.BytesIO()
    pq.write_table(table, buffer, compression=io.COMPRESSION)
    io.write_bytes(folder / TRIALS, buffer.getvalue())


def write_best(folder: Path, best: dict) -> None:
    io.write_json(folder / BEST, best)


def write_curve(folder: Path, trials: pd.DataFrame, config: TuneConfig) -> None:
    from sim.display.charts import png_bytes
    from sim.tune.chart import learning_curve

    if len(trials):
        io.write_bytes(folder / CURVE, png_bytes(learning_curve(trials, config)))


def load(folder: str | Path) -> TuneResult:
    """A finished tuning folder as a :class:`TuneResult` (for a notebook)."""
    folder = Path(folder)
    manifest = read(folder)
    best = read_best(folder)
    if best is None:
        raise SniffError(f"{folder} holds no finished tuning run (no {BEST}); "
                         f"complete it with sniff tune --resume -o {folder}")
    validation = [Validation(**item) for item in best.get("validation", [])]
    return TuneResult(folder, best["strategy"], best["params"], best["spec"],
                      pd.read_parquet(folder / TRIALS), validation, manifest["status"],
                      best.get("acceptance"))
