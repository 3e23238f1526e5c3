"""What decides a run's games: the options, the ``Plan`` built from them, resume agreement.

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
count. A resumed run takes its plan from its manifest; every option given again must agree
with the recorded one (:func:`resolve_plan`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from sim.checks.shape import MAX_CHUNK_SIZE, MAX_GAMES
from sim.core.checks import check_players, check_seed
from sim.errors import SettingError, SniffError
from sim.run.precision import PRECISION_STEP, check_precision

__all__ = [
    "check_strategies", "deal_group", "Plan", "require_plugins", "resolve_plan", "rotation_for",
    "spec_text"
]

DEFAULTS = {
    "players": 4,
    "strategies": "greedy,random",
    "games": 100_000,
    "seed": 0,
    "duplicate": False,
    "chunk_size": 50_000,
    "precision": None,
    "rounds": True,
}


def check_strategies(strategies):
    """A library caller's strategies: a text (``"greedy,random"``) or a list of names and
    specs, as given; anything else a ``SettingError`` naming them."""
    from strategies import StrategySpec

    if isinstance(strategies, str) or (isinstance(strategies, list | tuple) and all(
            isinstance(item, str | StrategySpec) for item in strategies)):
        return strategies
    raise SettingError("{strategies} must be a text such as 'greedy,random' or a list of "
                       f"strategy names, got {strategies!r}")


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


@dataclass(frozen=True)
class Plan:
    """What a run plays: its lineup, games and stopping rules, checked once (``Plan.build``).

    Attributes:
        players: the player count.
        strategies: one full spec per lineup seat (before rotation).
        games: the games to play.
        seed: the run's seed.
        duplicate: duplicate deals: every rotation of the lineup plays each deal.
        chunk_size: games per chunk (the unit of resume and of the parts).
        round_cap: the most rounds a game may play.
        precision: --precision: stop early (see precision_stop).
        rounds: write the rounds table (--no-rounds: the games table alone).
        sequential: sniff compare: (h0, h1, alpha, beta) of the sequential test that stops the run.
    """

    players: int
    strategies: tuple[str, ...]  # one full spec per lineup seat (before rotation)
    games: int
    seed: int
    duplicate: bool
    chunk_size: int
    round_cap: int
    precision: float | None = None  # --precision: stop early (see precision_stop)
    rounds: bool = True  # write the rounds table (--no-rounds: the games table alone)
    # sniff compare: (h0, h1, alpha, beta) of the sequential test that stops the run
    sequential: tuple[float, float, float, float] | None = None

    @classmethod
    def build(
        cls, players: int, strategies, games: int, seed: int, duplicate: bool, chunk_size: int,
        precision: float | None = None, rounds: bool = True, sequential=None,
    ) -> Plan:
        """The plan of these settings, checked, at the engine's round cap (a recorded plan's
        own cap: ``dataclasses.replace``, as ``from_config`` does)."""
        from sim.kernels.runner import ROUND_CAP, lineup_of
        from strategies import parse_lineup_text, parse_spec

        players = check_players(players)
        strategies = check_strategies(strategies)
        for name, flag in (("duplicate", duplicate), ("rounds", rounds)):
            if not isinstance(flag, bool | np.bool_) and flag not in (0, 1):
                raise SettingError(f"{{{name}}} must be True or False, got {flag!r}")
        for name, value, most in (("games", games, MAX_GAMES),
                                  ("chunk_size", chunk_size, MAX_CHUNK_SIZE)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise SettingError(f"{{{name}}} must be a positive integer, got {value!r}")
            if value > most:
                name = "max_games" if name == "games" and precision is not None else name
                raise SettingError(f"{{{name}}} must be at most {most:,}, got {value:,}")
        seed = check_seed(seed)
        if isinstance(strategies, str):
            specs = parse_lineup_text(strategies)
        else:
            specs = [parse_spec(item) if isinstance(item, str) else item for item in strategies]
        lineup = lineup_of(players, specs)
        precision = check_precision(precision)
        group = deal_group(players, bool(duplicate))
        if games % group:
            low, high = games - games % group, games - games % group + group
            raise SettingError(
                f"{{duplicate}} plays every deal {group} times with {players} players, so "
                f"{{games}} must be a multiple of {group} (e.g. {low or group} or {high}), "
                f"got {games}"
            )
        if sequential is not None:
            sequential = check_sequential(sequential, players, bool(duplicate), chunk_size,
                                          precision)
        return cls(
            players=players,
            strategies=tuple(spec_text(spec) for spec in lineup.seats),
            games=games,
            seed=seed,
            duplicate=bool(duplicate),
            chunk_size=chunk_size,
            round_cap=ROUND_CAP,
            precision=precision,
            rounds=bool(rounds),
            sequential=sequential,
        )

    @classmethod
    def from_config(cls, config: dict, *, import_plugins: bool = False) -> Plan:
        """The plan a manifest's config records.

        A strategy that is not registered is refused in one line naming its module and the
        ``--plugin`` option (a folder may come from someone else: reading it imports nothing
        it names). ``import_plugins`` is for a cluster worker, whose config comes from the
        user's own client, not from a folder.
        """
        require_plugins(zip(config["strategy_names"], config["modules"]), import_plugins)
        plan = cls.build(
            config["players"], ",".join(config["strategies"]), config["games"], config["seed"],
            config["duplicate"], config["chunk_size"], config.get("precision"),
            config.get("rounds", True), sequential=config.get("sequential"),
        )
        return replace(plan, round_cap=config["round_cap"])

    @cached_property
    def lineup(self):
        from sim.kernels.runner import lineup_of
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


    @property
    def run_id(self) -> str:
        """A hash of what decides the games (not the chunk size): same id, same tables."""
        from sim.version import __version__

        key = {
            "version": __version__, "players": self.players, "strategies": self.strategies,
            "seed": self.seed, "games": self.games, "duplicate": self.duplicate,
            "round_cap": self.round_cap,
        }
        if self.precision is not None:  # it decides how many of the games are played
            key["precision"] = self.precision
        if self.sequential is not None:  # so does a sequential test
            key["sequential"] = list(self.sequential)
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
            "rounds": self.rounds,
            **({"precision": self.precision, "precision_step": PRECISION_STEP}
               if self.precision is not None else {}),
            **({"sequential": list(self.sequential)} if self.sequential is not None else {}),
        }

    def setting_text(self, name: str) -> str:
        """A setting with its value, as a ``SettingError`` names it (``{games=400}``)."""
        if name == "strategies":
            return f"{{strategies={','.join(self.labels)}}}"
        if name == "precision" and self.precision is None:
            return "no {precision}"
        if name == "games" and self.precision is not None:
            return f"{{max_games={self.games}}}"
        return f"{{{name}={getattr(self, name)}}}"


def check_sequential(sequential, players: int, duplicate: bool, chunk_size: int,
                     precision) -> tuple[float, float, float, float]:
    """A sequential test's settings, checked: it reads duplicate deals, chunk by chunk."""
    from sim.stats.sprt import Sprt

    try:
        h0, h1, alpha, beta = (float(value) for value in sequential)
    except (TypeError, ValueError):
        raise SniffError(f"a sequential test takes h0, h1, alpha, beta, got {sequential!r}"
                         ) from None
    Sprt(h0, h1, alpha, beta)
    group = deal_group(players, True)
    if not duplicate or precision is not None or chunk_size % group:
        raise SettingError("a sequential test plays duplicate deals in chunks of whole deals "
                           f"(a multiple of {group} games), without {{precision}}")
    return (h0, h1, alpha, beta)


