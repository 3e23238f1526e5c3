"""``sniff simulate`` and ``sim.simulate``: many games, chunk by chunk, into a Parquet run.

A run is a list of game ids ``0..games-1`` cut into chunks of ``chunk_size`` consecutive
ids. Game ``g`` is fully defined by the run seed, its deal id and its rotation:

- rotation ``g % players``: seat ``s`` is played by lineup seat ``(s + g) % players``, so
  every strategy sits in every seat (and, the first leader being drawn from the deal, leads
  first) equally often;
- deal id ``g`` by default; with ``duplicate`` the games of one deal group share one deal
  id, ``g // group``, where the group is 2 games with 2 or 4 players (the second game has
  the sides swapped: rotation + 1) and 3 games with 3 players (rotations 0, 1, 2, so each
  strategy plays each seat of the deal once).

Since no game depends on another, the tables are the same for any chunk size and thread
count, and a resumed run only plays the chunks whose parts are missing. The summary is
computed from the tables as they are written (or read back, for chunks a resumed run
already had), streaming, so memory stays bounded whatever the number of games.
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

import numpy as np

from sim.errors import SniffError, Stopped
from sim.stats import Z95, Moments, wilson_half_width, wilson_interval

DEFAULTS = {
    "players": 4,
    "strategies": "greedy,random",
    "games": 100_000,
    "seed": 0,
    "duplicate": False,
    "chunk_size": 50_000,
    "precision": None,
}
FLAGS = {
    "players": "--players",
    "strategies": "--strategies",
    "games": "--games",
    "seed": "--seed",
    "duplicate": "--duplicate",
    "chunk_size": "--chunk-size",
    "precision": "--precision",
}
IN_MEMORY_LIMIT = 1_000_000
# Sizes that cannot work are refused before anything starts: game ids beyond this would
# take years to play and petabytes to store, and a chunk is held in memory while written.
MAX_GAMES = 10**12
MAX_CHUNK_SIZE = 2_000_000
BATCH_GAMES = 8192  # games per kernel call: a few MB of round rows (greedy), ~100 MB at worst
RESULTS_DIR = Path("results")
MAX_SEED = 2**63 - 1


def rotation_for(game_ids: np.ndarray, players: int) -> np.ndarray:
    """Game g shifts the lineup by g % players seats, so every side sits everywhere equally."""
    return game_ids % players


def deal_group(players: int, duplicate: bool) -> int:
    """Games per deal: 1, or with duplicate deals 2 (2 and 4 players) or 3 (3 players)."""
    if not duplicate:
        return 1
    return 3 if players == 3 else 2


def spec_text(spec) -> str:
    """A strategy spec with every parameter written out, so it parses back to itself."""
    strategy = spec.strategy
    if not strategy.params:
        return strategy.name
    choices = getattr(strategy, "choices", {})
    values = ",".join(
        f"{key}={choices[key][int(value)] if key in choices else repr(float(value))}"
        for key, value in zip(strategy.params, spec.values)
    )
    return f"{strategy.name}:{values}"


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- --precision: play until every win rate is known to within +-precision


PRECISION_STEP = 600  # games between stop checks; a multiple of 2, 3 and 4 (see below)
DEFAULT_MAX_GAMES = 1_000_000  # the cap of a --precision run without --max-games


def check_precision(precision: float | None) -> float | None:
    if precision is None:
        return None
    if isinstance(precision, bool) or not isinstance(precision, int | float) or not (
            0 < precision < 0.5):
        raise SniffError(f"--precision must be a half-width between 0 and 0.5 (e.g. 0.005 "
                         f"for +-0.5 percentage points), got {precision}")
    return float(precision)


def cap_options(options: dict, resume: bool = False) -> dict:
    """Map ``max_games`` (the cap of a ``--precision`` run) onto ``games``, the plan's length.

    A ``--precision`` run plans ``--max-games`` games and stops at the first check where it
    is precise enough, so ``--games`` (a fixed count) and ``--precision`` exclude each other.
    """
    options = dict(options)
    max_games = options.pop("max_games", None)
    if options.get("precision") is not None and options.get("games") is not None:
        raise SniffError("--games and --precision exclude each other: --precision plays until "
                         "the win rates are precise enough; give its cap as --max-games")
    if max_games is not None:
        if options.get("games") is not None:
            raise SniffError("--games and --max-games exclude each other")
        if options.get("precision") is None and not resume:
            raise SniffError("--max-games is the cap of a --precision run; without --precision "
                             "give the number of games as --games")
        options["games"] = max_games
    elif options.get("precision") is not None and not resume:
        options["games"] = DEFAULT_MAX_GAMES
    return options


def precision_stop(
    wins_before: np.ndarray, games_before: int, winner_side: np.ndarray, precision: float,
    step: int = PRECISION_STEP,
) -> tuple[int, float] | None:
    """Where a ``--precision`` run stops inside a chunk: ``(games, half-width)``, or None.

    The run is checked after every ``step`` games of the game-id sequence (not at chunk
    ends), and stops at the first check where every side's 95% Wilson win-rate interval has
    a half-width of at most ``precision``. So the games played are always a prefix
    ``0..n-1`` of the same sequence, and ``n`` is the same for any chunk size or thread
    count. ``step`` is a multiple of 2, 3 and 4: a stop never splits a rotation cycle or a
    duplicate deal. Stopping on the width (not on the estimate) keeps the interval honest:
    the width depends on the win rate only through ``p (1 - p)``.

    ``wins_before``/``games_before``: the run's counts before this chunk; ``winner_side``:
    the chunk's games in id order (-1 undecided).
    """
    n = winner_side.size
    first = (games_before // step + 1) * step
    checks = np.arange(first, games_before + n + 1, step)
    if checks.size == 0:
        return None
    sides = wins_before.size
    decided = winner_side >= 0
    one_hot = np.zeros((n, sides), dtype=np.int64)
    one_hot[np.flatnonzero(decided), winner_side[decided]] = 1
    wins = wins_before[None, :] + np.cumsum(one_hot, axis=0)[checks - games_before - 1]
    for games, row in zip(checks, wins):
        half = max(wilson_half_width(int(w), int(games)) for w in row)
        if half <= precision:
            return int(games), half
    return None


def stopped_games(manifest: dict | None) -> int | None:
    """Games of a run that stopped for precision (its last part is cut there), else None."""
    stopped = (manifest or {}).get("stopped")
    if stopped and stopped.get("reason") == "precision":
        return int(stopped["games"])
    return None


def _truncate_chunk(tables: dict, end_game: int) -> dict:
    """A chunk's tables without the games from ``end_game`` on (a stop for precision)."""
    import pyarrow.compute as pc

    games = tables["games"]
    keep = pc.less(games["game_id"], end_game)
    return {"games": games.filter(keep),
            "rounds": tables["rounds"].filter(pc.less(tables["rounds"]["game_id"], end_game))}


