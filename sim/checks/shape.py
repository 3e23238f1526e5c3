"""The shape a run's ``manifest.json`` and its ledger's lines must have before a reader uses them.

A run folder may come from someone else (docs/data-format.md, "A folder from someone
else"), so its manifest is checked once, where it is read (``sim.store.io.read_manifest``),
for what every reader takes from it: the types and ranges of the configuration and of the
run's own fields. Past this check a reader may use ``config["chunk_size"]`` as a divisor
or ``config["labels"]`` as a list without a traceback; whether the values are *true* (the
games were played so) is the parts' footers' question (``sim.checks.footers``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TypeGuard

from sim.core.checks import MAX_SEED
from sim.errors import SniffError

__all__ = ["check_run_manifest", "MAX_CHUNK_SIZE", "MAX_GAMES", "tournament_manifest_problem"]

# Sizes no run can have, refused by the planner (sim.run.plan) before anything starts, and
# here in a manifest: game ids beyond this would take years to play and petabytes to store.
MAX_GAMES = 10**12
MAX_CHUNK_SIZE = 2_000_000  # a chunk is held in memory while written
PER_SEAT = ("strategies", "labels", "strategy_names", "modules")


def _integer(value: object, low: int, high: int) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _texts(value, count: int) -> bool:
    return isinstance(value, list) and len(value) == count and all(
        isinstance(item, str) and len(item) <= 10_000 for item in value)


def config_problem(config) -> str | None:
    """What is wrong with the shape of a run's configuration, or None."""
    if not isinstance(config, dict):
        return "config is not a table of settings"
    players = config.get("players")
    if not _integer(players, 2, 4):
        return f"config.players is {players!r}, not 2, 3 or 4"
    checks = {
        "games": _integer(config.get("games"), 1, MAX_GAMES),
        "seed": _integer(config.get("seed"), 0, MAX_SEED),
        "chunk_size": _integer(config.get("chunk_size"), 1, MAX_CHUNK_SIZE),
        "deal_group": _integer(config.get("deal_group"), 1, 24),
        "round_cap": _integer(config.get("round_cap"), 1, 10**6),
        "duplicate": isinstance(config.get("duplicate"), bool),
        "rounds": isinstance(config.get("rounds", True), bool),
        "strategy_params": isinstance(config.get("strategy_params"), list)
        and len(config["strategy_params"]) == players
        and all(isinstance(item, dict) for item in config["strategy_params"]),
        "precision": config.get("precision") is None or (
            isinstance(config["precision"], int | float)
            and not isinstance(config["precision"], bool) and 0 < config["precision"] < 1),
        "sequential": config.get("sequential") is None or (
            isinstance(config["sequential"], list) and len(config["sequential"]) == 4
            and all(isinstance(x, int | float) and not isinstance(x, bool)
                    for x in config["sequential"])),
        **{name: _texts(config.get(name), players) for name in PER_SEAT},
    }
    bad = next((name for name, good in checks.items() if not good), None)
    seats = config.get(bad) if bad in (*PER_SEAT, "strategy_params") else None
    if isinstance(seats, list) and len(seats) != players:
        return f"config.{bad} names {len(seats)} seats, but config.players is {players}"
    if bad is not None:
        return f"config.{bad} is {_shown(config.get(bad))}, which no run records"
    return None


def _number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) \
        and not math.isnan(value)


def stopped_problem(stopped, config: dict) -> str | None:
    """What is wrong with the shape of a manifest's ``stopped`` (``sim.run.precision``'s or
    ``sim.run.sequential``'s record), or None: every field a reader shows, of its type, and
    a stop only in a run that has a stopping rule. Whether it is *true* is recomputed from
    the parts by ``sniff verify`` (``sim.audit.stops``)."""
    if stopped is None:
        return None
    shown = f"stopped is {_shown(stopped)}"
    if not isinstance(stopped, dict) or not _integer(stopped.get("games"), 1, config["games"]) \
            or not _integer(stopped.get("chunks"), 1, MAX_GAMES):
        return f"{shown}, not a stop within the run's games"
    if config.get("sequential") is not None:
        good = stopped.get("reason") in ("sprt", "max_games") and stopped.get("decision") in (
            "H0", "H1", "undecided") and all(_number(stopped.get(k))
                                            for k in ("llr", "lower", "upper"))
        return None if good else f"{shown}, not the stop of a sequential test"
    if config.get("precision") is not None:
        good = stopped.get("reason") in ("precision", "max_games") and "decision" not in stopped \
            and all(_number(stopped.get(k)) for k in ("half_width", "precision"))
        return None if good else f"{shown}, not the stop of a --precision run"
    return f"{shown}, but the run has no --precision or sequential test to stop it"