def resolve_plan(options: dict, manifest: dict | None = None, folder: Path | None = None) -> Plan:
    """The plan from the options given (None = not given).

    A new run fills what is missing from ``DEFAULTS``; a resumed run from its manifest,
    and every option given must then agree with the recorded one.
    """
    if manifest is None:
        values: dict[str, Any] = {k: DEFAULTS[k] if options.get(k) is None else options[k]
                                  for k in DEFAULTS}  # Plan.build's keywords
        return Plan.build(**values)
    if folder is not None:  # believe the manifest only where its parts agree with it
        from sim.checks.integrity import check_run

        edited = check_run(folder, manifest).manifest_problem
        if edited is not None:
            raise SniffError(f"cannot resume: {edited}")
    recorded = Plan.from_config(manifest["config"])
    scalars = [name for name in DEFAULTS if name != "strategies" and options.get(name) is not None]
    differ = [name for name in scalars if options[name] != getattr(recorded, name)]
    if differ:
        refuse_resume(folder, recorded, differ, {name: options[name] for name in differ})
    values = {  # Plan.build's keywords
        "players": recorded.players, "strategies": list(recorded.strategies),
        "games": recorded.games, "seed": recorded.seed, "duplicate": recorded.duplicate,
        "chunk_size": recorded.chunk_size, "precision": recorded.precision,
        "rounds": recorded.rounds, "sequential": recorded.sequential,
    }
    values.update({k: v for k, v in options.items() if k in DEFAULTS and v is not None})
    asked = replace(Plan.build(**values), round_cap=recorded.round_cap)
    differ = [name for name in DEFAULTS if getattr(asked, name) != getattr(recorded, name)]
    if differ:
        refuse_resume(folder, recorded, differ, {}, asked)
    return recorded


def refuse_resume(folder, recorded: Plan, differ: list[str], given: dict, asked=None) -> None:
    def asked_text(name: str) -> str:
        if asked is not None:
            return asked.setting_text(name)
        return f"{{{name}={given[name]}}}"

    was = ", ".join(recorded.setting_text(name) for name in differ)
    now = ", ".join(asked_text(name) for name in differ)
    raise SettingError(
        f"cannot resume {folder}: it was started with {was}, this command asks {now}; "
        "resume with the same settings (or leave them out), or start again with {overwrite}"
    )


def require_plugins(named, import_plugins: bool = False) -> None:
    """Refuse (or, for a cluster worker, import) the plugin modules of unregistered names.

    ``named``: (strategy name, module) pairs, as a manifest records them. A name
    ``BASE:TEXT`` of a registered ``BASE`` (``learned:model=m.npz``) is no plugin: the
    strategy's own spec parser builds it again from the recorded text (its module, such as
    ``sniff_learned_<digest>``, is generated by that parser, never imported from a folder).
    """
    from strategies import available, load_plugin

    known = available()
    missing = {str(module): str(name) for name, module in named if name not in known
               and not (isinstance(name, str) and ":" in name
                        and name.partition(":")[0] in known)}
    for module, name in missing.items():
        if import_plugins:
            load_plugin(module)
            continue
        raise SniffError(
            f"this run plays strategy {name!r} from module {module!r}, which is not loaded; "
            "sniff never imports what a folder names: if you trust that module, pass "
            f"--plugin {module} (or set SNIFF_PLUGINS={module})"
        )
