"""The pieces of ``sniff tune`` (see ``sim.tune.study``): its configuration and checks, the
search space, the optimiser, results and interruption; ``sim.tune.generations`` plays the
generations and ``sim.tune.folder`` keeps the folder."""

from __future__ import annotations

import hashlib
import math
import shlex
import signal
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import pandas as pd

from sim.compare import ALPHA, BETA, CHUNK_DEALS, H0, H1
from sim.core.checks import MAX_SEED, check_players, check_seed
from sim.errors import SettingError, SniffError, Stopped

__all__ = ["TuneResult"]

if TYPE_CHECKING:  # the registry is imported where a spec is parsed
    from strategies import StrategySpec

FORMAT = "sniff-tune/1"
MANIFEST = "manifest.json"
TRIALS = "trials.parquet"
BEST = "best.json"
CURVE = "learning-curve.png"
OUTPUT_FILES = (MANIFEST, TRIALS, BEST, CURVE)
MAX_GAMES = 10**11
DEFAULT_GAMES = 200_000
DEFAULT_GAMES_PER_TRIAL = 4_000
DEFAULT_VALIDATE_GAMES = 20_000
DEFAULT_SIGMA = 0.5
INSTALL_HINT = "sniff tune needs the cma package: pip install 'sniff[tune]'"
# The options that decide the result; a --resume must agree with the recorded ones.
DECIDING = ("strategy", "against", "players", "games", "seed", "params", "games_per_trial",
            "popsize", "sigma", "validate_games", "accept", "h0", "h1", "alpha", "beta")
# How the tuned values are accepted against the defaults: a match of --validate-games
# (fixed), or sniff compare's sequential test capped at --validate-games (sprt).
Accept = Literal["fixed", "sprt"]
ACCEPT: tuple[Accept, ...] = get_args(Accept)


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
    """Everything that decides a tuning run's result (``manifest.json``'s ``config``).

    Attributes:
        strategy: the start: the strategy with every parameter written out.
        against: the field, each with every parameter written out.
        players: the player count.
        games: trial budget (validation not included).
        seed: the run's seed.
        params: the parameters tuned.
        games_per_trial: games one candidate plays, over the whole field.
        popsize: candidates per CMA-ES generation.
        sigma: initial step, in units of each parameter's scale.
        validate_games: games of each validation match (with sprt: the test's cap).
        accept: how the tuned values are accepted: a fixed validation match or ``sprt``.
        h0: the sequential test's settings (sim.compare's defaults), sprt only.
        h1: the sequential test's H1, sprt only.
        alpha: the sequential test's alpha, sprt only.
        beta: the sequential test's beta, sprt only.
    """

    strategy: str  # the start: the strategy with every parameter written out
    against: tuple[str, ...]  # the field, each with every parameter written out
    players: int
    games: int  # trial budget (validation not included)
    seed: int
    params: tuple[str, ...]  # the parameters tuned
    games_per_trial: int  # games one candidate plays, over the whole field
    popsize: int
    sigma: float  # initial step, in units of each parameter's scale
    validate_games: int  # games of each validation match (with sprt: the test's cap)
    accept: Accept = "fixed"  # --accept's default
    h0: float = H0  # the sequential test's settings (sim.compare's defaults), sprt only
    h1: float = H1
    alpha: float = ALPHA
    beta: float = BETA

    @classmethod
    def build(cls, strategy: str, against: str | Sequence[str], **settings) -> TuneConfig:
        """Check the settings and round the games to whole deals; errors are one line.

        ``settings``: the other fields (``players``, ``games``, ``seed``, ``params``,
        ``games_per_trial``, ``popsize``, ``sigma``, ``validate_games``, ``accept``, ``h0``,
        ``h1``, ``alpha``, ``beta``); one left out (or None) takes its default.
        """
        from sim.run.plan import spec_text
        from strategies import parse_lineup_text, parse_spec

        unknown = sorted(set(settings) - set(DECIDING))
        if unknown:
            raise SniffError(f"tune has no setting {', '.join(unknown)}; its settings: "
                             f"{', '.join(DECIDING[2:])}")
        given = {**SETTING_DEFAULTS,
                 **{key: value for key, value in settings.items() if value is not None}}
        given["players"] = check_players(given["players"])
        start = parse_spec(strategy)
        field_specs = (parse_lineup_text(against) if isinstance(against, str)
                       else [parse_spec(item) for item in against])
        chosen = _tuned_params(start.strategy, given["params"])
        _check_counts(given)
        import_cma()
        if given["popsize"] is None:  # CMA-ES's default for the dimension
            given["popsize"] = 4 + int(3 * math.log(len(chosen)))
        games_per_trial, games, validate_games = _whole_deals(given, len(field_specs))
        _check_acceptance(given, validate_games)
        return cls(spec_text(start), tuple(spec_text(s) for s in field_specs),
                   given["players"], games, given["seed"], tuple(chosen), games_per_trial,
                   given["popsize"], float(given["sigma"]), validate_games, given["accept"],
                   *(float(given[key]) for key in ("h0", "h1", "alpha", "beta")))

    @classmethod
    def from_dict(cls, data: dict) -> TuneConfig:
        fields: dict[str, Any] = {key: tuple(v) if isinstance(v, list) else v
                                  for key, v in data.items() if key in DECIDING}
        return cls(**fields)

    def to_dict(self) -> dict:
        return {key: list(v) if isinstance(v, tuple) else v
                for key, v in self.__dict__.items()}

    @property
    def generations(self) -> int:
        return self.games // (self.games_per_trial * self.popsize)

    @property
    def group(self) -> int:
        from sim.run.plan import deal_group

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

    spec: StrategySpec  # of the start
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


