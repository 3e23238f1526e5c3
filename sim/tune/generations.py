"""The tuning loop of ``sniff tune``: play each generation's candidates, tell CMA-ES, validate.

Games are played by ``sim.tune.player.Player`` (in this process on all cores, or as Dask
tasks with ``--scheduler``), every match in the game loop compiled once, so a run compiles
at most the tuned strategy and its field, once each.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sim.display.progress import ProgressBar
from sim.errors import SniffError
from sim.run.settings import RunControl
from sim.stats.intervals import mean_interval, paired_difference, wilson_interval
from sim.tune import folder as tune_folder
from sim.tune.player import Player
from sim.tune.setup import (
    BEST,
    Space,
    TuneConfig,
    TuneInterrupted,
    TuneResult,
    Validation,
    derived_seed,
    new_optimizer,
    objective,
)
from strategies import StrategySpec

__all__ = ["evaluate"]


def evaluate(player: Player, space: Space, generation: int, z: list) -> pd.DataFrame:
    """Every candidate of a generation against every opponent, on the same deals."""
    config = player.config
    each = config.deals * config.group
    first = generation * each
    field = len(player.field)
    sides = player.play_many([(space.spec_of(point), opponent, config.seed, first, each)
                              for point in z for opponent in player.field])
    rows = []
    for candidate, point in enumerate(z):
        wins = [int((side == 0).sum()) for side in sides[candidate * field:][:field]]
        total, games = sum(wins), each * len(wins)
        low, high = wilson_interval(total, games)
        rows.append({"generation": generation, "candidate": candidate, "first_game": first,
                     **{key: space.values(point)[key] for key in config.params},
                     "games": games, "wins": total, "win_rate": objective(wins, each),
                     "low": low, "high": high,
                     **{f"wins_vs_{index}": w for index, w in enumerate(wins)}})
    return pd.DataFrame(rows)


def replay(es, space: Space, trials: pd.DataFrame, config: TuneConfig) -> int:
    """Bring the optimiser to where the stored generations left it; return their count.

    Each stored generation is asked again (same seeded stream, so the same candidates,
    checked) and told the stored results: the state is then exactly the uninterrupted one.
    """
    done = 0
    each = config.deals * config.group
    for generation, group in trials.groupby("generation", sort=True):
        if generation != done or len(group) != config.popsize:
            raise SniffError("trials.parquet does not hold whole generations in order; "
                             "the tuning folder is damaged")
        z = es.ask()
        group = group.sort_values("candidate")
        stored = group[list(config.params)].to_numpy()
        asked = np.array([[space.values(p)[key] for key in config.params] for p in z])
        if not np.array_equal(stored, asked):
            raise SniffError(f"generation {done} of trials.parquet is not what the "
                             "optimiser asks on replay; the folder was tuned by other code")
        wins = group[[f"wins_vs_{i}" for i in range(len(config.against))]].to_numpy()
        es.tell(z, [-objective(row, each) for row in wins])
        done += 1
    return done


def run(folder: Path, config: TuneConfig, manifest: dict, control: RunControl,
        cluster=None) -> TuneResult:
    """Play the missing generations, then validate and write best.json (see ``tune``);
    ``cluster`` (a ``sim.cluster.dask.DaskCluster``) plays the matches as its tasks."""
    space = Space.of(config)
    player = Player(config, space, cluster)
    from sim.run.signature import identity_problem

    player.kernel(space.spec)  # loaded (or compiled) before the signatures play
    identity = player.identity(space.spec)
    started = bool(manifest.get("sessions")) or "identity" in manifest  # not a new folder
    if started and (problem := identity_problem(manifest, identity)):
        raise SniffError(f"cannot resume {folder}: {problem}, so a resume would not repeat "
                         "the tuning")
    if manifest["status"] == "complete" and (folder / BEST).exists():
        return tune_folder.load(folder)  # a finished run resumes to itself
    search = Search.start(folder, config, manifest, control, space, player, identity)
    notice = control.notice
    try:
        stopped = search.play_generations()
        # The result is the search distribution's mean (the recommendation CMA-ES converges
        # with; the best single trial is the luckiest of many noisy rates), rounded to 4
        # significant digits so that the printed spec is exactly what was validated.
        values = {key: float(f"{value:.4g}") if key in config.params else value
                  for key, value in space.values(search.es.mean).items()}
        notice(f"validating on fresh deals: {config.validate_games:,} games per match"
               + (", the match against the defaults by SPRT (at most that many)"
                  if config.accept == "sprt" else ""))
        validation, acceptance = validate(player, space, values, config, notice)
    except KeyboardInterrupt as stop:
        search.interrupted()
        raise TuneInterrupted(folder, manifest["generations_done"], config.generations,
                              getattr(stop, "signum", signal.SIGINT)) from None
    return search.finish(values, validation, acceptance, stopped)


@dataclass
class Search:
    """A tuning run's search in progress: the optimiser, the trials so far and the session
    that the manifest records."""

    folder: Path
    config: TuneConfig
    manifest: dict
    control: RunControl
    space: Space
    player: Player
    es: Any  # the cma optimiser (no type hints), replayed to where the trials end
    trials: pd.DataFrame
    done: int  # generations finished before this session
    session: dict

    @classmethod
    def start(cls, folder: Path, config: TuneConfig, manifest: dict, control: RunControl,
              space: Space, player: Player, identity: dict) -> Search:
        """The optimiser replayed over the stored trials; the session begun and announced;
        ``identity``: what the manifest records (``Player.identity``)."""
        trials = tune_folder.read_trials(folder, config)
        trials = trials if trials is not None else pd.DataFrame()
        es = new_optimizer(config)
        done = replay(es, space, trials, config) if len(trials) else 0
        session = {"command": control.command or None, "started_at": tune_folder.utc_now(),
                   "ended_at": None, "generations_played": 0}
        manifest.update(identity=identity, status="running")
        manifest["sessions"].append(session)
        tune_folder.write_manifest(folder, manifest)
        control.notice(
            f"tuning {', '.join(config.params)} of {space.spec.strategy.name} against "
            f"{', '.join(spec.label for spec in player.field)}: {config.generations} "
            f"generations of {config.popsize} x {config.games_per_trial:,} games into {folder}"
            + (f" (resuming at generation {done})" if done else ""))
        return cls(folder, config, manifest, control, space, player, es, trials, done, session)

    def play_generations(self) -> dict | None:
        """Each missing generation played, told to CMA-ES and stored; what stopped CMA-ES
        early, or None."""
        config, folder, manifest = self.config, self.folder, self.manifest
        per_generation = config.popsize * config.games_per_trial
        metadata = {"format": "sniff-tune-trials/1", "config": config.to_dict(),
                    "command": self.control.command or None}
        best = float(self.trials["win_rate"].max()) if len(self.trials) else float("-inf")
        with ProgressBar("generation", " generation", shown=self.control.progress,
                         total=config.generations, initial=self.done) as bar:
            for generation in range(self.done, config.generations):
                if self.es.stop():
                    return {key: str(value) for key, value in self.es.stop().items()}
                z = self.es.ask()
                rows = evaluate(self.player, self.space, generation, z)
                self.es.tell(z, [-value for value in rows["win_rate"]])
                self.trials = (pd.concat([self.trials, rows], ignore_index=True)
                               if len(self.trials) else rows)
                tune_folder.write_trials(folder, self.trials, metadata)
                self.session["generations_played"] += 1
                manifest.update(generations_done=generation + 1,
                                games_done=(generation + 1) * per_generation)
                tune_folder.write_manifest(folder, manifest)
                best = max(best, float(rows["win_rate"].max()))
                bar.add(1)
                bar.note(f"best {best:.2%}  mean {rows['win_rate'].mean():.2%}  games "
                         f"{(generation + 1) * per_generation:,}/{config.games:,}")
        return None

    def interrupted(self) -> None:
        """A stop: the finished generations kept, the session ended, the curve drawn."""
        self.manifest.update(status="interrupted")
        self.session["ended_at"] = tune_folder.utc_now()
        tune_folder.write_manifest(self.folder, self.manifest)
        tune_folder.write_curve(self.folder, self.trials, self.config)

    def finish(self, values: dict, validation: list, acceptance: dict | None,
               stopped: dict | None) -> TuneResult:
        """best.json, the curve and the finished manifest; the result."""
        config, trials, manifest = self.config, self.trials, self.manifest
        spec = StrategySpec(self.space.spec.strategy, tuple(values.values()))
        result = TuneResult(self.folder, spec.strategy.name, values, _spec_text(spec), trials,
                            validation, acceptance=acceptance)
        tune_folder.write_best(self.folder, {
            "format": "sniff-tune-best/1", "strategy": result.strategy,
            "params": {key: _json_value(spec.strategy, key, value)
                       for key, value in values.items()},
            "spec": result.spec, "tuned": list(config.params),
            "choice": "the mean of the CMA-ES search distribution after the last generation",
            "trial_objective_last_generation": float(
                trials["win_rate"].iloc[-config.popsize:].mean()),
            "validation": [item.__dict__ for item in validation],
            **({"acceptance": acceptance} if acceptance is not None else {}),
            "validation_seed": derived_seed(config.seed, "validate"),
            "command": manifest.get("command") or self.control.command or None,
        })
        tune_folder.write_curve(self.folder, trials, config)
        manifest.update(status="complete", finished_at=tune_folder.utc_now(), stopped=stopped)
        self.session["ended_at"] = tune_folder.utc_now()
        tune_folder.write_manifest(self.folder, manifest)
        return result


def _spec_text(spec) -> str:
    from sim.run.plan import spec_text

    return spec_text(spec)


def _json_value(strategy, key: str, value: float):
    return strategy.format_value(key, value) if key in strategy.choices else value


def validate(player: Player, space: Space, values: dict, config: TuneConfig,
             notice: Callable[[str], None] | None = None) -> tuple[list, dict | None]:
    """The tuned values against the strategy's defaults and each opponent, on fresh deals:
    the fixed-size matches, and with ``--accept sprt`` the record of the sequential test
    that replaces the match against the defaults (``sim.tune.accept``), else None.

    Fresh: the deals come from a seed derived from the run seed, which no trial used.
    Intervals take the deal as the unit (its games share the cards), so they are honest
    for duplicate deals and narrower than independent games would give.
    """
    from sim.run.plan import spec_text

    if config.validate_games == 0:
        return [], None
    tuned = StrategySpec(space.spec.strategy, tuple(values.values()))
    defaults = StrategySpec(space.spec.strategy, tuple(space.spec.strategy.params.values()))
    opponents, seen = [], set()
    for spec in [defaults, *player.field]:
        if spec_text(spec) not in seen:
            seen.add(spec_text(spec))
            opponents.append(spec)
    seed, n, group = derived_seed(config.seed, "validate"), config.validate_games, config.group
    results, acceptance = [], None
    if config.accept == "sprt":
        from sim.tune.accept import accept

        acceptance = accept(config, spec_text(tuned), spec_text(defaults), defaults.label,
                            notice, player.cluster)
        opponents.remove(defaults)
    for opponent, side in zip(opponents, player.play_many(
            [(tuned, opponent, seed, 0, n) for opponent in opponents])):
        won = (side == 0).astype(np.float64)
        lost = (side > 0) / (group - 1 if config.players == 3 else 1)
        per_deal = won.reshape(-1, group).mean(axis=1)
        rate, low, high = mean_interval(per_deal)
        low, high = max(0.0, low), min(1.0, high)
        w_low, w_high = wilson_interval(int(won.sum()), n)
        difference = paired_difference((won - lost).reshape(-1, group).mean(axis=1))
        label = opponent.label + (" (defaults)" if opponent == defaults else "")
        results.append(Validation(label, n, int(won.sum()), rate, low, high, w_low, w_high,
                                  difference.to_dict()))
    return results, acceptance
