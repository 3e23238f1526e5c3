"""The games of ``sniff tune``: a candidate's match against one opponent, here or on Dask.

Every match is played in the game loop compiled once (the candidates differ only in their
parameter rows, which the loop takes as data), so a tuning compiles (or loads) each of its
strategies once. With ``--scheduler`` (``sim.cluster.dask``) a
generation's matches, and the validation's, are Dask tasks: each worker rebuilds the
player from the tuning's config and plays the match it is given (the specs travel as a
strategy name and its parameter values, exact), and the results are taken in the order
they were asked for. A match depends only on its specs, seed and games, so the trials,
the optimiser's path and ``best.json`` are those of a tuning played here, bit for bit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from sim.core import engine
from sim.kernels.generate import code_digest
from sim.kernels.runner import ROUND_CAP, compile_lineup, lineup_of, play_batch, winning_side
from sim.tune.setup import Space, TuneConfig

__all__: list[str] = []  # nothing here is used outside sim.tune


@dataclass(frozen=True)
class MatchJob:
    """What a match task needs besides its match: small, pickled with every task."""

    config: dict  # TuneConfig.to_dict()
    modules: tuple[tuple[str, str], ...]  # (name, module) of every strategy the tuning plays
    threads_by_host: dict
    threads: int | None


class Player:
    """Plays a lineup of the tuned strategy against one opponent."""

    def __init__(self, config: TuneConfig, space: Space, cluster=None) -> None:
        from strategies import parse_spec

        self.config = config
        self.field = [parse_spec(text) for text in config.against]
        strategies = {space.spec.strategy.name: space.spec.strategy}
        strategies.update({spec.strategy.name: spec.strategy for spec in self.field})
        self.strategies = list(strategies.values())  # the tuned one and its field
        self.slots: int | None = None  # round buffer per game, sized by the first batch
        self.cluster = cluster  # a sim.cluster.dask.DaskCluster: the matches are its tasks
        self.job: MatchJob | None = None  # once its workers are warmed up

    def kernel(self, spec) -> str:
        """Load (the first time: compile) the kernel; the key of the code in it, which the
        workers of a cluster must share (``sim.kernels.generate.code_digest``)."""
        compile_lineup(self.lineup(spec, self.field[0]))
        return code_digest(self.strategies)

    def identity(self, spec) -> dict:
        """What the tuning records and a resume compares: the engine's version and the
        behaviour signatures (``sim.run.signature``) of ``spec`` (the tuning's start)
        and of every opponent, at the tuning's player count."""
        from sim.core.identity import ENGINE_VERSION
        from sim.run.signature import strategy_signature

        players = self.config.players
        return {"engine": ENGINE_VERSION,
                "strategies": {each.label: strategy_signature(each, players)
                               for each in [spec, *self.field]}}

    def lineup(self, spec, opponent):
        players = self.config.players
        return lineup_of(players, [spec, opponent] if players != 3 else [spec, opponent, opponent])

    def play(self, spec, opponent, seed: int, first_game: int, games: int) -> np.ndarray:
        """Lineup side of each game's winner (0 = ``spec``; -1 undecided), duplicate deals:
        game ``g`` has deal ``g // group`` and rotation ``g % players``, as ``sniff
        simulate --duplicate``."""
        ids = np.arange(first_game, first_game + games, dtype=np.int64)
        result = play_batch(self.lineup(spec, opponent), seed, ids, ids // self.config.group,
                            ids % self.config.players, round_slots=self.slots)
        if self.slots is None:  # buffering only: longer games are replayed, same result
            lengths = result.games[:, engine.GAME_ROUNDS]
            self.slots = int(min(ROUND_CAP, max(8, np.quantile(lengths, 0.99) * 1.25 + 1)))
        return winning_side(result, self.config.players)

    def play_many(self, matches: list) -> list[np.ndarray]:
        """``play(*match)`` for each match (spec, opponent, seed, first game, games), in
        order: here, or as tasks on the player's cluster."""
        if self.cluster is None:
            return [self.play(*match) for match in matches]
        if self.job is None:
            self.job = self._warm_up()
        return list(self.cluster.ordered(
            matches, play_task,
            lambda match: (self.job, _packed(match[0]), _packed(match[1]), *match[2:]),
            lambda: None, name="match"))

    def _warm_up(self) -> MatchJob:
        def job() -> MatchJob:
            return MatchJob(self.config.to_dict(),
                            tuple((s.name, s.module) for s in self.strategies),
                            dict(self.cluster.threads_by_host), self.cluster.threads_option)

        self.cluster.warm_up(warm_up_task, job, code_digest(self.strategies))
        return job()


def _packed(spec) -> tuple[str, tuple]:
    return spec.strategy.name, tuple(float(value) for value in spec.values)


# --- on the workers

_players: dict = {}  # per worker process: the player of a tuning, built once


def _job_player(job: MatchJob) -> Player:
    key = json.dumps(job.config, sort_keys=True)
    if key not in _players:
        from sim.run.plan import require_plugins

        # the job comes from the user's own client (not a folder): import its plugins
        require_plugins(job.modules, import_plugins=True)
        config = TuneConfig.from_dict(job.config)
        _players[key] = Player(config, Space.of(config))
    return _players[key]


def warm_up_task(job: MatchJob) -> dict:
    """Load (or compile) the tuning's kernel on this worker; report what it runs with."""
    from sim.cluster.dask import worker_report

    player = _job_player(job)
    report = worker_report(code_digest(player.strategies), job.threads_by_host,
                           job.threads, lambda: player.kernel(player.field[0]))
    return report


def play_task(job: MatchJob, spec: tuple, opponent: tuple, seed: int, first: int,
              games: int) -> np.ndarray:
    """One match on a worker: the lineup side of each game's winner."""
    from sim.cluster.dask import worker_threads
    from strategies import StrategySpec

    worker_threads(job.threads_by_host, job.threads)
    player = _job_player(job)
    strategies = {s.name: s for s in player.strategies}
    return player.play(StrategySpec(strategies[spec[0]], spec[1]),
                       StrategySpec(strategies[opponent[0]], opponent[1]), seed, first, games)