SETTING_DEFAULTS = {"players": 4, "games": DEFAULT_GAMES, "seed": 0, "params": None,
                    "games_per_trial": DEFAULT_GAMES_PER_TRIAL, "popsize": None,
                    "sigma": DEFAULT_SIGMA, "validate_games": DEFAULT_VALIDATE_GAMES,
                    "accept": "fixed", "h0": H0, "h1": H1, "alpha": ALPHA, "beta": BETA}


def _tuned_params(strategy, params: Sequence[str] | None) -> list[str]:
    """The parameters to tune: those named (every numeric one if none), each a number."""
    numeric = [key for key in strategy.params if key not in strategy.choices]
    if not numeric:
        raise SniffError(f"strategy {strategy.name!r} has no numeric parameters")
    chosen = list(numeric) if not params else [p.strip() for p in params if p.strip()]
    for key in chosen:
        if key in strategy.choices:
            raise SniffError(f"parameter {key!r} of {strategy.name!r} is a choice "
                             f"({'|'.join(strategy.choices[key])}), not a number")
        if key not in strategy.params:
            raise SniffError(f"{strategy.name!r} has no parameter {key!r}; numeric "
                             f"ones: {', '.join(numeric)}")
    if len(set(chosen)) != len(chosen) or not chosen:
        raise SettingError(f"{{params}} must name distinct parameters, got {','.join(chosen)}")
    return chosen


def _check_counts(given: dict) -> None:
    """The seed, the budgets and the step size: in range, one line each."""
    given["seed"] = check_seed(given["seed"])
    for name, low in (("games", 1), ("games_per_trial", 1), ("validate_games", 0)):
        value = given[name]
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise SettingError(f"{{{name}}} must be an integer of at least {low}, got {value}")
    if given["games"] > MAX_GAMES:
        raise SettingError(f"{{games}} must be at most {MAX_GAMES:,}, got {given['games']:,}")
    sigma = given["sigma"]
    if not (isinstance(sigma, int | float) and math.isfinite(sigma) and 0 < sigma <= 10):
        raise SettingError(f"{{sigma}} must be above 0 and at most 10, got {sigma}")
    popsize = given["popsize"]
    if popsize is not None and (isinstance(popsize, bool) or not isinstance(popsize, int)
                                or popsize < 2):
        raise SettingError(f"{{popsize}} must be an integer of at least 2, got {popsize}")