# --- the plan: everything that decides the games


@dataclass(frozen=True)
class Plan:
    players: int
    strategies: tuple[str, ...]  # one full spec per lineup seat (before rotation)
    games: int
    seed: int
    duplicate: bool
    chunk_size: int
    round_cap: int
    precision: float | None = None  # --precision: stop early (see precision_stop)

    @classmethod
    def build(
        cls, players: int, strategies, games: int, seed: int, duplicate: bool, chunk_size: int,
        round_cap: int | None = None, precision: float | None = None,
    ) -> Plan:
        from sim.runner import ROUND_CAP, lineup_of
        from strategies import parse_lineup_text, parse_spec

        if isinstance(players, bool) or players not in (2, 3, 4):
            raise SniffError(f"players must be 2, 3 or 4, got {players}")
        for name, value, most in (("games", games, MAX_GAMES),
                                  ("chunk_size", chunk_size, MAX_CHUNK_SIZE)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SniffError(f"{FLAGS[name]} must be a positive integer, got {value}")
            if value > most:
                flag = "--max-games" if name == "games" and precision is not None else FLAGS[name]
                raise SniffError(f"{flag} must be at most {most:,}, got {value:,}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise SniffError(f"--seed must be an integer from 0 to 2**63-1, got {seed}")
        if isinstance(strategies, str):
            specs = parse_lineup_text(strategies)
        else:
            specs = [parse_spec(item) if isinstance(item, str) else item for item in strategies]
        lineup = lineup_of(players, specs)
        precision = check_precision(precision)
        group = deal_group(players, bool(duplicate))
        if games % group:
            low, high = games - games % group, games - games % group + group
            raise SniffError(
                f"--duplicate plays every deal {group} times with {players} players, so "
                f"--games must be a multiple of {group} (e.g. {low or group} or {high}), "
                f"got {games}"
            )
        return cls(
            players=players,
            strategies=tuple(spec_text(spec) for spec in lineup.seats),
            games=games,
            seed=seed,
            duplicate=bool(duplicate),
            chunk_size=chunk_size,
            round_cap=ROUND_CAP if round_cap is None else round_cap,
            precision=precision,
        )

    @classmethod
    def from_config(cls, config: dict) -> Plan:
        from strategies import available, load_plugin

        known = available()
        for name, module in zip(config["strategy_names"], config["modules"]):
            if name not in known:
                load_plugin(module)
        return cls.build(
            config["players"], ",".join(config["strategies"]), config["games"], config["seed"],
            config["duplicate"], config["chunk_size"], config["round_cap"],
            config.get("precision"),
        )

    @cached_property
    def lineup(self):
        from sim.runner import lineup_of
        from strategies import parse_lineup_text

        return lineup_of(self.players, parse_lineup_text(",".join(self.strategies)))

    @property
    def labels(self) -> list[str]:
        """Label of each lineup seat's strategy."""
        return [spec.label for spec in self.lineup.seats]

    @property
    def group(self) -> int:
        return deal_group(self.players, self.duplicate)

    @property
    def n_chunks(self) -> int:
        return -(-self.games // self.chunk_size)

    def chunk_bounds(self, chunk: int) -> tuple[int, int]:
        return chunk * self.chunk_size, min(self.games, (chunk + 1) * self.chunk_size)

    @property
    def run_id(self) -> str:
        """A hash of what decides the games (not the chunk size): same id, same tables."""
        from sim import __version__

        key = {
            "version": __version__, "players": self.players, "strategies": self.strategies,
            "seed": self.seed, "games": self.games, "duplicate": self.duplicate,
            "round_cap": self.round_cap,
        }
        if self.precision is not None:  # it decides how many of the games are played
            key["precision"] = self.precision
        return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]

    def config(self) -> dict:
        seats = self.lineup.seats
        return {
            "players": self.players,
            "strategies": list(self.strategies),
            "labels": self.labels,
            "strategy_names": [spec.strategy.name for spec in seats],
            "strategy_params": [
                dict(zip(spec.strategy.params, spec.values)) for spec in seats
            ],
            "modules": [spec.strategy.module for spec in seats],
            "games": self.games,
            "seed": self.seed,
            "duplicate": self.duplicate,
            "deal_group": self.group,
            "deal_id": "game_id // deal_group",
            "rotation": "game_id % players",
            "chunk_size": self.chunk_size,
            "chunks": self.n_chunks,
            "round_cap": self.round_cap,
            **({"precision": self.precision, "precision_step": PRECISION_STEP}
               if self.precision is not None else {}),
        }

    def flag_text(self, name: str) -> str:
        if name == "duplicate":
            return "--duplicate" if self.duplicate else "--no-duplicate"
        if name == "strategies":
            return f"--strategies {','.join(self.labels)}"
        if name == "precision" and self.precision is None:
            return "no --precision"
        if name == "games" and self.precision is not None:
            return f"--max-games {self.games}"
        return f"{FLAGS[name]} {getattr(self, name)}"


def resolve_plan(options: dict, manifest: dict | None = None, folder: Path | None = None) -> Plan:
    """The plan from the options given (None = not given).

    A new run fills what is missing from ``DEFAULTS``; a resumed run from its manifest,
    and every option given must then agree with the recorded one.
    """
    if manifest is None:
        values = {k: DEFAULTS[k] if options.get(k) is None else options[k] for k in DEFAULTS}
        return Plan.build(**values)
    recorded = Plan.from_config(manifest["config"])
    scalars = [name for name in DEFAULTS if name != "strategies" and options.get(name) is not None]
    differ = [name for name in scalars if options[name] != getattr(recorded, name)]
    if differ:
        _refuse_resume(folder, recorded, differ, {name: options[name] for name in differ})
    values = {
        "players": recorded.players, "strategies": list(recorded.strategies),
        "games": recorded.games, "seed": recorded.seed, "duplicate": recorded.duplicate,
        "chunk_size": recorded.chunk_size, "precision": recorded.precision,
    }
    values.update({k: v for k, v in options.items() if k in DEFAULTS and v is not None})
    asked = Plan.build(**values, round_cap=recorded.round_cap)
    differ = [name for name in DEFAULTS if getattr(asked, name) != getattr(recorded, name)]
    if differ:
        _refuse_resume(folder, recorded, differ, {}, asked)
    return recorded


def _refuse_resume(folder, recorded: Plan, differ: list[str], given: dict, asked=None) -> None:
    def asked_text(name: str) -> str:
        if asked is not None:
            return asked.flag_text(name)
        if name == "duplicate":
            return "--duplicate" if given[name] else "--no-duplicate"
        return f"{FLAGS[name]} {given[name]}"

    was = ", ".join(recorded.flag_text(name) for name in differ)
    now = ", ".join(asked_text(name) for name in differ)
    raise SniffError(
        f"cannot resume {folder}: it was started with {was}, this command asks {now}; "
        "resume with the same settings (or leave them out), or start again with --overwrite"
    )


# --- the summary


def side_labels(players: int, labels: list[str]) -> tuple[list[str], list[str]]:
    """Long and short names of the lineup sides (partnerships with 4 players)."""
    if players == 4:
        short = [labels[k] if labels[k] == labels[k + 2] else f"{labels[k]}+{labels[k + 2]}"
                 for k in range(2)]
        long = [f"seats {k}+{k + 2}: {short[k]}" for k in range(2)]
        if short[0] == short[1]:
            short = [f"{short[k]} (seats {k}+{k + 2})" for k in range(2)]
        return long, short
    long = [f"seat {k}: {label}" for k, label in enumerate(labels)]
    if len(set(labels)) < len(labels):
        return long, [f"{label} (seat {k})" for k, label in enumerate(labels)]
    return long, list(labels)


class Summary:
    """Wins, points per round and (duplicate deals) the paired win-rate differences.

    Fed chunk by chunk, in game id order, with columns of the ``games`` and ``rounds``
    tables; keeps only running counts and moments.
    """

    def __init__(self, players: int, labels: list[str], group: int, round_cap: int) -> None:
        self.players = players
        self.labels, self.short = side_labels(players, labels)
        self.n_sides = 2 if players == 4 else players
        self.group = group
        self.round_cap = round_cap
        self.games = 0
        self.unfinished = 0
        self.wins = np.zeros(self.n_sides, dtype=np.int64)
        self.points = [Moments() for _ in range(self.n_sides)]
        self.pairs = [(i, j) for i in range(self.n_sides) for j in range(i + 1, self.n_sides)]
        self.by_game = [Moments() for _ in self.pairs]
        self.by_deal = [Moments(scale=1 / group) for _ in self.pairs]  # fed deal sums
        self._pending: tuple[np.ndarray, np.ndarray] | None = None
        self.timing: dict | None = None  # played, seconds, threads of the last session
        self.folder: Path | None = None
        self.stopped: dict | None = None  # a --precision run: why and where it stopped

    def add_tables(self, games, rounds) -> None:
        """Add a chunk given as pyarrow tables (or anything with the same columns)."""
        teams = 2 if self.players == 4 else self.players
        points = np.column_stack(
            [np.asarray(rounds[f"team{t}_points"], dtype=np.int64) for t in range(teams)]
        ) if len(rounds) else np.zeros((0, teams), dtype=np.int64)
        self.add(
            np.asarray(games["winner_side"], dtype=np.int64),
            np.asarray(games["deal_id"], dtype=np.int64),
            np.asarray(games["rotation"], dtype=np.int64),
            np.asarray(games["rounds"], dtype=np.int64),
            points,
        )

    def add(self, winner_side, deal_ids, rotations, rounds_per_game, team_points) -> None:
        self.games += winner_side.size
        self.unfinished += int((winner_side < 0).sum())
        self.wins += np.bincount(winner_side[winner_side >= 0], minlength=self.n_sides)
        # Points of each side in each round: team t of a game with rotation r is side
        # (t + r) % players (folded onto the two partnerships with 4 players).
        round_rotation = np.repeat(rotations, rounds_per_game)
        for team in range(team_points.shape[1]):
            side = (team + round_rotation) % self.players
            if self.players == 4:
                side %= 2
            points = np.asarray(team_points[:, team], dtype=np.int64)
            # Per side in one pass each; float sums of integers stay exact far beyond a
            # chunk's (|points| < 2**12, rows < 2**28: squares sum below 2**53).
            counts = np.bincount(side, minlength=self.n_sides)
            sums = np.bincount(side, weights=points, minlength=self.n_sides)
            squares = np.bincount(side, weights=points * points, minlength=self.n_sides)
            for k in range(self.n_sides):
                self.points[k].add_sums(int(counts[k]), int(sums[k]), int(squares[k]))
        if not self.pairs or self.group == 1:
            return
        x = np.column_stack(
            [(winner_side == i).astype(np.int64) - (winner_side == j) for i, j in self.pairs]
        )
        for index in range(len(self.pairs)):
            self.by_game[index].add(x[:, index])
        # Per deal: the difference summed over the deal's games (``by_deal`` scales the sums
        # to means). A deal's games are consecutive; one cut by a chunk boundary waits for
        # the rest in ``_pending``.
        if self._pending is not None:
            deal_ids = np.concatenate([self._pending[0], deal_ids])
            x = np.concatenate([self._pending[1], x])
            self._pending = None
        if deal_ids.size == 0:
            return
        starts = np.flatnonzero(np.r_[True, deal_ids[1:] != deal_ids[:-1]])
        sizes = np.diff(np.r_[starts, deal_ids.size])
        if sizes[-1] < self.group:
            cut = starts[-1]
            self._pending = (deal_ids[cut:], x[cut:])
            deal_ids, x, starts, sizes = deal_ids[:cut], x[:cut], starts[:-1], sizes[:-1]
        if starts.size:
            sums = np.add.reduceat(x, starts, axis=0)
            for index in range(len(self.pairs)):
                self.by_deal[index].add(sums[:, index])

    def to_dict(self) -> dict:
        sides = []
        for k in range(self.n_sides):
            low, high = wilson_interval(int(self.wins[k]), self.games)
            mean, p_low, p_high = self.points[k].interval()
            sides.append({
                "side": self.labels[k], "wins": int(self.wins[k]),
                "win_rate": self.wins[k] / self.games if self.games else math.nan,
                "win_rate_ci95": [low, high],
                "points_per_round": mean, "points_per_round_ci95": [p_low, p_high],
            })
        out = {"games": self.games, "unfinished": self.unfinished, "sides": sides}
        if self.stopped is not None:
            out["stopped"] = dict(self.stopped)
        if self.group > 1:
            out["duplicate"] = [self._pair(index) for index in range(len(self.pairs))]
        return out

    def _pair(self, index: int) -> dict:
        i, j = self.pairs[index]
        paired = self.by_deal[index].half_width(Z95)
        independent = self.by_game[index].half_width(Z95)
        ratio = paired / independent if independent > 0 else math.nan
        return {
            "sides": [self.short[i], self.short[j]],
            "difference": self.by_game[index].mean,
            "deals": self.by_deal[index].n,
            "paired_half_width": paired,
            "independent_half_width": independent,
            "narrower_by": 1 - ratio,
            "equivalent_games_factor": 1 / ratio**2 if ratio > 0 else math.inf,
        }

    def lines(self) -> list[str]:
        teams = " in 2 partnerships" if self.players == 4 else ""
        out = [f"{self.games:,} games, {self.players} players{teams}: "
               + " vs ".join(self.short)]
        width = max(len(label) for label in self.labels)
        for side in self.to_dict()["sides"]:
            low, high = side["win_rate_ci95"]
            p_low, p_high = side["points_per_round_ci95"]
            out.append(
                f"  {side['side']:<{width}}  wins {side['win_rate']:7.2%} "
                f"(95% CI {low:.2%}-{high:.2%})   points/round {side['points_per_round']:6.2f} "
                f"(95% CI {p_low:.2f}-{p_high:.2f})"
            )
        if self.unfinished:
            out.append(f"  undecided at the {self.round_cap}-round cap: {self.unfinished:,} games")
        if self.group > 1:
            deals = self.by_deal[0].n if self.pairs else 0
            out.append(f"  duplicate deals: {deals:,} deals, each played {self.group} times; "
                       "win-rate difference ± 95% half-width, paired by deal vs independent deals:")
            for index in range(len(self.pairs)):
                pair = self._pair(index)
                a, b = pair["sides"]
                narrower = pair["narrower_by"]
                change = (f"{narrower:.0%} narrower" if narrower >= 0
                          else f"{-narrower:.0%} wider")
                out.append(
                    f"    {a} - {b}: {pair['difference']:+.2%} ± "
                    f"{pair['paired_half_width']:.2%} paired, ± "
                    f"{pair['independent_half_width']:.2%} independent: {change} "
                    f"(as precise as {pair['equivalent_games_factor']:.2f}x the games)"
                )
        if self.stopped is not None:
            stop = self.stopped
            why = ("precise enough" if stop["reason"] == "precision"
                   else f"the --max-games cap, not yet +-{stop['precision']:.2%}")
            out.append(f"  --precision {stop['precision']:g}: stopped at {stop['games']:,} games "
                       f"({why}); widest win-rate half-width {stop['half_width']:.2%}")
        if self.timing:
            played, seconds = self.timing["played"], self.timing["seconds"]
            rate = played / seconds if seconds > 0 else math.nan
            what = (f"{played:,} games" if played == self.games
                    else f"{played:,} of the games (the rest were already there)")
            workers = self.timing.get("workers")
            out.append(f"  played {what} in {seconds:.1f} s: {rate:,.0f} games/s "
                       f"on {self.timing['threads']} thread(s)"
                       + (f" of {workers} Dask worker(s)" if workers else ""))
        if self.folder is not None:
            out.append(f"  data: {self.folder}/ (games/, rounds/, manifest.json)")
        return out

    def __str__(self) -> str:
        return "\n".join(self.lines())


def _summary_columns(players: int) -> dict[str, list[str]]:
    teams = 2 if players == 4 else players
    return {"games": ["winner_side", "deal_id", "rotation", "rounds"],
            "rounds": [f"team{t}_points" for t in range(teams)]}


def summarise_folder(folder: Path, manifest: dict) -> Summary:
    """Recompute a run's summary from its finished parts (streaming, chunk by chunk)."""
    import pyarrow.parquet as pq

    from sim import io

    config = manifest["config"]
    summary = Summary(config["players"], config["labels"], config["deal_group"],
                      config["round_cap"])
    columns = _summary_columns(config["players"])
    games = {p.name for p in io.part_files(folder, "games")}
    for path in io.part_files(folder, "rounds"):
        if path.name in games:
            summary.add_tables(
                pq.read_table(folder / "games" / path.name, columns=columns["games"]),
                pq.read_table(path, columns=columns["rounds"]),
            )
    summary.folder = folder
    summary.stopped = manifest.get("stopped")
    return summary


# --- running


class RunInterrupted(Stopped):
    """A signal stopped a run; the finished chunks are on disk and ``--resume`` completes it."""

    def __init__(self, folder: Path | None, chunks_done: int, chunks: int, games_done: int,
                 signum: int = signal.SIGINT):
        super().__init__(signum)
        self.folder = folder
        self.chunks_done = chunks_done
        self.chunks = chunks
        self.games_done = games_done

    def hint(self) -> str:
        if self.folder is None:
            return "stopped; nothing was kept (an in-memory run)"
        return (f"stopped after {self.chunks_done} of {self.chunks} chunks "
                f"({self.games_done:,} games) in {self.folder}; complete the run with: "
                f"sniff simulate --out {shlex.quote(str(self.folder))} --resume")


class _StopOnInterrupt:
    """First Ctrl-C or SIGTERM: stop at the next safe point (between batches); a second
    signal: stop at once. SIGTERM is what ``timeout`` and batch schedulers send before
    they kill, so it keeps the finished chunks exactly as Ctrl-C does."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self, notice) -> None:
        self.notice = notice
        self.signum: int | None = None
        self._previous: dict = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self):
        # Only the main thread may set handlers; a signal the process ignores (SIGINT in a
        # script's background job) stays ignored: there is nothing to catch.
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                if signal.getsignal(signum) is not signal.SIG_IGN:
                    self._previous[signum] = signal.getsignal(signum)
                    signal.signal(signum, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise Stopped(signum)
        self.signum = signum
        again = "Ctrl-C" if signum == signal.SIGINT else "the signal"
        self.notice(f"stopping: the finished chunks are kept ({again} again to stop at once)")

    def check(self) -> None:
        if self.requested:
            raise Stopped(self.signum)

    def __exit__(self, *exc) -> None:
        for signum, previous in self._previous.items():
            fallback = signal.default_int_handler if signum == signal.SIGINT else signal.SIG_DFL
            signal.signal(signum, previous if previous is not None else fallback)


def default_folder(base: Path = RESULTS_DIR) -> Path:
    from sim.io import new_folder

    return new_folder("run", base)


def _check_folder_path(folder: Path) -> None:
    from sim.io import check_folder_path

    check_folder_path(folder)


def check_target(plan: Plan, folder: Path | None, mode: str) -> dict | None:
    """Refuse a target the run may not use; return the manifest of a run to resume."""
    from sim import io

    if folder is None:
        if plan.games > IN_MEMORY_LIMIT:
            raise SniffError(f"{plan.games:,} games is too many to keep in memory (at most "
                             f"{IN_MEMORY_LIMIT:,}): give out= a folder and read it with sim.load")
        return None
    _check_folder_path(folder)
    if mode == "resume":
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return io.read_manifest(folder)
    if folder.exists() and any(folder.iterdir()):
        if not io.is_run_folder(folder):
            raise SniffError(f"{folder} is not empty and holds no sniff run; "
                             "choose another --out (nothing was changed)")
        if mode != "overwrite":
            state = _describe_run(folder, io.read_manifest(folder))
            raise SniffError(f"{folder} already holds a run ({state}); "
                             "use --resume to complete it or --overwrite to replace it")
    return None


def _describe_run(folder: Path, manifest: dict) -> str:
    config = manifest.get("config", {})
    chunks = len(list((folder / "games").glob("part-*.parquet")))
    return f"{manifest.get('status', '?')}, {chunks} of {config.get('chunks', '?')} chunks"


def _check_threads(threads: int | None) -> None:
    import numba

    if threads is None:
        return
    maximum = numba.config.NUMBA_NUM_THREADS
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= maximum:
        raise SniffError(f"--threads must be from 1 to {maximum} (this machine's cores), "
                         f"got {threads}")


def _set_threads(threads: int | None) -> int | None:
    import numba

    if threads is None:
        return None
    _check_threads(threads)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    return previous


def _write_error(error: OSError, folder: Path, chunks_done: int) -> SniffError:
    where = error.filename or folder
    reason = error.strerror or str(error)
    return SniffError(
        f"cannot write {where}: {reason}; the {chunks_done} finished chunk(s) in {folder} are "
        "kept: fix the cause and complete the run with --resume"
    )


def _stderr_notice(message: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"sniff: {message}", file=sys.stderr)


@dataclass
class _Session:
    command: str
    started_at: str = field(default_factory=_utc_now)
    played: int = 0
    seconds: float = 0.0
    threads: int = 0
    cluster: dict | None = None  # a Dask run: scheduler and workers (sim.cluster)

    def record(self, status: str) -> dict:
        return {
            "command": self.command, "started_at": self.started_at, "ended_at": _utc_now(),
            "status": status, "games_played": self.played, "seconds": round(self.seconds, 3),
            "games_per_second": round(self.played / self.seconds, 1) if self.seconds else None,
            "threads": self.threads,
            **({"cluster": self.cluster} if self.cluster else {}),
        }


def _new_manifest(plan: Plan, run_id: str, kernel: str, session: _Session) -> dict:
    from sim import __version__, io

    return {
        "format": io.FORMAT, "run_id": run_id, "version": __version__, "kernel": kernel,
        "command": session.command, "config": plan.config(), "started_at": session.started_at,
        "status": "running", "sessions": [], "tables": {name: f"{name}/" for name in io.TABLES},
    }


def _prepare_folder(folder: Path, mode: str, manifest: dict, chunk_games: list[int],
                    notice) -> set[int]:
    """Make the folder ready and write the manifest; return the chunks already finished."""
    from sim import io

    done: set[int] = set()
    try:
        if mode == "resume":
            io.remove_temporaries(folder)
            done, notes = io.finished_chunks(folder, chunk_games, manifest["run_id"])
            for note in notes:
                notice(note)
        elif mode == "overwrite" and folder.exists():
            io.clear_run(folder)
        for name in io.TABLES:
            (folder / name).mkdir(parents=True, exist_ok=True)
        io.mark_running(manifest)
        io.write_json(folder / io.MANIFEST, manifest)
    except OSError as error:
        raise SniffError(f"cannot write to {error.filename or folder}: "
                         f"{error.strerror or error}") from None
    return done


def _play_chunk(plan: Plan, run_id: str, lo: int, hi: int, batch: int, on_batch,
                kernel_strategies=()) -> dict:
    """The games ``lo..hi-1`` as pyarrow tables, played ``batch`` games per kernel call."""
    import pyarrow as pa

    from sim import io
    from sim.runner import play_batch, winning_side

    labels = [spec.label for spec in plan.lineup.specs]
    parts: dict[str, list] = {name: [] for name in io.TABLES}
    for first in range(lo, hi, batch):
        ids = np.arange(first, min(hi, first + batch), dtype=np.int64)
        result = play_batch(
            plan.lineup, plan.seed, ids, deal_ids=ids // plan.group,
            rotations=rotation_for(ids, plan.players), round_cap=plan.round_cap,
            kernel_strategies=kernel_strategies,
        )
        side = winning_side(result, plan.players)
        parts["games"].append(
            io.games_table(result, plan.players, labels, run_id, plan.seed, side))
        parts["rounds"].append(io.rounds_table(result, plan.players, run_id))
        on_batch(ids.size)
    return {name: pa.concat_tables(parts[name]) for name in io.TABLES}


def _batch_games(threads: int) -> int:
    """Games per kernel call: enough blocks for every thread, a bounded round buffer."""
    from sim.runner import BLOCK_SIZE

    return max(BATCH_GAMES, BLOCK_SIZE * 4 * threads)


def _write_parts(folder: Path, chunk: int, lo: int, hi: int, seconds: float, tables: dict,
                 metadata: dict) -> None:
    """Write a chunk's two parts (atomically), with the run's and the chunk's metadata."""
    from sim import io

    info = {
        "index": chunk, "first_game": lo, "end_game": hi, "games": hi - lo,
        "seconds": round(seconds, 3),
        "games_per_second": round((hi - lo) / seconds, 1) if seconds > 0 else None,
        "written_at": _utc_now(),
    }
    io.write_chunk(folder, chunk, {
        name: io.with_metadata(table, {**metadata, "table": name, "chunk": info})
        for name, table in tables.items()
    })


# --- where the chunks are played: here (LocalChunks) or on a Dask cluster (sim.cluster)


@dataclass
class PlayedChunk:
    """One played chunk, as a chunk executor hands it to ``execute`` (in chunk order)."""

    chunk: int
    tables: dict  # both tables; only the summary's columns when ``written``
    kernel: str  # the kernel it was played with (another name: the code was edited)
    written: bool = False  # its parts are already in the run folder (a Dask worker wrote them)


class ChunkSizes(Sequence):
    """Games of each chunk of a run, computed on demand: memory must not grow with the
    number of chunks (a list of them was one Python object per chunk)."""

    def __init__(self, total: int, chunk_size: int) -> None:
        self.total = total
        self.chunk_size = chunk_size

    def __len__(self) -> int:
        return -(-self.total // self.chunk_size)

    def __getitem__(self, chunk):
        if not 0 <= chunk < len(self):
            raise IndexError(chunk)
        return min(self.total, (chunk + 1) * self.chunk_size) - chunk * self.chunk_size


class MissingChunks:
    """The chunks ``0..n_chunks-1`` not in ``done``, in order; iterable again and again,
    never materialised."""

    def __init__(self, n_chunks: int, done: set[int]) -> None:
        self.n_chunks = n_chunks
        self.done = done

    def __iter__(self) -> Iterator[int]:
        return (chunk for chunk in range(self.n_chunks) if chunk not in self.done)


class LocalChunks:
    """The default executor: plays the chunks in this process, one chunk ahead.

    While ``execute`` builds the summary of chunk c and writes its Parquet parts, chunk c+1
    already plays in a worker thread (the kernel releases the GIL), so the cores that the
    writing leaves idle keep playing. A chunk counts as done only once its parts are
    written, so playing ahead never changes what an interrupted run keeps.
    """

    def __init__(self, plan: Plan, kernel: str, kernel_strategies=()) -> None:
        self.plan = plan
        self.kernel = kernel
        self.kernel_strategies = kernel_strategies
        self._cancel = threading.Event()
        self._pool = None

    @property
    def threads(self) -> int:
        import numba

        return numba.get_num_threads()

    def describe(self) -> dict | None:
        return None  # nothing beyond the session's threads

    def warm_up(self) -> None:
        """Load (or, the first time, compile) the kernel now, so games/s measures play only."""
        from sim.runner import play_batch

        plan = self.plan
        play_batch(plan.lineup, plan.seed, np.zeros(1, dtype=np.int64), round_cap=plan.round_cap,
                   kernel_strategies=self.kernel_strategies)

    def play(self, todo: list[int], bounds, run_id: str, folder: Path | None, metadata: dict,
             on_games, check):
        """Yield a ``PlayedChunk`` per chunk of ``todo``, in order.

        ``on_games(n)`` reports progress (and raises on Ctrl-C, which then reaches the
        caller from the chunk it was playing); ``execute`` writes the parts.
        """
        from concurrent.futures import ThreadPoolExecutor

        import numba

        from sim.runner import compile_lineup

        batch = _batch_games(self.threads)
        threads = numba.get_num_threads()  # numba's thread count is per calling thread

        def on_batch(games: int) -> None:
            if self._cancel.is_set():
                raise KeyboardInterrupt
            on_games(games)

        def play_one(chunk: int, kernel: str) -> PlayedChunk:
            numba.set_num_threads(threads)
            lo, hi = bounds(chunk)
            tables = _play_chunk(self.plan, run_id, lo, hi, batch, on_batch,
                                 self.kernel_strategies)
            return PlayedChunk(chunk, tables, kernel)

        def start(chunk: int):
            # play_batch picks its kernel by hashing the source files on every call: an edit
            # to sim/ or strategies/ during the run would switch code mid-run. The kernel a
            # chunk starts with goes with it, for execute to compare with the run's.
            kernel = compile_lineup(self.plan.lineup, self.kernel_strategies)[0].__name__
            return self._pool.submit(play_one, chunk, kernel)

        self._cancel.clear()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="sniff-play")
        try:
            chunks = iter(todo)
            following = next(chunks, None)
            pending = None if following is None else start(following)
            while pending is not None:
                played = pending.result()
                following = next(chunks, None)
                pending = None if following is None else start(following)
                yield played
        finally:
            self.close()

    def close(self) -> None:
        """Stop the chunk playing ahead (at its next batch) and wait for its thread."""
        if self._pool is not None:
            self._cancel.set()
            self._pool.shutdown(wait=True)
            self._pool = None


# Beyond any real game's size (a 200-round game is ~1,800 bytes): below this bound times
# the games, a run cannot fill the disk and needs no pilot to estimate its size.
BOUND_BYTES_PER_GAME = 2_000
SPACE_PILOT_GAMES = 512


def _check_space(plan: Plan, folder: Path, kernel_strategies=()) -> None:
    """Refuse a run that would not fit on the disk, estimating its rounds per game from a
    pilot of its first games (only when the run is big enough to matter)."""
    from sim import engine, io
    from sim.runner import play_batch

    written = sum(1 for _ in (folder / "games").glob("part-*.parquet")) if folder.exists() else 0
    games = max(0, plan.games - written * plan.chunk_size)
    if games * BOUND_BYTES_PER_GAME <= io.free_bytes(folder):
        return
    ids = np.arange(min(plan.games, SPACE_PILOT_GAMES), dtype=np.int64)
    pilot = play_batch(plan.lineup, plan.seed, ids, rotations=rotation_for(ids, plan.players),
                       round_cap=plan.round_cap, kernel_strategies=kernel_strategies)
    io.check_disk_space(folder, games, float(pilot.games[:, engine.GAME_ROUNDS].mean()))


def _stop_record(plan: Plan, reason: str, games: int, chunks: int, half_width: float) -> dict:
    """The manifest's ``stopped``: why a --precision run ended, after how many games."""
    return {"reason": reason, "games": int(games), "chunks": int(chunks),
            "half_width": float(half_width), "precision": plan.precision,
            "max_games": plan.games, "step": PRECISION_STEP}


def _widest_half_width(summary: Summary) -> float:
    return max(wilson_half_width(int(w), summary.games) for w in summary.wins)


def _recorded_kernel_strategies(manifest: dict) -> list:
    """The extra kernel strategies a run was played with (a tournament's shared kernel)."""
    from strategies import available, load_plugin

    named = manifest.get("kernel_strategies") or []
    if any(item["name"] not in available() for item in named):
        for item in named:
            load_plugin(item["module"])
    known = available()
    return [known[item["name"]] for item in named if item["name"] in known]


def execute(
    plan: Plan,
    folder: Path | None,
    *,
    mode: str = "new",
    threads: int | None = None,
    progress: bool = False,
    command: str = "",
    on_chunk=None,
    notice=_stderr_notice,
    announce=None,
    kernel_strategies=(),
    scheduler: str | None = None,
    check_space: bool = True,
):
    """Play the plan into ``folder`` (or into memory when None) and return a ``sim.io.Run``.

    ``mode``: ``"new"`` (the folder must be absent or empty), ``"overwrite"`` (replace a
    previous run there) or ``"resume"`` (play only the missing chunks of the run there).
    ``progress`` shows a progress bar on stderr. ``on_chunk(chunk)`` is called after each
    chunk is written (tests use it to interrupt); ``announce()`` once the folder is ready.
    ``kernel_strategies`` (``strategies.Strategy`` objects) are compiled into the kernel
    too, so that many runs (a tournament's pairings) share one kernel; they are named in
    the manifest, so a resume loads the same kernel. ``scheduler`` (``tcp://HOST:PORT`` or
    ``local:N``) plays the chunks as tasks on a Dask cluster (``sim.cluster``), with the same
    tables; ``threads`` is then the numba threads of each task. ``check_space`` refuses a
    run whose estimated size exceeds the free disk space (``--ignore-disk-space`` skips it).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq
    from tqdm import tqdm

    from sim import io
    from sim.runner import compile_lineup

    recorded = check_target(plan, folder, mode)
    if recorded is not None and not kernel_strategies:
        kernel_strategies = _recorded_kernel_strategies(recorded)
    previous_threads = _set_threads(threads if scheduler is None else None)
    executor = None
    try:
        kernel = compile_lineup(plan.lineup, kernel_strategies)[0].__name__
        if recorded is not None and recorded.get("kernel") != kernel:
            raise SniffError(
                f"cannot resume {folder}: the simulator's code changed since the run started "
                f"(kernel {recorded.get('kernel')}, now {kernel}), so the remaining games would "
                "not match; start again with --overwrite"
            )
        if scheduler is None:
            executor = LocalChunks(plan, kernel, kernel_strategies)
        else:
            from sim.cluster import DaskChunks

            executor = DaskChunks(scheduler, plan, kernel, kernel_strategies, threads)
        executor.warm_up()  # load (or compile) the kernel now: games/s measures play only
        if folder is not None and check_space:
            _check_space(plan, folder, kernel_strategies)
        session = _Session(command, threads=executor.threads, cluster=executor.describe())
        run_id = plan.run_id
        manifest = recorded or _new_manifest(plan, run_id, kernel, session)
        if kernel_strategies:
            manifest["kernel_strategies"] = [
                {"name": s.name, "module": s.module} for s in kernel_strategies]
        # A run that stopped for --precision ends inside its last chunk: its games are the
        # prefix 0..stopped-1 (a resume of it plays nothing).
        total = stopped_games(recorded) or plan.games
        n_chunks = -(-total // plan.chunk_size)

        def chunk_bounds(chunk: int) -> tuple[int, int]:
            return chunk * plan.chunk_size, min(total, (chunk + 1) * plan.chunk_size)

        stopped: dict | None = None
        chunk_games = ChunkSizes(total, plan.chunk_size)
        done = set() if folder is None else _prepare_folder(
            folder, mode, manifest, chunk_games, notice)
        if announce is not None:
            announce()

        summary = Summary(plan.players, plan.labels, plan.group, plan.round_cap)
        memory: dict[str, list] = {name: [] for name in io.TABLES}
        columns = _summary_columns(plan.players)
        metadata = {
            "format": io.FORMAT, "run_id": run_id, "version": manifest["version"],
            "kernel": kernel, "command": command, "config": plan.config(),
            "session_started_at": session.started_at,
        }
        done_games = sum(chunk_games[c] for c in done)
        chunks_done = len(done)
        status = "failed"
        try:
            with _StopOnInterrupt(notice) as stop, tqdm(
                total=plan.games, initial=done_games, unit=" games", unit_scale=True,
                disable=not progress, file=sys.stderr, dynamic_ncols=True, smoothing=0.1,
            ) as bar:

                def on_batch(games: int) -> None:
                    bar.update(games)
                    stop.check()

                played = executor.play(MissingChunks(n_chunks, done), chunk_bounds, run_id,
                                       folder, metadata, on_batch, stop.check)
                for chunk in range(n_chunks):
                    if chunk in done:  # resumed: its parts are there, read them for the summary
                        name = io.part_name(chunk)
                        summary.add_tables(
                            pq.read_table(folder / "games" / name, columns=columns["games"]),
                            pq.read_table(folder / "rounds" / name, columns=columns["rounds"]),
                        )
                        continue
                    lo, hi = chunk_bounds(chunk)
                    started = time.perf_counter()
                    result = next(played)  # this chunk: played here, or on a Dask worker
                    tables = result.tables
                    # An edit to sim/ or strategies/ during the run switches the kernel.
                    if result.kernel != kernel:
                        kept = "run it again" if folder is None else (
                            f"the {chunks_done} finished chunk(s) in {folder} are kept, but "
                            "only a new run (--overwrite) can give a consistent dataset")
                        raise SniffError(
                            "the simulator's code (sim/ or strategies/) changed while the run "
                            f"was playing, so chunk {chunk} on would not match the first; {kept}"
                        )
                    if plan.precision is not None:
                        stop_at = precision_stop(
                            summary.wins, summary.games,
                            np.asarray(tables["games"]["winner_side"], dtype=np.int64),
                            plan.precision)
                        if stop_at is not None:
                            hi = stop_at[0]
                            tables = _truncate_chunk(tables, hi)
                            stopped = _stop_record(plan, "precision", hi, chunk + 1, stop_at[1])
                    if folder is None:
                        for name in io.TABLES:
                            memory[name].append(tables[name])
                    elif not result.written:
                        _write_parts(folder, chunk, lo, hi, time.perf_counter() - started,
                                     tables, metadata)
                    session.played += hi - lo
                    session.seconds += time.perf_counter() - started
                    chunks_done += 1
                    summary.add_tables(tables["games"], tables["rounds"])
                    if plan.precision is not None:
                        bar.set_postfix_str(f"widest half-width {_widest_half_width(summary):.2%}"
                                            f" (target {plan.precision:.2%})")
                    if on_chunk is not None:
                        on_chunk(chunk)
                    if stopped is not None:
                        break
                    stop.check()
            status = "complete"
        except KeyboardInterrupt as error:
            status = "interrupted"
            raise RunInterrupted(folder, chunks_done, n_chunks, done_games + session.played,
                                 getattr(error, "signum", signal.SIGINT)) from None
        except OSError as error:
            if folder is None:
                raise
            raise _write_error(error, folder, chunks_done) from None
        finally:
            manifest["sessions"].append(session.record(status))
            manifest["status"] = status
            if status == "complete" and plan.precision is not None:
                manifest["stopped"] = stopped or manifest.get("stopped") or _stop_record(
                    plan, "max_games", summary.games, n_chunks, _widest_half_width(summary))
                summary.stopped = manifest["stopped"]
            if status == "complete":
                summary.timing = {"played": session.played, "seconds": session.seconds,
                                  "threads": session.threads,
                                  "workers": len((session.cluster or {}).get("workers", []))}
                summary.folder = folder
                manifest["finished_at"] = _utc_now()
                played = sum(s["games_played"] for s in manifest["sessions"])
                seconds = sum(s["seconds"] for s in manifest["sessions"])
                manifest["games_per_second"] = round(played / seconds, 1) if seconds else None
                manifest["summary"] = summary.to_dict()
            if folder is not None:
                try:
                    if status == "complete":
                        io.remove_temporaries(folder)
                    io.write_json(folder / io.MANIFEST, manifest)
                except OSError:
                    if status == "complete":
                        raise
    finally:
        if executor is not None:
            executor.close()
        if previous_threads is not None:
            import numba

            numba.set_num_threads(previous_threads)

    if folder is None:
        run = io.Run(None, manifest, {name: pa.concat_tables(memory[name]) for name in io.TABLES})
    else:
        run = io.Run(folder, manifest)
    run._summary = summary
    return run


def simulate(
    players: int | None = None,
    strategies: str | list | None = None,
    games: int | None = None,
    seed: int | None = None,
    *,
    duplicate: bool | None = None,
    out: str | Path | None = None,
    chunk_size: int | None = None,
    threads: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    precision: float | None = None,
    max_games: int | None = None,
    scheduler: str | None = None,
    check_space: bool = True,
):
    """Play games and return a ``sim.io.Run`` (``.games``, ``.rounds`` DataFrames, ``.summary``).

    Without ``out`` the tables stay in memory (at most 1,000,000 games); with ``out`` they
    are written to that run folder as ``sniff simulate --out`` does. Options left as None
    take the defaults of ``sniff simulate`` (or, with ``resume=True``, the run's own).
    ``precision`` plays until every win rate's 95% half-width is at most that, up to
    ``max_games`` games (instead of a fixed ``games``). ``scheduler`` (``"tcp://HOST:PORT"``
    or ``"local:N"``) plays the chunks on a Dask cluster, with the same tables.
    """
    options = {"players": players, "strategies": strategies, "games": games, "seed": seed,
               "duplicate": duplicate, "chunk_size": chunk_size, "precision": precision,
               "max_games": max_games}
    call = ", ".join(f"{k}={v!r}" for k, v in {**options, "out": out, "threads": threads,
                                                 "resume": resume, "overwrite": overwrite,
                                                 "scheduler": scheduler}.items()
                     if v not in (None, False))
    folder = Path(out) if out is not None else None
    plan, mode = _plan_and_mode(options, folder, resume, overwrite)
    _check_scheduler(scheduler, threads)
    return execute(plan, folder, mode=mode, threads=threads, progress=progress,
                   command=f"sim.simulate({call})", scheduler=scheduler,
                   check_space=check_space)


def _check_scheduler(scheduler: str | None, threads: int | None) -> None:
    """Refuse a bad ``--scheduler`` (or a missing Dask) before anything is created."""
    if scheduler is None:
        _check_threads(threads)
        return
    from sim.cluster import check_scheduler

    check_scheduler(scheduler)
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int)
                                or threads < 1):
        raise SniffError(f"--threads must be a positive integer, got {threads}")


def _plan_and_mode(options: dict, folder: Path | None, resume: bool, overwrite: bool):
    from sim import io

    if resume and overwrite:
        raise SniffError("--resume and --overwrite exclude each other")
    options = cap_options(options, resume)
    if resume:
        if folder is None:
            raise SniffError("--resume needs --out, the folder of the run to complete")
        _check_folder_path(folder)
        if not folder.exists():
            raise SniffError(f"nothing to resume: {folder} does not exist")
        return resolve_plan(options, io.read_manifest(folder), folder), "resume"
    return resolve_plan(options), "overwrite" if overwrite else "new"


def run_command(
    options: dict, out: Path | None, *, resume: bool, overwrite: bool, threads: int | None,
    quiet: bool, argv: list[str], scheduler: str | None = None, check_space: bool = True,
) -> None:
    """``sniff simulate``: options not given on the command line are None."""
    import click

    from sim import kernels

    if quiet:
        kernels.set_notice(None)

    folder = Path(out) if out is not None else None
    plan, mode = _plan_and_mode(options, folder, resume, overwrite)
    _check_scheduler(scheduler, threads)
    if folder is None:
        folder = default_folder()
    check_target(plan, folder, mode)

    def announce() -> None:
        if not quiet:
            action = {"new": "writing", "overwrite": "replacing", "resume": "completing"}[mode]
            what = f"{plan.games:,} games in {plan.n_chunks:,} chunk(s) of {plan.chunk_size:,}"
            if plan.precision is not None:  # --precision
                what = (f"until every win rate is within +-{plan.precision:.2%} (at most "
                        f"{plan.games:,} games), in chunks of {plan.chunk_size:,}")
            click.echo(f"sniff: {action} {folder}: {what}", err=True)

    try:
        run = execute(plan, folder, mode=mode, threads=threads,
                      progress=not quiet and sys.stderr.isatty(),
                      command=shlex.join(["sniff", *argv]), announce=announce,
                      notice=(lambda message: None) if quiet else _stderr_notice,
                      scheduler=scheduler, check_space=check_space)
    except RunInterrupted as stopped:
        click.echo(f"sniff: {stopped.hint()}", err=True)
        raise
    click.echo(str(run.summary))