def identity_shape(identity: object) -> str | None:
    """What is wrong with the shape of a recorded identity (``{"engine": int, "strategies":
    {label: signature}}``, ``sim.run.signature``), or None; absent (a folder written
    before identities, which records a ``kernel`` code digest) is None too."""
    if identity is None:
        return None
    strategies = identity.get("strategies") if isinstance(identity, dict) else None
    if not (isinstance(identity, dict) and _integer(identity.get("engine"), 0, 1_000_000)
            and isinstance(strategies, dict) and len(strategies) <= 4
            and all(isinstance(k, str) and isinstance(v, str) and len(k) + len(v) <= 1_000
                    for k, v in strategies.items())):
        return f"identity is {_shown(identity)}, not an engine version and signatures"
    return None


def run_manifest_problem(manifest: dict) -> str | None:
    """What is wrong with the shape of a run manifest (its configuration included), or
    None."""
    if (problem := config_problem(manifest.get("config"))) is not None:
        return problem
    config = manifest["config"]
    if (problem := stopped_problem(manifest.get("stopped"), config)) is not None:
        return problem
    for name in ("run_id", "status", "ledger", "kernel", "version"):
        value = manifest.get(name)
        if value is not None and not (isinstance(value, str) and len(value) <= 1_000):
            return f"{name} is {_shown(value)}, not a text"
    if (problem := identity_shape(manifest.get("identity"))) is not None:
        return problem
    if manifest.get("ledger") not in (None, "parts.jsonl"):  # sim.checks.integrity.LEDGER
        return f"ledger is {_shown(manifest['ledger'])}, not the run's parts.jsonl"
    sessions = manifest.get("sessions")
    if sessions is not None and not (isinstance(sessions, list) and all(
            isinstance(item, dict) and _integer(item.get("games_played"), 0, MAX_GAMES)
            and isinstance(item.get("seconds"), int | float) for item in sessions)):
        return f"sessions is {_shown(sessions)}, not a list of sessions"
    owner = manifest.get("owner")
    if owner is not None and not isinstance(owner, dict):
        return f"owner is {_shown(owner)}, not a process"
    return None


def tournament_manifest_problem(manifest: dict) -> str | None:
    """What is wrong with the shape of a tournament's ``tournament.json``, or None."""
    config = manifest.get("config")
    if not isinstance(config, dict):
        return "config is not a table of settings"
    strategies = config.get("strategies")
    precision = config.get("precision")
    checks = {
        "players": _integer(config.get("players"), 2, 4),
        "strategies": isinstance(strategies, list) and 2 <= len(strategies) <= 1_000
        and _texts(strategies, len(strategies)),
        "games_per_pair": _integer(config.get("games_per_pair"), 1, MAX_GAMES),
        "seed": _integer(config.get("seed"), 0, MAX_SEED),
        "duplicate": isinstance(config.get("duplicate"), bool),
        "chunk_size": _integer(config.get("chunk_size"), 1, MAX_CHUNK_SIZE),
        "precision": precision is None or (isinstance(precision, int | float)
                                           and not isinstance(precision, bool)
                                           and 0 < precision < 1),
    }
    bad = next((name for name, good in checks.items() if not good), None)
    if bad is not None:
        return f"config.{bad} is {_shown(config.get(bad))}, which no tournament records"
    pairings = manifest.get("pairings")
    if not isinstance(pairings, list) or not all(isinstance(p, dict) for p in pairings):
        return f"pairings is {_shown(pairings)}, not a list of pairings"
    for name in ("status", "version", "command"):
        value = manifest.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name} is {_shown(value)}, not a text"
    if manifest.get("owner") is not None and not isinstance(manifest["owner"], dict):
        return f"owner is {_shown(manifest['owner'])}, not a process"
    return None


def check_run_manifest(manifest: dict, path: Path) -> None:
    """Refuse, in one line naming the field, a run manifest no sniff run writes."""
    problem = run_manifest_problem(manifest)
    if problem is not None:
        raise SniffError(f"{path}: {problem}; the run folder is damaged or was edited")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def record_shape_problem(record: dict, tables) -> str | None:
    """What is wrong with the shape of a ledger line (a field of the wrong type: ``bytes``
    as text, ``parts`` as a list), or None; checked before any field is used."""
    if not all(_count(record.get(key)) for key in ("first_game", "end_game")):
        return "first_game and end_game must be counts"
    parts = record.get("parts")
    if not isinstance(parts, dict):
        return "parts is not a table of parts"
    for table in tables:
        part = parts.get(table)
        if part is None:
            continue  # named as a missing part by the caller
        if not isinstance(part, dict) or not isinstance(part.get("file"), str) or not (
                _count(part.get("rows")) and _count(part.get("bytes"))
                and isinstance(part.get("sha256"), str)):
            return f"parts.{table} needs file, rows, bytes and sha256 of their types"
    return None


def recorded_bytes(records: dict[int, dict]) -> int:
    """The bytes of every part the ledger's records name (those of a sound shape)."""
    parts = [part for record in records.values() if isinstance(record.get("parts"), dict)
             for part in record["parts"].values() if isinstance(part, dict)]
    return sum(part["bytes"] for part in parts if _count(part.get("bytes")))
