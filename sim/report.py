"""``sniff report``: the numbers of one or more simulate runs, with an interval on each.

Why a separate computing step: :func:`build` turns run folders (or in-memory runs) into a
:class:`Report` of plain pandas DataFrames and dicts, so a notebook gets exactly the numbers
the HTML shows; ``sim.charts`` draws them and ``sim.report_html`` lays them out. Every
figure is computed from the Parquet tables themselves (the ``games`` and ``rounds``
columns of docs/data-format.md), never from the manifest's summary, so the report is only
as good as the data and the tests can check it against a direct pandas computation.

Definitions (docs/report.md repeats them for users):

- A *side* is a lineup position of a run (with 4 players a partnership), followed wherever
  seat rotation put it; a *strategy* is a side's label (``greedy``, or ``greedy+heavy`` for
  a mixed partnership).
- Win rates count undecided games (round cap) as games not won; intervals are 95% Wilson.
- The difference of two sides' win rates in one run uses the per-game values
  ``[a won] - [b won]`` (the two rates come from the same games); duplicate runs add the
  per-deal (paired) estimate. Differences between runs are independent-sample differences
  (Newcombe interval), shown only for sides that met the same opposition.
- Placement scores are not in the tables (the batch kernel keeps per-round totals): they
  come from a sample of the run's games traced again by the same compiled engine, checked
  game by game against the run's final scores, and are labelled as a sample.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from sim.errors import SniffError
from sim.stats import (
    Z95,
    paired_difference,
    proportion_difference,
    wilson_interval,
    win_rate_difference,
)

TOURNAMENT_MANIFEST = "tournament.json"
DEFAULT_PLACEMENT_SAMPLE = 300
GAME_COLUMNS = ["game_id", "deal_id", "rotation", "first_leader", "winner_side", "rounds",
                "cap_hit"]
ROUND_COLUMNS = ["game_id", "round_number", "end_reason", "domino_seat"]
ENDINGS = ("domino", "blocked", "target")


def _teams(players: int) -> int:
    return 2 if players == 4 else players


def required_columns(players: int) -> dict[str, list[str]]:
    """The columns of each table that a report reads (for the run's player count)."""
    teams = _teams(players)
    return {
        "games": GAME_COLUMNS + [f"team{t}_score" for t in range(teams)],
        "rounds": ROUND_COLUMNS + [f"team{t}_points" for t in range(teams)]
        + [f"seat{s}_penalty" for s in range(players)],
    }


# --- reading runs


@dataclass
class RunData:
    """One run's columns that the report needs, and how to name its sides."""

    name: str
    path: Path | None
    manifest: dict
    games: pd.DataFrame
    rounds: pd.DataFrame
    tournament: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def config(self) -> dict:
        return self.manifest["config"]

    @property
    def players(self) -> int:
        return int(self.config["players"])

    @property
    def n_sides(self) -> int:
        return _teams(self.players)

    @property
    def group(self) -> int:
        return int(self.config.get("deal_group", 1))

    @property
    def sides(self) -> list[str]:
        """Short side names, unique within the run (``greedy``, ``random (seat 1)``)."""
        from sim.simulation import side_labels

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
            "games": int(len(self.games)), "planned_games": int(config["games"]),
            "seed": config["seed"], "duplicate": bool(config.get("duplicate")),
            "status": self.manifest.get("status"), "run_id": self.manifest.get("run_id"),
            "stopped": self.manifest.get("stopped"), "notes": list(self.notes),
        }


def _expand(paths: Sequence) -> list[tuple[object, Path | None]]:
    """Run folders (or Run objects) in order; a tournament folder becomes its pairings."""
    from sim import io

    out: list[tuple[object, Path | None]] = []
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
        if (folder / TOURNAMENT_MANIFEST).exists():
            from sim.tournament import pairing_folders

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


