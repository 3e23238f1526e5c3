"""Run folders opened for analysis: the columns a report reads, and a run's sides.

:func:`open_runs` turns run folders (or in-memory ``sim.store.io.Run`` objects, or tournament
folders, which stand for their pairings) into :class:`RunData`: the checked run, how many
games it holds and how to name its sides, with a one-line reason for each run a report
cannot use. It reads no table: the report adds up each run's figures chunk by chunk
(``sim.report.aggregate`` over ``sim.store.scan``), so memory stays bounded whatever the
run's size.

A tournament folder's manifest is read here (``sim.tournament`` writes it), so that a report
can stand on a tournament without importing the module that plays one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sim.checks.footers import required_columns  # noqa: F401  (readers import it here)
from sim.core.seating import team_count
from sim.errors import SettingError, SniffError

__all__ = [
    "check_run_ids", "open_runs", "pairing_folders", "pairing_runs", "pairing_seed", "PAIRS_DIR",
    "read_tournament_manifest", "required_columns", "result_problems", "RunData", "stray_pairs",
    "TOURNAMENT_FORMAT", "TOURNAMENT_MANIFEST"
]

if TYPE_CHECKING:
    from sim.store.io import Run

TOURNAMENT_FORMAT = "sniff-tournament/1"
TOURNAMENT_MANIFEST = "tournament.json"
PAIRS_DIR = "pairs"  # a tournament's pairing runs: pairs/NAME
# --- tournament folders


def read_tournament_manifest(folder: Path) -> dict:
    """A tournament folder's ``tournament.json``, checked for its format."""
    from sim.checks.shape import tournament_manifest_problem
    from sim.store import io

    path = Path(folder) / TOURNAMENT_MANIFEST
    manifest = io.read_manifest(folder, TOURNAMENT_MANIFEST, TOURNAMENT_FORMAT, "tournament")
    if (problem := tournament_manifest_problem(manifest)) is not None:
        raise SniffError(f"{path}: {problem}; the tournament folder is damaged or was edited")
    return manifest


def result_problems(folder: Path, manifest: dict, recomputed: dict, texts: dict[str, str],
                    outputs: Sequence[str]) -> list[str]:
    """What in a tournament's result differs from the result ``recomputed`` from its
    pairings: each field of ``tournament.json`` (``recomputed``: field -> value), each CSV
    (``texts``: name -> its text) and each of ``outputs`` against the size and sha256
    ``tournament.json`` records in ``files`` (every one on disk must be recorded). One line
    each."""
    from sim.checks.integrity import file_problem
    from sim.files import link_problem, read_regular

    where, problems = folder / TOURNAMENT_MANIFEST, []
    for key, value in recomputed.items():
        again = json.dumps(json.loads(json.dumps(value)), sort_keys=True)
        if json.dumps(manifest.get(key), sort_keys=True) != again:
            problems.append(f"{where}: its {key} do not match the pairings' games "
                            "(recomputed); the file was edited")
    for name, text in texts.items():
        if (link := link_problem(folder, name)) is not None:  # even to the same bytes
            problems.append(link)
            continue
        try:
            same = read_regular(folder / name, 64 * 2**20, name) == text.encode()
        except (OSError, ValueError):
            same = False
        if not same:
            problems.append(f"{folder / name}: does not match the pairings' games "
                            "(recomputed); the file was edited")
    files = manifest.get("files")
    if not isinstance(files, dict):
        problems.append(f"{where}: records no files (every complete tournament sniff writes "
                        "records its outputs' sizes and sha256)")
        files = {}
    for name in outputs:
        if name not in files and (folder / name).exists():
            problems.append(f"{where}: records no {name} (every output file is recorded)")
        elif (problem := file_problem(folder, name, files, TOURNAMENT_MANIFEST)) is not None:
            problems.append(problem)
    return list(dict.fromkeys(problems))  # a link among the CSVs: once, not twice


def stray_pairs(folder: Path) -> list[str]:
    """What a tournament's ``pairs/`` holds besides its pairings' folders (a folder another
    command wrote there, a file), one line each; ``tournament.json`` must be readable."""
    pairs = Path(folder) / "pairs"
    entries = read_tournament_manifest(folder).get("pairings")
    named = {entry.get("folder") for entry in entries if isinstance(entry, dict)} \
        if isinstance(entries, list) else set()
    if not pairs.is_dir():
        return []
    return [f"{path}: not a pairing of this tournament (its pairs/ holds only the folders "
            "its tournament.json names; this one was written there by something else)"
            for path in sorted(pairs.iterdir()) if f"pairs/{path.name}" not in named]


