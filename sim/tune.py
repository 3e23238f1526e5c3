"""``sniff tune``: tune a strategy's numeric parameters with CMA-ES on duplicate deals.

Why CMA-ES from the ``cma`` package: the objective (a win rate measured by playing games)
is noisy, has no gradient and a handful of continuous parameters, which is what CMA-ES is
built for; ``cma`` is small (pure Python and numpy) and has an ask/tell interface, so this
module decides when games are played and what is kept. Its sampling takes a ``randn``
function, so the optimiser draws from its own seeded stream (never numpy's global one), and
the whole search is a function of the run seed: a resumed run rebuilds the optimiser by
replaying ``ask``/``tell`` over the generations stored in ``trials.parquet`` and continues
to exactly the result an uninterrupted run gives. (optuna's CMA-ES sampler would bring a
study database and its own trial bookkeeping for the same algorithm.)

Common random numbers: every candidate of generation ``k`` plays the same deals (deal ids
``k * deals ..``), each deal twice with the sides swapped (3 players: three times, every
seating), against every opponent of the field. Differences between candidates of a
generation then come from their parameters much more than from the cards, so the ranking
CMA-ES needs is measured with far fewer games. The objective is the candidate's win rate
averaged over the field (what the user wants to raise; a margin would also reward running
up scores in games already won or lost).
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sim.errors import SniffError, Stopped

FORMAT = "sniff-tune/1"
MANIFEST = "manifest.json"
TRIALS = "trials.parquet"
BEST = "best.json"
CURVE = "learning-curve.png"
OUTPUT_FILES = (MANIFEST, TRIALS, BEST, CURVE)
MAX_SEED = 2**63 - 1
MAX_GAMES = 10**11
DEFAULT_GAMES = 200_000
DEFAULT_GAMES_PER_TRIAL = 4_000
DEFAULT_VALIDATE_GAMES = 20_000
DEFAULT_SIGMA = 0.5
INSTALL_HINT = "sniff tune needs the cma package: pip install 'sniff[tune]'"
# The options that decide the result; a --resume must agree with the recorded ones.
DECIDING = ("strategy", "against", "players", "games", "seed", "params", "games_per_trial",
            "popsize", "sigma", "validate_games")


def import_cma():
    """The ``cma`` module, or a one-line error that says how to install it."""
    try:
        import cma
    except ImportError:
        raise SniffError(INSTALL_HINT) from None
    return cma


def derived_seed(seed: int, purpose: str) -> int:
    """A seed for one use of the run seed (0..2**63-1), so the uses never share deals."""
    digest = hashlib.sha256(f"{seed}|tune|{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & MAX_SEED


@dataclass(frozen=True)
class TuneConfig:
    """Everything that decides a tuning run's result (``manifest.json``'s ``config``)."""

    strategy: str  # the start: the strategy with every parameter written out
    against: tuple[str, ...]  # the field, each with every parameter written out
    players: int
    games: int  # trial budget (validation not included)
    seed: int
    params: tuple[str, ...]  # the parameters tuned
    games_per_trial: int  # games one candidate plays, over the whole field
    popsize: int
    sigma: float  # initial step, in units of each parameter's scale
    validate_games: int  # games of each validation match

    @classmethod
    def build(cls, strategy: str, against: str | Sequence[str], players: int = 4,
              games: int = DEFAULT_GAMES, seed: int = 0, params: Sequence[str] | None = None,
              games_per_trial: int = DEFAULT_GAMES_PER_TRIAL, popsize: int | None = None,
              sigma: float = DEFAULT_SIGMA,
              validate_games: int = DEFAULT_VALIDATE_GAMES) -> TuneConfig:
        """Check the options and round the games to whole deals; errors are one line."""
        from sim.simulation import deal_group, spec_text
        from strategies import parse_lineup_text, parse_spec

        if isinstance(players, bool) or players not in (2, 3, 4):
            raise SniffError(f"--players must be 2, 3 or 4, got {players}")
        start = parse_spec(strategy)
        if isinstance(against, str):
            field_specs = parse_lineup_text(against)
        else:
            field_specs = [parse_spec(item) for item in against]
        numeric = [key for key in start.strategy.params if key not in start.strategy.choices]
        if not numeric:
            raise SniffError(f"strategy {start.strategy.name!r} has no numeric parameters")
        chosen = list(numeric) if not params else [p.strip() for p in params if p.strip()]
        for key in chosen:
            if key in start.strategy.choices:
                raise SniffError(f"parameter {key!r} of {start.strategy.name!r} is a choice "
                                 f"({'|'.join(start.strategy.choices[key])}), not a number")
            if key not in start.strategy.params:
                raise SniffError(f"{start.strategy.name!r} has no parameter {key!r}; numeric "
                                 f"ones: {', '.join(numeric)}")
        if len(set(chosen)) != len(chosen) or not chosen:
            raise SniffError(f"--params must name distinct parameters, got {','.join(chosen)}")
        for name, value, low in (("--seed", seed, 0), ("--games", games, 1),
                                 ("--games-per-trial", games_per_trial, 1),
                                 ("--validate-games", validate_games, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise SniffError(f"{name} must be an integer of at least {low}, got {value}")
        if seed > MAX_SEED:
            raise SniffError(f"--seed must be from 0 to 2**63-1, got {seed}")
        if games > MAX_GAMES:
            raise SniffError(f"--games must be at most {MAX_GAMES:,}, got {games:,}")
        if not (isinstance(sigma, int | float) and math.isfinite(sigma) and 0 < sigma <= 10):
            raise SniffError(f"--sigma must be above 0 and at most 10, got {sigma}")
        import_cma()
        if popsize is None:  # CMA-ES's default for the dimension
            popsize = 4 + int(3 * math.log(len(chosen)))
        if isinstance(popsize, bool) or not isinstance(popsize, int) or popsize < 2:
            raise SniffError(f"--popsize must be an integer of at least 2, got {popsize}")
        unit = deal_group(players, True) * len(field_specs)
        if games_per_trial < unit:
            raise SniffError(f"--games-per-trial must be at least {unit} (one duplicate deal "
                             f"against each of {len(field_specs)} opponents), got "
                             f"{games_per_trial}")
        games_per_trial -= games_per_trial % unit
        generation = games_per_trial * popsize
        if games < 2 * generation:
            raise SniffError(
                f"--games {games:,} is less than 2 generations of {popsize} candidates x "
                f"{games_per_trial:,} games ({2 * generation:,}); raise --games or lower "
                f"--games-per-trial")
        validate_games -= validate_games % deal_group(players, True)
        return cls(spec_text(start), tuple(spec_text(s) for s in field_specs), players,
                   games - games % generation, seed, tuple(chosen), games_per_trial,
                   popsize, float(sigma), validate_games)

    @classmethod
    def from_dict(cls, data: dict) -> TuneConfig:
        return cls(**{key: tuple(v) if isinstance(v, list) else v for key, v in
                      data.items() if key in DECIDING})

    def to_dict(self) -> dict:
        return {key: list(v) if isinstance(v, tuple) else v
                for key, v in self.__dict__.items()}

    @property
    def generations(self) -> int:
        return self.games // (self.games_per_trial * self.popsize)

    @property
    def group(self) -> int:
        from sim.simulation import deal_group

        return deal_group(self.players, True)

    @property
    def deals(self) -> int:
        """Deals each candidate plays against each opponent in a generation."""
        return self.games_per_trial // (self.group * len(self.against))


@dataclass
class Space:
    """Where CMA-ES searches: ``value = start + scale * z`` for each tuned parameter.

    Why a scale: CMA-ES starts with one step size for every coordinate, and the parameters
    live on different scales (a weight of 4 beside one of 0.2). Each parameter's scale is its
    start value's size, but at least a tenth of the largest (1 when all start at 0), so a
    parameter that starts at 0 or near it still moves.
    """

    spec: object  # strategies.StrategySpec of the start
    keys: tuple[str, ...]
    start: np.ndarray
    scale: np.ndarray

    @classmethod
    def of(cls, config: TuneConfig) -> Space:
        from strategies import parse_spec

        spec = parse_spec(config.strategy)
        values = dict(zip(spec.strategy.params, spec.values))
        start = np.array([values[key] for key in config.params], dtype=np.float64)
        floor = 0.1 * float(np.abs(start).max()) or 1.0
        return cls(spec, config.params, start, np.maximum(np.abs(start), floor))

    def values(self, z: np.ndarray) -> dict[str, float]:
        """Every parameter of the strategy for the point ``z`` (untuned ones as started)."""
        tuned = dict(zip(self.keys, (self.start + self.scale * np.asarray(z)).tolist()))
        return {key: tuned.get(key, value)
                for key, value in zip(self.spec.strategy.params, self.spec.values)}

    def spec_of(self, z: np.ndarray):
        from strategies import StrategySpec

        return StrategySpec(self.spec.strategy, tuple(self.values(z).values()))


def objective(wins: np.ndarray, games_each: int) -> float:
    """Win rate averaged over the field, from integer counts (so a replay gets the same)."""
    return float(np.mean(np.asarray(wins, dtype=np.int64) / games_each))


def new_optimizer(config: TuneConfig):
    """The CMA-ES state at the start, drawing from its own stream seeded by the run seed."""
    cma = import_cma()
    stream = np.random.RandomState(derived_seed(config.seed, "cma") % 2**32)
    options = {"popsize": config.popsize, "randn": stream.randn, "seed": math.nan,
               "verbose": -9, "verb_log": 0, "verb_disp": 0, "tolfun": 0, "tolfunhist": 0,
               "tolflatfitness": 10**9, "tolstagnation": 10**9, "maxiter": 10**9}
    return cma.CMAEvolutionStrategy(np.zeros(len(config.params)), config.sigma, options)


@dataclass
class Validation:
    """The tuned strategy against one opponent on fresh deals, with 95% intervals."""

    opponent: str
    games: int
    wins: int
    win_rate: float
    low: float  # interval of the win rate with deals as units (paired by deal)
    high: float
    wilson_low: float  # the interval independent games would give
    wilson_high: float
    difference: dict  # sim.stats.Difference of [tuned won] - [opponent won], per deal

    def line(self) -> str:
        d = self.difference
        return (f"vs {self.opponent}: win rate {self.win_rate:.2%} "
                f"[{self.low:.2%}, {self.high:.2%}] over {self.games:,} games; difference "
                f"{d['estimate']:+.2%} [{d['low']:+.2%}, {d['high']:+.2%}] (paired by deal)")


@dataclass
class TuneResult:
    """What ``tune`` hands back: the tuned values, the trials, the validation."""

    folder: Path
    strategy: str
    values: dict[str, float]
    spec: str  # name:key=value,... with every parameter
    trials: pd.DataFrame
    validation: list[Validation] = field(default_factory=list)
    status: str = "complete"

    def __str__(self) -> str:
        lines = [f"tuned: {self.spec}", f"  or: {self.strategy}:@{self.folder / BEST}"]
        lines += [f"  {v.line()}" for v in self.validation]
        return "\n".join(lines)


class TuneInterrupted(Stopped):
    """Ctrl-C or SIGTERM stopped a run; the finished generations are kept."""

    def __init__(self, folder: Path, done: int, generations: int,
                 signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.folder, self.done, self.generations = folder, done, generations

    def hint(self) -> str:
        return (f"stopped after {self.done} of {self.generations} generations in "
                f"{self.folder}; complete the run with: sniff tune --resume -o "
                f"{shlex.quote(str(self.folder))}")


class _SignalsToInterrupt:
    """SIGTERM stops like Ctrl-C (``Stopped``), so both keep the finished generations."""

    def __enter__(self):
        self.previous = None
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGTERM, self._raise)
        return self

    @staticmethod
    def _raise(signum, frame):
        raise Stopped(signum)

    def __exit__(self, *exc) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)


def tune(strategy: str | None = None, against: str | Sequence[str] | None = None, *,
         players: int | None = None, games: int | None = None, seed: int | None = None,
         params: Sequence[str] | None = None, games_per_trial: int | None = None,
         popsize: int | None = None, sigma: float | None = None,
         validate_games: int | None = None, out: str | Path | None = None,
         resume: bool = False, progress: bool = False,
         notice: Callable[[str], None] | None = None, command: str | None = None) -> TuneResult:
    """Tune ``strategy``'s numeric parameters against the field ``against``; see the module.

    ``strategy`` is a spec (``weighted``, or ``weighted:block=5`` to start elsewhere than the
    defaults); ``against`` the field, as text (``"blocker,weighted"``) or a list of specs.
    Defaults: 4 players, ``games`` (the trial budget) 200,000, seed 0, every numeric
    parameter, 4,000 games per trial, CMA-ES's own population size for the dimension,
    ``sigma`` 0.5, 20,000 games per validation match, ``out`` ``results/tune-DATE-TIME``.
    ``resume=True`` completes the run in ``out``: options left as None are the recorded
    ones, and options given must match them. Ctrl-C (or SIGTERM) raises
    :class:`TuneInterrupted` after keeping the finished generations.
    """
    from sim import tune_folder

    options = {"strategy": strategy, "against": against, "players": players, "games": games,
               "seed": seed, "params": params, "games_per_trial": games_per_trial,
               "popsize": popsize, "sigma": sigma, "validate_games": validate_games}
    if resume:
        if out is None:
            raise SniffError("--resume needs the tuning folder: -o FOLDER")
        folder = Path(out)
        manifest = tune_folder.read(folder)
        config = TuneConfig.from_dict(manifest["config"])
        given = {key: value for key, value in options.items() if value is not None}
        tune_folder.check_resume(folder, manifest, config, given)
    else:
        if strategy is None or against is None:
            raise SniffError("name the strategy to tune and the field: "
                             "sniff tune STRATEGY --against A,B")
        config = TuneConfig.build(**{key: value for key, value in options.items()
                                     if value is not None})
        folder = Path(out) if out is not None else tune_folder.default_folder()
        manifest = tune_folder.create(folder, config, command)
    from sim.tune_run import run

    with _SignalsToInterrupt():
        return run(folder, config, manifest, progress=progress,
                   notice=notice or (lambda message: None), command=command)


def load(folder: str | Path) -> TuneResult:
    """A finished tuning folder as a :class:`TuneResult` (for a notebook)."""
    from sim import tune_folder

    folder = Path(folder)
    manifest = tune_folder.read(folder)
    best = json.loads((folder / BEST).read_text()) if (folder / BEST).exists() else None
    if best is None:
        raise SniffError(f"{folder} holds no finished tuning run (no {BEST}); "
                         f"complete it with sniff tune --resume -o {folder}")
    validation = [Validation(**item) for item in best.get("validation", [])]
    return TuneResult(folder, best["strategy"], best["params"], best["spec"],
                      pd.read_parquet(folder / TRIALS), validation, manifest["status"])


def run_command(options: dict, *, out: Path | None, resume: bool, quiet: bool,
                argv: list[str]) -> None:
    """``sniff tune``: options not given on the command line are None."""
    import click

    given = {key: value for key, value in options.items() if value is not None}
    command = shlex.join(["sniff", *argv])
    notice = (lambda m: None) if quiet else (lambda m: click.echo(f"sniff: {m}", err=True))
    try:
        result = tune(out=out, resume=resume, progress=not quiet and sys.stderr.isatty(),
                      notice=notice, command=command, **given)
    except TuneInterrupted as stopped:
        click.echo(f"sniff: {stopped.hint()}", err=True)
        raise
    click.echo(str(result))


def elapsed(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else (
        f"{seconds // 60}m{seconds % 60:02d}s")


def now() -> float:
    return time.monotonic()