def _whole_deals(given: dict, opponents: int) -> tuple[int, int, int]:
    """Games per trial, the trial budget and the validation games, cut to whole deals (and
    the budget to whole generations)."""
    from sim.run.plan import deal_group

    players, popsize = given["players"], given["popsize"]
    games_per_trial, games = given["games_per_trial"], given["games"]
    unit = deal_group(players, True) * opponents
    if games_per_trial < unit:
        raise SettingError(f"{{games_per_trial}} must be at least {unit} (one duplicate deal "
                           f"against each of {opponents} opponents), got {games_per_trial}")
    games_per_trial -= games_per_trial % unit
    generation = games_per_trial * popsize
    if games < 2 * generation:
        raise SettingError(
            f"{{games}} {games:,} is less than 2 generations of {popsize} candidates x "
            f"{games_per_trial:,} games ({2 * generation:,}); raise {{games}} or lower "
            "{games_per_trial}")
    validate_games = given["validate_games"]
    return (games_per_trial, games - games % generation,
            validate_games - validate_games % deal_group(players, True))


def _check_acceptance(given: dict, validate_games: int) -> None:
    """How the tuned values are accepted, and the sequential test's settings."""
    from sim.run.plan import deal_group
    from sim.stats.sprt import Sprt

    accept, test = given["accept"], tuple(given[key] for key in ("h0", "h1", "alpha", "beta"))
    if accept not in ACCEPT:
        raise SettingError(f"{{accept}} must be fixed or sprt, got {accept!r}")
    Sprt(*test)  # sniff compare's checks of the settings
    if accept == "fixed" and test != (H0, H1, ALPHA, BETA):
        raise SettingError("{h0}, {h1}, {alpha} and {beta} set the test of {accept=sprt}; "
                           "with {accept=fixed} leave them out")
    chunk = CHUNK_DEALS * deal_group(given["players"], True)
    if accept == "sprt" and validate_games < chunk:
        raise SettingError(f"{{validate_games}} is the cap of {{accept=sprt}} and must be at "
                           f"least one chunk of the test ({chunk} games), got "
                           f"{validate_games}")


def objective(wins: Sequence[int] | np.ndarray, games_each: int) -> float:
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
    difference: dict  # sim.stats.intervals.Difference of [tuned won] - [opponent won], per deal

    def line(self) -> str:
        d = self.difference
        return (f"vs {self.opponent}: win rate {self.win_rate:.2%} "
                f"[{self.low:.2%}, {self.high:.2%}] over {self.games:,} games; difference "
                f"{d['estimate']:+.2%} [{d['low']:+.2%}, {d['high']:+.2%}] (paired by deal)")


@dataclass
class TuneResult:
    """What ``tune`` hands back: the tuned values, the trials, the validation.

    Attributes:
        folder: the tuning folder.
        strategy: the strategy tuned.
        values: the tuned parameter values.
        spec: name:key=value,... with every parameter.
        trials: every trial: its parameters and result.
        validation: the validation matches against the field.
        status: the folder's status: ``complete``, ``running`` or ``interrupted``.
        acceptance: --accept sprt: the test's record (sim.tune.accept).
    """

    folder: Path
    strategy: str
    values: dict[str, float]
    spec: str  # name:key=value,... with every parameter
    trials: pd.DataFrame
    validation: list[Validation] = field(default_factory=list)
    status: str = "complete"
    acceptance: dict | None = None  # --accept sprt: the test's record (sim.tune.accept)

    def __str__(self) -> str:
        lines = [f"tuned: {self.spec}", f"  or: {self.strategy}:@{self.folder / BEST}"]
        if self.acceptance is not None:
            lines += [f"  {line}" for line in self.acceptance["text"].splitlines()]
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