def pairing_seed(seed: int, lineup: Sequence[str]) -> int:
    """A pairing's run seed: a hash of the tournament seed and the lineup (0..2**63-1)."""
    digest = hashlib.sha256(f"{seed}|{'|'.join(lineup)}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def check_run_ids(folder: Path, manifest: dict, run_ids: list[str]) -> None:
    """Refuse a resume whose ``tournament.json`` settings no longer give the run ids its
    pairings were started with (``run_ids``: those its settings give now, in order): an
    edited ``games_per_pair`` or ``precision`` of a tournament none of whose pairings is
    played yet, which no pairing's own manifest can bind."""
    for index, (entry, run_id) in enumerate(zip(manifest["pairings"], run_ids)):
        if entry.get("run_id", run_id) != run_id:
            raise SniffError(f"{Path(folder) / TOURNAMENT_MANIFEST}: its settings do not give "
                             f"pairing {index + 1}'s run id {entry['run_id']} (they give "
                             f"{run_id}); the tournament folder was edited or is damaged")


def pairing_runs(folder: Path, manifest: dict | None = None) -> list[tuple[dict, Path]]:
    """Each pairing of a tournament and its run folder, checked against the tournament.

    ``tournament.json`` may come from someone else, so a pairing is believed only as what
    the tournament itself implies: its folder is ``pairs/NAME`` inside this tournament (no
    ``..``, no link out), its lineup is made of the tournament's strategies and its seed
    is the one the tournament seed gives that lineup; the run found there must record that
    lineup, that seed and the pairing's run id. Anything else is one line naming the
    pairing and the field.
    """
    from sim.store import io

    folder = Path(folder)
    manifest = read_tournament_manifest(folder) if manifest is None else manifest
    where = folder / TOURNAMENT_MANIFEST
    try:
        config, entries = manifest["config"], manifest["pairings"]
        strategies, seed = list(config["strategies"]), int(config["seed"])
        if not isinstance(entries, list):
            raise TypeError
    except (KeyError, TypeError, ValueError):
        raise SniffError(f"{where}: no valid config and pairings; the tournament folder is "
                         "damaged") from None
    size = 3 if config.get("players") == 3 else 2
    implied = [list(lineup) for lineup in combinations(strategies, size)]
    if len(entries) != len(implied):  # none, or pairings no tournament of these plays
        raise SniffError(f"{where}: lists {len(entries):,} pairings, but its {len(strategies)} "
                         f"strategies make {len(implied):,}; the tournament folder was edited "
                         "or is damaged")
    if (folder / PAIRS_DIR).is_symlink():  # every pairing would be read (or written) outside
        from sim.files import link_words

        raise SniffError(f"{folder / PAIRS_DIR}: is {link_words(folder / PAIRS_DIR)}, not the "
                         "tournament's pairs folder (sniff never makes a link in its folders); "
                         "the tournament folder was edited")
    pairs = (folder / PAIRS_DIR).resolve()
    out = []
    for index, entry in enumerate(entries):
        def refuse(what: str, index: int = index) -> SniffError:
            return SniffError(f"{where}: pairing {index + 1} {what}; the tournament folder "
                              "was edited or is damaged")

        if not isinstance(entry, dict):
            raise refuse("is not a record")
        name, lineup = entry.get("name"), entry.get("lineup")
        if not isinstance(name, str) or not _PAIRING_NAME.fullmatch(name) \
                or entry.get("folder") != f"{PAIRS_DIR}/{name}":
            raise refuse(f"names folder {_quoted(entry.get('folder'))}, not one in "
                         f"{PAIRS_DIR}/ of this tournament")
        path = folder / PAIRS_DIR / name
        if path.is_symlink() or (path.exists() and path.resolve().parent != pairs):
            raise refuse(f"folder {path} links outside the tournament")
        if not (isinstance(lineup, list) and lineup and all(isinstance(x, str) for x in lineup)
                and set(lineup) <= set(strategies) and len(set(lineup)) == len(lineup)):
            raise refuse(f"has lineup {_quoted(lineup)}, not strategies of the tournament")
        if entry.get("seed") != pairing_seed(seed, lineup):
            raise refuse(f"has seed {_quoted(entry.get('seed'))}, not the one the tournament "
                         f"seed {seed} gives {' vs '.join(lineup)}")
        if (path / io.MANIFEST).is_file():
            run = io.read_manifest(path)
            run_config = run.get("config") or {}
            if run_config.get("seed") != entry["seed"] or list(
                    dict.fromkeys(run_config.get("labels") or [])) != lineup:
                raise refuse(f"folder {path} holds a run of another lineup or seed")
            if run.get("run_id") != entry.get("run_id"):
                raise refuse(f"folder {path} holds run {_quoted(run.get('run_id'))}, not "
                             f"{entry['run_id']}")
            if (differ := _plan_difference(config, run_config)) is not None:
                raise refuse(f"folder {path} holds a run of {differ}")
        if lineup != implied[index]:
            raise refuse(f"has lineup {_quoted(lineup)} where the tournament plays "
                         f"{_quoted(implied[index])}")
        out.append((entry, path))
    return out


def _plan_difference(config: dict, run_config: dict) -> str | None:
    """How a pairing's run differs from what the tournament's settings play (its games per
    pair, precision, players, duplicate deals, chunk size), in words, or None: the settings
    a reader shows and a resume plays are bound to the games already played (a resume with
    another chunk size would write chunks that overlap the pairing's own)."""
    wanted = {"games": config.get("games_per_pair"), "precision": config.get("precision"),
              "players": config.get("players"), "duplicate": config.get("duplicate"),
              "chunk_size": config.get("chunk_size")}
    for name, value in wanted.items():
        if run_config.get(name) != value or type(run_config.get(name)) is not type(value):
            return (f"{name} {_quoted(run_config.get(name))}, where the tournament's "
                    f"settings say {_quoted(value)}")
    return None


_PAIRING_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")


def _quoted(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def pairing_folders(folder: Path) -> list[Path]:
    """The tournament's pairing runs that hold games, in pairing order (for reports)."""
    from sim.store import io

    manifest = read_tournament_manifest(folder)
    out = []
    for _, path in pairing_runs(folder, manifest):
        if (path / io.MANIFEST).exists() and io.part_files(path, "games"):
            out.append(path)
    if not out:
        raise SniffError(f"tournament {folder} holds no finished games yet "
                         f"(status {manifest.get('status')})")
    return out


# --- reading runs


@dataclass
class RunData:
    """One run a report covers: the checked run, its size, how to name its sides, and (once
    ``sim.report`` has read it) ``figures``, the counts behind every figure.

    Attributes:
        name: the run's name in the report.
        path: its folder (None: a run in memory).
        manifest: its manifest.
        run: its parts checked.
        n_games: its games.
        tournament: the tournament it is a pairing of, or None.
        notes: notes the report shows about it.
        figures: sim.report.aggregate.RunFigures, added by the report: a room above this one, so its
            class is not named here.
    """

    name: str
    path: Path | None
    manifest: dict
    run: Run  # its parts checked
    n_games: int
    tournament: Path | None = None
    notes: list[str] = field(default_factory=list)
    # sim.report.aggregate.RunFigures, added by the report: a room above this one, so its
    # class is not named here
    figures: Any = None

    @property
    def config(self) -> dict:
        return self.manifest["config"]

    @property
    def players(self) -> int:
        return int(self.config["players"])

    @property
    def n_sides(self) -> int:
        return team_count(self.players)

    @property
    def group(self) -> int:
        return int(self.config.get("deal_group", 1))

    @property
    def sides(self) -> list[str]:
        """Short side names, unique within the run (``greedy``, ``random (seat 1)``)."""
        from sim.store.summary import side_labels

        return side_labels(self.players, list(self.config["labels"]))[1]

    @property
    def strategies(self) -> list[str]:
        """The strategy of each side, as ratings and matrices name it."""
        labels = list(self.config["labels"])
        if self.players == 4:
            return [labels[k] if labels[k] == labels[k + 2] else f"{labels[k]}+{labels[k + 2]}"
                    for k in range(2)]
        return labels

    def describe(self) -> dict:
        config = self.config
        return {
            "run": self.name, "path": str(self.path) if self.path else None,
            "players": self.players, "lineup": list(config["labels"]),
            "games": int(self.n_games), "planned_games": int(config["games"]),
            "seed": config["seed"], "duplicate": bool(config.get("duplicate")),
            "status": self.manifest.get("status"), "run_id": self.manifest.get("run_id"),
            "stopped": self.manifest.get("stopped"), "notes": list(self.notes),
        }


def expand_paths(paths: Sequence) -> list[tuple[Run | Path, Path | None]]:
    """Run folders (or Run objects) in order; a tournament folder becomes its pairings."""
    from sim.store import io

    out: list[tuple[Run | Path, Path | None]] = []
    seen: set[str] = set()
    for item in paths:
        if isinstance(item, io.Run):
            out.append((item, None))
            continue
        folder = Path(item)
        if not folder.exists():
            raise SniffError(f"no such run folder: {folder}")
        if folder.is_file():
            if folder.suffix == ".parquet":
                raise SniffError(
                    f"{folder} is a Parquet file; sniff report reads run folders (the folder "
                    f"holding manifest.json, games/ and rounds/), e.g. {folder.parent.parent}")
            raise SniffError(f"{folder} is a file, not a run folder")
        members: list[tuple[Path, Path | None]]
        if (folder / TOURNAMENT_MANIFEST).exists():
            members = [(member, folder) for member in pairing_folders(folder)]
        elif not (folder / io.MANIFEST).exists():
            inside = sorted(p.name for p in folder.iterdir()
                            if p.is_dir() and (p / io.MANIFEST).exists())
            more = ", ..." if len(inside) > 3 else ""
            hint = f" (it holds runs: {', '.join(inside[:3])}{more})" if inside else ""
            raise SniffError(f"{folder} is not a sniff run: it has no {io.MANIFEST}{hint}")
        else:
            members = [(folder, None)]
        for member, tournament in members:
            key = str(member.resolve())
            if key not in seen:
                seen.add(key)
                out.append((member, tournament))
    return out


def open_runs(paths: Sequence) -> list[RunData]:
    """Read the runs a report covers, refusing what it cannot report on, with the reason."""
    from sim.store import io

    if not paths:
        raise SniffError("give at least one run folder")
    runs: list[RunData] = []
    for item, tournament in expand_paths(paths):
        run = item if isinstance(item, io.Run) else io.open_run(item)
        where = str(run.path) if run.path else "in-memory run"
        config = run.manifest.get("config") or {}
        if "players" not in config or "labels" not in config:
            raise SniffError(f"{where}: its manifest has no run configuration")
        if "rounds" not in io.tables_of(config):
            raise SettingError(f"{where} was played with {{rounds=False}} and a report needs "
                               "its rounds table: play it again without {rounds=False}")
        from sim.store.scan import table_rows

        games = table_rows(run, "games")
        if not games:
            raise SniffError(f"{where} holds no finished games (status "
                             f"{run.manifest.get('status')}): nothing to report")
        notes = []
        status = run.manifest.get("status")
        if status == "running":  # its writer holds the folder's lock now (sim.store.lock)
            notes.append(f"the run is still being written: {games:,} of "
                         f"{config['games']:,} games finished so far (the report covers those)")
        elif status != "complete":
            notes.append(f"the run is {status}: {games:,} of {config['games']:,} games "
                         "finished (the report covers those)")
        name = run.path.name if run.path else "run"
        runs.append(RunData(name, run.path, run.manifest, run, games, tournament, notes))
    for folder in dict.fromkeys(r.tournament for r in runs if r.tournament is not None):
        manifest = read_tournament_manifest(folder)
        members = [r for r in runs if r.tournament == folder]
        if len(members) < len(manifest["pairings"]) or manifest.get("status") != "complete":
            members[0].notes.append(
                f"tournament {folder} is {manifest.get('status')}: {len(members)} of its "
                f"{len(manifest['pairings'])} pairings have games; the matrix and ratings "
                "cover those")
    from sim.checks.verified import unverified_note

    for r in runs:  # the ledger's word taken, or said so (sim.checks.verified), last
        if r.path is not None and (note := unverified_note(r.path, r.run.checked)):
            r.notes.append(note)
    counts = {r.players for r in runs}
    if len(counts) > 1:
        detail = ", ".join(f"{r.name} ({r.players})" for r in runs)
        raise SniffError(f"cannot mix runs with different player counts in one report: {detail}; "
                         "report them separately")
    names = [r.name for r in runs]
    for r in runs:  # make names unique: fall back to the path, then to a number
        if names.count(r.name) > 1 and r.path is not None:
            r.name = str(r.path)
    seen: dict[str, int] = {}
    for r in runs:
        if r.name in seen:
            seen[r.name] += 1
            r.name = f"{r.name} #{seen[r.name]}"
        else:
            seen[r.name] = 1
    return runs