def _read_table(run, name: str, columns: list[str]) -> pd.DataFrame:
    """The columns of one table, checking every part's schema first (clear errors)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from sim import io

    if run.path is None:
        table = run.table(name)
        missing = [c for c in columns if c not in table.column_names]
        if missing and table.num_rows:
            raise SniffError(f"in-memory run: the {name} table lacks column(s) "
                             f"{', '.join(missing)}")
        return table.select([c for c in columns if c in table.column_names]).to_pandas()
    files = io.part_files(run.path, name)
    for path in files:
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as error:
            raise SniffError(f"cannot read {path}: not a readable Parquet file ({error})") from None
        missing = [c for c in columns if c not in schema.names]
        if missing:
            raise SniffError(
                f"{path} lacks column(s) {', '.join(missing)}: not a sniff-simulate {name} "
                "table (or written by an incompatible version)")
    if not files:
        return pd.DataFrame(columns=columns)
    try:
        return run.dataset(name).to_table(columns=columns).to_pandas()
    except (OSError, pa.ArrowException) as error:
        raise SniffError(f"cannot read the {name} table of {run.path}: {error}") from None


def open_runs(paths: Sequence) -> list[RunData]:
    """Read the runs a report covers, refusing what it cannot report on, with the reason."""
    from sim import io

    if not paths:
        raise SniffError("give at least one run folder")
    runs: list[RunData] = []
    for item, tournament in _expand(paths):
        run = item if isinstance(item, io.Run) else io.load(item)
        where = str(run.path) if run.path else "in-memory run"
        config = run.manifest.get("config") or {}
        if "players" not in config or "labels" not in config:
            raise SniffError(f"{where}: its manifest has no run configuration")
        players = int(config["players"])
        columns = required_columns(players)
        games = _read_table(run, "games", columns["games"])
        if games.empty:
            raise SniffError(f"{where} holds no finished games (status "
                             f"{run.manifest.get('status')}): nothing to report")
        rounds = _read_table(run, "rounds", columns["rounds"])
        games = games.sort_values("game_id", kind="stable").reset_index(drop=True)
        rounds = rounds.sort_values(["game_id", "round_number"], kind="stable").reset_index(
            drop=True)
        rounds["end_reason"] = rounds["end_reason"].astype(str)
        notes = []
        status = run.manifest.get("status")
        if status != "complete":
            notes.append(f"the run is {status}: {len(games):,} of {config['games']:,} games "
                         "finished (the report covers those)")
        if not np.isin(rounds["game_id"].to_numpy(), games["game_id"].to_numpy()).all():
            raise SniffError(f"{where}: its rounds table has games its games table lacks")
        name = run.path.name if run.path else "run"
        runs.append(RunData(name, run.path, run.manifest, games, rounds, tournament, notes))
    for folder in dict.fromkeys(r.tournament for r in runs if r.tournament is not None):
        from sim.tournament import read_manifest

        manifest = read_manifest(folder)
        members = [r for r in runs if r.tournament == folder]
        if len(members) < len(manifest["pairings"]) or manifest.get("status") != "complete":
            members[0].notes.append(
                f"tournament {folder} is {manifest.get('status')}: {len(members)} of its "
                f"{len(manifest['pairings'])} pairings have games; the matrix and ratings "
                "cover those")
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


# --- per-game and per-round quantities by side


def _side_of_team(team, rotation, players: int):
    """Side (lineup position) that played team ``team`` in games with this rotation."""
    side = (team + rotation) % players
    return side % 2 if players == 4 else side


def _team_of_side(side: int, rotation, players: int):
    return (side - rotation) % (2 if players == 4 else players)


def _team_of_seat(seat, players: int):
    return seat % 2 if players == 4 else seat


def _round_rotation(run: RunData) -> np.ndarray:
    ids = run.games["game_id"].to_numpy()
    index = np.searchsorted(ids, run.rounds["game_id"].to_numpy())
    return run.games["rotation"].to_numpy(np.int64)[index]


def side_round_points(run: RunData) -> np.ndarray:
    """Points each side scored by placements in each round: ``(rounds, sides)``."""
    rotation = _round_rotation(run)
    points = np.column_stack([run.rounds[f"team{t}_points"].to_numpy(np.int64)
                              for t in range(run.n_sides)])
    rows = np.arange(points.shape[0])
    return np.column_stack([points[rows, _team_of_side(k, rotation, run.players)]
                            for k in range(run.n_sides)])


def side_round_penalties(run: RunData) -> np.ndarray:
    """Settlement penalty of each side in each round (its seats' penalties added)."""
    rotation = _round_rotation(run)
    out = np.zeros((len(run.rounds), run.n_sides), dtype=np.int64)
    for seat in range(run.players):
        side = _side_of_team(_team_of_seat(seat, run.players), rotation, run.players)
        penalty = run.rounds[f"seat{seat}_penalty"].to_numpy(np.int64)
        for k in range(run.n_sides):
            out[:, k] += np.where(side == k, penalty, 0)
    return out


def side_final_scores(run: RunData) -> np.ndarray:
    """Final score of each side in each game: ``(games, sides)``."""
    rotation = run.games["rotation"].to_numpy(np.int64)
    scores = np.column_stack([run.games[f"team{t}_score"].to_numpy(np.int64)
                              for t in range(run.n_sides)])
    rows = np.arange(scores.shape[0])
    return np.column_stack([scores[rows, _team_of_side(k, rotation, run.players)]
                            for k in range(run.n_sides)])


def _interval_row(wins: int, games: int) -> dict:
    low, high = wilson_interval(wins, games)
    return {"games": int(games), "wins": int(wins),
            "win_rate": wins / games if games else math.nan, "low": low, "high": high}


def _mean_se(values: np.ndarray) -> tuple[float, float]:
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return math.nan, math.nan
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(values.size) if values.size > 1 else math.nan
    return mean, se


def summary_rows(run: RunData) -> list[dict]:
    """Games, wins with a Wilson interval, and points per round ± standard error, per side."""
    winner = run.games["winner_side"].to_numpy(np.int64)
    points = side_round_points(run)
    rows = []
    for k in range(run.n_sides):
        mean, se = _mean_se(points[:, k])
        row = {"run": run.name, "side": run.sides[k], "strategy": run.strategies[k],
               **_interval_row(int((winner == k).sum()), len(winner)),
               "unfinished": int((winner < 0).sum()), "rounds": int(points.shape[0]),
               "points_per_round": mean, "points_se": se,
               "points_low": mean - Z95 * se, "points_high": mean + Z95 * se}
        rows.append(row)
    return rows


def seat_rows(run: RunData) -> list[dict]:
    """Win rate of each side by where it sat: seat (2-3 players) or partnership seats."""
    rotation = run.games["rotation"].to_numpy(np.int64)
    winner = run.games["winner_side"].to_numpy(np.int64)
    rows = []
    for k in range(run.n_sides):
        where = _team_of_side(k, rotation, run.players)
        for position in range(run.n_sides):
            name = (f"seats {position}+{position + 2}" if run.players == 4
                    else f"seat {position}")
            mask = where == position
            rows.append({"run": run.name, "side": run.sides[k], "position": name,
                         **_interval_row(int((winner[mask] == k).sum()), int(mask.sum()))})
    return rows


def leader_positions(players: int) -> list[str]:
    if players == 4:
        return ["own partnership leads round 1", "opponents lead round 1"]
    return ["leads round 1", "plays 2nd in round 1", "plays 3rd in round 1"][:players]


def leader_rows(run: RunData) -> list[dict]:
    """Win rate of each side by its turn order in round 1 (the first leader is drawn)."""
    rotation = run.games["rotation"].to_numpy(np.int64)
    leader = run.games["first_leader"].to_numpy(np.int64)
    winner = run.games["winner_side"].to_numpy(np.int64)
    names = leader_positions(run.players)
    rows = []
    for k in range(run.n_sides):
        team = _team_of_side(k, rotation, run.players)
        if run.players == 4:
            order = (leader % 2 != team).astype(np.int64)
        else:
            order = (team - leader) % run.players
        for position, name in enumerate(names):
            mask = order == position
            rows.append({"run": run.name, "side": run.sides[k], "position": name,
                         **_interval_row(int((winner[mask] == k).sum()), int(mask.sum()))})
    return rows


def difference_rows(run: RunData) -> list[dict]:
    """Every pair of sides: win-rate difference over the run's games, and per deal."""
    winner = run.games["winner_side"].to_numpy(np.int64)
    n = winner.size
    rows = []
    for i, j in combinations(range(run.n_sides), 2):
        wins_i, wins_j = int((winner == i).sum()), int((winner == j).sum())
        by_game = win_rate_difference(wins_i, wins_j, n)
        base = {"run": run.name, "side_a": run.sides[i], "side_b": run.sides[j],
                "win_rate_a": wins_i / n, "win_rate_b": wins_j / n}
        rows.append({**base, **by_game.to_dict(), "unit": "game"})
        if run.group > 1:
            x = (winner == i).astype(np.int64) - (winner == j)
            deals = run.games["deal_id"].to_numpy(np.int64)
            per_deal = pd.Series(x).groupby(deals).agg(["mean", "size"])
            complete = per_deal["size"] == run.group
            paired = paired_difference(per_deal.loc[complete, "mean"].to_numpy(),
                                       method="paired by deal")
            row = {**base, **paired.to_dict(), "unit": "deal"}
            row["independent_se"] = by_game.se
            row["narrower_by"] = (1 - paired.se / by_game.se) if by_game.se > 0 else math.nan
            rows.append(row)
    return rows


def _counts(values: np.ndarray, key: str, count: str = "count") -> pd.DataFrame:
    values = np.asarray(values, dtype=np.int64)
    unique, counts = np.unique(values, return_counts=True)
    total = counts.sum()
    return pd.DataFrame({key: unique, count: counts, "share": counts / total if total else []})


def distributions(run: RunData) -> dict:
    """Scoring distributions of one run: tables of counts and shares, plus their means."""
    points = side_round_points(run)
    penalties = side_round_penalties(run)
    reason = run.rounds["end_reason"].to_numpy()
    settled = reason != "target"
    scores = side_final_scores(run)
    winner = run.games["winner_side"].to_numpy(np.int64)
    out: dict = {}

    frames = []
    for k in range(run.n_sides):
        frame = _counts(points[:, k], "points", "rounds")
        frame.insert(0, "side", run.sides[k])
        frames.append(frame)
    out["points_per_round"] = pd.concat(frames, ignore_index=True)

    decided = winner >= 0
    margins = []
    frames = []
    for k in range(run.n_sides):
        mask = decided & (winner == k)
        own = scores[mask, k]
        others = np.delete(scores[mask], k, axis=1).max(axis=1) if mask.any() else own
        margin = own - others
        margins.append(margin)
        frame = _counts(margin, "margin", "games")
        frame.insert(0, "winner", run.sides[k])
        frames.append(frame)
    out["margin"] = pd.concat(frames, ignore_index=True)
    all_margins = np.concatenate(margins) if margins else np.zeros(0)
    out["margin_mean"] = _mean_se(all_margins)

    lengths = run.games["rounds"].to_numpy(np.int64)
    out["length"] = _counts(lengths, "rounds", "games")
    out["length_mean"] = _mean_se(lengths)

    frames = []
    penalty_means = {}
    for k in range(run.n_sides):
        frame = _counts(penalties[settled, k], "penalty", "rounds")
        frame.insert(0, "side", run.sides[k])
        frames.append(frame)
        penalty_means[run.sides[k]] = _mean_se(penalties[settled, k])
    out["penalties"] = pd.concat(frames, ignore_index=True)
    out["penalty_mean"] = penalty_means

    total = len(reason)
    domino_seat = run.rounds["domino_seat"].to_numpy(np.int64)
    rotation = _round_rotation(run)
    domino_side = np.where(
        domino_seat >= 0,
        _side_of_team(_team_of_seat(np.maximum(domino_seat, 0), run.players), rotation,
                      run.players), -1)
    rows = []
    for ending in ENDINGS:
        count = int((reason == ending).sum())
        low, high = wilson_interval(count, total)
        rows.append({"ending": ending, "side": "", "rounds": count,
                     "share": count / total if total else math.nan, "low": low, "high": high})
    for k in range(run.n_sides):
        count = int((domino_side == k).sum())
        low, high = wilson_interval(count, total)
        rows.append({"ending": "domino", "side": run.sides[k], "rounds": count,
                     "share": count / total if total else math.nan, "low": low, "high": high})
    out["endings"] = pd.DataFrame(rows)
    return out


# --- placement scores: a traced sample


def sample_ids(run: RunData, size: int) -> np.ndarray:
    """The first ``size`` games, cut to whole rotation cycles and deals when there is room."""
    ids = run.games["game_id"].to_numpy(np.int64)
    size = min(size, ids.size)
    block = run.players * run.group
    if size >= block:
        size -= size % block
    return ids[:size]


def sample_placements(run: RunData, size: int = DEFAULT_PLACEMENT_SAMPLE) -> dict:
    """Points of every placement in a sample of the run's games, traced again.

    The engine's event rows carry each placement's points; the batch kernel (and so the
    run's tables) keeps only round totals. A game depends only on the seed, its deal id,
    its id and its rotation, so tracing the same ids with the same compiled strategies
    gives the same games: each traced game's final scores are checked against the run's,
    and the sample is dropped (with a note) if any differs, e.g. when the simulator's code
    changed since the run was played. Returns ``{"table", "games", "placements", "note"}``.
    """
    from sim import engine
    from sim.runner import compile_lineup
    from sim.simulation import Plan, _recorded_kernel_strategies

    empty = {"table": pd.DataFrame(columns=["side", "points", "placements", "share"]),
             "games": 0, "placements": 0, "note": None}
    ids = sample_ids(run, size)
    if size <= 0 or ids.size == 0:
        return {**empty, "note": "placement scores not sampled (--placement-sample 0)"}
    try:
        plan = Plan.from_config(run.config)
        kernel_strategies = _recorded_kernel_strategies(run.manifest)
        kernel, functions, params, seat_index = compile_lineup(plan.lineup, kernel_strategies)
    except SniffError as error:
        return {**empty, "note": f"placement scores not sampled: {error}"}
    players = run.players
    seed = np.uint64(int(run.config["seed"]) % 2**64)
    by_id = run.games.set_index("game_id")
    seats, points = [], []
    mismatched = 0
    capacity = 2048
    for game_id in ids:
        rotation = int(by_id.at[game_id, "rotation"])
        seat_specs = np.zeros((1, engine.MAX_PLAYERS), dtype=np.int64)
        for seat in range(players):
            seat_specs[0, seat] = seat_index[(seat + rotation) % players]
        while True:
            events = np.zeros((capacity, engine.EVENT_WIDTH), dtype=np.int64)
            game_row = np.zeros((1, engine.GAME_FIELDS), dtype=np.int64)
            kernel.trace_game(
                seed, np.array([by_id.at[game_id, "deal_id"]], dtype=np.int64),
                np.array([game_id], dtype=np.int64), seat_specs, functions, params, players,
                int(run.config["round_cap"]), np.array([-1], dtype=np.int64), game_row,
                np.zeros((1, 0, engine.ROUND_FIELDS), dtype=np.int32), events)
            if events[-1, engine.EVENT_KIND] == 0:
                break
            capacity *= 4
        expected = [int(by_id.at[game_id, f"team{t}_score"]) for t in range(run.n_sides)]
        got = [int(v) for v in game_row[0, engine.GAME_SCORES:engine.GAME_SCORES + run.n_sides]]
        if got != expected:
            mismatched += 1
            continue
        plays = events[events[:, engine.EVENT_KIND] == engine.EVENT_PLAY]
        team = _team_of_seat(plays[:, engine.EVENT_SEAT], players)
        seats.append(_side_of_team(team, rotation, players))
        points.append(plays[:, engine.EVENT_POINTS])
    if mismatched:
        return {**empty, "note": (
            f"placement scores not shown: {mismatched} of {ids.size} traced games differ from "
            "the run (the simulator's code changed since it was played?)")}
    side = np.concatenate(seats)
    value = np.concatenate(points)
    frames = []
    for k in range(run.n_sides):
        frame = _counts(value[side == k], "points", "placements")
        frame.insert(0, "side", run.sides[k])
        frames.append(frame)
    return {"table": pd.concat(frames, ignore_index=True), "games": int(ids.size),
            "placements": int(value.size), "first_game": int(ids[0]),
            "last_game": int(ids[-1]),
            "note": f"games {int(ids[0])}..{int(ids[-1])} of the run ({ids.size} games, "
                    f"{value.size:,} placements) traced again; every one matched its final "
                    "scores in the run"}


# --- across runs: comparisons, pairwise matrix, ratings


def comparison_rows(runs: Sequence[RunData]) -> list[dict]:
    """Different strategies that met the same opposition in different runs (independent).

    Sides of two runs are compared only when their opponents are the same strategies (e.g.
    ``greedy`` in greedy-vs-random against ``heavy`` in heavy-vs-random): only then is a
    difference of win rates about the two strategies rather than about their opponents.
    Runs of one tournament are left to its ratings.
    """
    rows = []
    for a, b in combinations(runs, 2):
        if a.tournament is not None and a.tournament == b.tournament:
            continue
        wins_a = a.games["winner_side"].to_numpy()
        wins_b = b.games["winner_side"].to_numpy()
        for i in range(a.n_sides):
            for j in range(b.n_sides):
                opp_a = sorted(s for k, s in enumerate(a.strategies) if k != i)
                opp_b = sorted(s for k, s in enumerate(b.strategies) if k != j)
                if opp_a != opp_b or a.strategies[i] == b.strategies[j]:
                    continue
                diff = proportion_difference(int((wins_a == i).sum()), wins_a.size,
                                             int((wins_b == j).sum()), wins_b.size)
                rows.append({"run_a": a.name, "side_a": a.sides[i], "run_b": b.name,
                             "side_b": b.sides[j], "opposition": ", ".join(opp_a),
                             "win_rate_a": float((wins_a == i).mean()),
                             "win_rate_b": float((wins_b == j).mean()), **diff.to_dict()})
    return rows


def contests(runs: Sequence[RunData]):
    """Each run as a ratings contest: the strategy of every side and its wins."""
    from sim.ratings import Contest

    out = []
    for run in runs:
        winner = run.games["winner_side"].to_numpy()
        out.append(Contest(tuple(run.strategies),
                           tuple(int((winner == k).sum()) for k in range(run.n_sides))))
    return out


def pairwise_matrix(runs: Sequence[RunData]) -> pd.DataFrame:
    """Row strategy's share of the games it and the column strategy decided between them.

    Over every game where both sat at the table and one of them won: with two sides, the
    row's win rate among decided games against the column; with three players, the share
    of the games won by either of the two that the row won (the pairwise comparison the
    Luce model rates). Long format: row, column, wins, games, share, low, high.
    """
    names: list[str] = []
    for run in runs:
        for s in run.strategies:
            if s not in names:
                names.append(s)
    wins = {(a, b): 0 for a in names for b in names}
    for run in runs:
        winner = run.games["winner_side"].to_numpy()
        for i, j in combinations(range(run.n_sides), 2):
            a, b = run.strategies[i], run.strategies[j]
            if a == b:
                continue
            wins[(a, b)] += int((winner == i).sum())
            wins[(b, a)] += int((winner == j).sum())
    rows = []
    for a in names:
        for b in names:
            if a == b:
                continue
            won, lost = wins[(a, b)], wins[(b, a)]
            games = won + lost
            low, high = wilson_interval(won, games)
            rows.append({"row": a, "column": b, "wins": won, "games": games,
                         "share": won / games if games else math.nan, "low": low,
                         "high": high})
    return pd.DataFrame(rows, columns=["row", "column", "wins", "games", "share", "low", "high"])


def _rateable(runs: Sequence[RunData]) -> bool:
    names = {s for run in runs for s in run.strategies}
    return len(names) >= 3 or any(run.tournament is not None for run in runs)


# --- the report


@dataclass
class Report:
    """Every number of a report: DataFrames a notebook can use, charts and HTML draw."""

    runs: list[RunData]
    summary: pd.DataFrame
    by_seat: pd.DataFrame
    by_leader: pd.DataFrame
    differences: pd.DataFrame
    comparisons: pd.DataFrame
    distributions: dict[str, dict]
    placements: dict[str, dict]
    matrix: pd.DataFrame | None = None
    ratings: object = None  # sim.ratings.Ratings
    ratings_note: str | None = None
    created_at: str = ""
    title: str = "sniff report"
    openings: list[Path] = field(default_factory=list)  # `sniff openings` folders to include

    @property
    def players(self) -> int:
        return self.runs[0].players

    def to_dict(self) -> dict:
        """The numbers as plain JSON-ready values (``report.json``)."""

        def records(frame: pd.DataFrame | None) -> list[dict]:
            if frame is None:
                return []
            return json.loads(frame.to_json(orient="records"))

        return {
            "format": "sniff-report/1", "title": self.title, "created_at": self.created_at,
            "runs": [run.describe() for run in self.runs],
            "summary": records(self.summary), "by_seat": records(self.by_seat),
            "by_first_leader": records(self.by_leader),
            "differences": records(self.differences), "comparisons": records(self.comparisons),
            "distributions": {
                name: {key: (records(value) if isinstance(value, pd.DataFrame) else value)
                       for key, value in dist.items()}
                for name, dist in self.distributions.items()},
            "placements": {
                name: {key: (records(value) if isinstance(value, pd.DataFrame) else value)
                       for key, value in sample.items()}
                for name, sample in self.placements.items()},
            "pairwise": records(self.matrix),
            "ratings": self.ratings.to_dict() if self.ratings is not None else None,
            "ratings_note": self.ratings_note,
        }

    def write(self, out: str | os.PathLike) -> dict[str, Path]:
        """Charts (PNG), ``report.html`` (self-contained), ``report.md`` and ``report.json``."""
        from sim.report_html import write_report

        return write_report(self, Path(out))


MAX_PLACEMENT_SAMPLE = 100_000  # games traced again per run: minutes at most


def build(paths: Sequence, placement_sample: int = DEFAULT_PLACEMENT_SAMPLE,
          title: str | None = None, notice=None, openings: Sequence = ()) -> Report:
    """The report of run folders (or ``sim.io.Run`` objects, or tournament folders).

    ``placement_sample``: games per run traced again for the placement-score frequencies
    (0 skips them; tracing is single-threaded, slow for look-ahead strategies, and the
    first trace with a kernel compiles its tracer, about 30 s, cached after that).
    ``notice(text)`` hears what is being done. ``openings``: folders of ``sniff openings``
    whose per-tile section the report adds.
    """
    if isinstance(placement_sample, bool) or not isinstance(placement_sample, int) or \
            not 0 <= placement_sample <= MAX_PLACEMENT_SAMPLE:
        raise SniffError(f"--placement-sample must be 0 or more games, at most "
                         f"{MAX_PLACEMENT_SAMPLE:,}, got {placement_sample}")
    runs = open_runs(paths)
    for folder in openings:
        if not (Path(folder) / "openings.parquet").is_file():
            raise SniffError(f"not a sniff openings folder (no openings.parquet): {folder}")
    frame = pd.DataFrame
    report = Report(
        runs=runs,
        summary=frame([row for run in runs for row in summary_rows(run)]),
        by_seat=frame([row for run in runs for row in seat_rows(run)]),
        by_leader=frame([row for run in runs for row in leader_rows(run)]),
        differences=frame([row for run in runs for row in difference_rows(run)]),
        comparisons=frame(comparison_rows(runs)),
        distributions={run.name: distributions(run) for run in runs},
        placements={run.name: _sample_with_notice(run, placement_sample, notice)
                    for run in runs},
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        title=title or "sniff report: " + ", ".join(run.name for run in runs[:4])
        + (f" and {len(runs) - 4} more" if len(runs) > 4 else ""),
        openings=[Path(folder) for folder in openings],
    )
    if _rateable(runs):
        report.matrix = pairwise_matrix(runs)
        from sim.ratings import fit_ratings

        try:
            report.ratings = fit_ratings(contests(runs))
        except SniffError as error:
            report.ratings_note = f"no ratings: {error}"
        else:
            unmet = report.matrix[(report.matrix["games"] == 0)
                                  & (report.matrix["row"] < report.matrix["column"])]
            if len(unmet):
                pairs = ", ".join(f"{a} and {b}" for a, b in zip(unmet["row"], unmet["column"]))
                report.ratings.notes.append(
                    f"never met: {pairs}; their rating gap rests on the model alone (through "
                    "the opponents they shared)")
    return report


def default_folder(base: Path = Path("results")) -> Path:
    from sim.io import new_folder

    return new_folder("report", base)


def run_command(paths: Sequence, out: Path | None, *, placement_sample: int,
                title: str | None, openings: Sequence = ()) -> dict[str, Path]:
    """``sniff report``: build, write, and print where the files went."""
    import click

    from sim.io import check_writable_folder

    folder = Path(out) if out is not None else default_folder()
    check_writable_folder(folder)  # before the minutes of tracing that build may take
    report = build(paths, placement_sample=placement_sample, title=title,
                   notice=lambda text: click.echo(f"sniff: {text}", err=True),
                   openings=openings)
    files = report.write(folder)
    charts = sorted(name for name in files if name.endswith(".png"))
    click.echo(f"report of {len(report.runs)} run(s): {folder / 'report.html'} "
               f"(self-contained), report.md, report.json and {len(charts)} charts in {folder}/")
    for run in report.runs:
        for note in run.notes:
            click.echo(f"sniff: note: {run.name}: {note}", err=True)
    return files


def _sample_with_notice(run: RunData, size: int, notice) -> dict:
    if notice is not None and size > 0:
        notice(f"{run.name}: tracing {len(sample_ids(run, size))} games again for the "
               "placement scores")
    return sample_placements(run, size)


def p_value_text(p: float) -> str:
    """A p-value as people read it: ``< 0.0001`` rather than ``1.2e-19``."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "n/a"
    if p < 1e-4:
        return "< 0.0001"
    return f"{p:.4f}" if p < 0.01 else f"{p:.3f}"


__all__ = ["Report", "RunData", "build", "open_runs", "p_value_text"]
