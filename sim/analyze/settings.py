"""What an analysis measures and how: one frozen ``AnalyzeSettings``, and the words of its
tables (phases, decision kinds, marks) as enums.

Why one object: the same settings decide every figure (the budget, the play-out policy, the
seed, the thresholds) and must travel unchanged to every part, every Dask task and the
folder's record, so that a resumed or distributed analysis values each decision exactly as
an uninterrupted one would.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from enum import StrEnum

from sim.core.checks import check_seed
from sim.errors import SettingError
from sim.hint.estimate import check_budget, check_policy

DEFAULT_BUDGET = 100  # play-outs per move of each of the two searches
DEFAULT_GAMES = 100
MAX_GAMES = 1_000_000
DEFAULT_PART_GAMES = 10
DEFAULT_WORST = 20
INACCURACY = 0.01  # win chance given up, as a fraction
MISTAKE = 0.03
BLUNDER = 0.10
MIN_CURVE_BUDGET = 2  # an interval needs two play-outs


class Phase(StrEnum):
    """Where in the round a decision falls."""

    OPENING = "opening"  # the round's first placement, on an empty table
    BONEYARD = "boneyard"  # tiles left to draw
    EMPTY = "empty"  # the boneyard is empty
    DRAWN = "drawn"  # a tile just drawn must be placed at once (only its ends are open)


class Kind(StrEnum):
    """What the choice is about, the first that applies in this order."""

    SNIFF = "sniff"  # a legal move would place the Sniff (the round's first double)
    END = "end"  # one tile, several ends: only the end is chosen
    SCORING = "scoring"  # some moves score now and some do not: points against position
    DOUBLE = "double"  # a legal move places a double (not the Sniff)
    TILE = "tile"  # which tile, nothing scoring at stake


class Mark(StrEnum):
    """A move's error class: its loss at least the threshold and its paired 95% interval
    above zero (the search's noise alone never marks a move)."""

    NONE = ""
    INACCURACY = "inaccuracy"
    MISTAKE = "mistake"
    BLUNDER = "blunder"


class Played(StrEnum):
    """Which move counts as played: the game's own, or the search's own choice at the same
    budget on other deals (the noise floor: what a perfect follower of the search loses)."""

    GAME = "game"
    SEARCH = "search"


class Endgame(StrEnum):
    """How a decision whose every hand is known is valued: solved to the round's end
    (``sim.analyze.endgame``), or played out like every other decision."""

    EXACT = "exact"
    PLAYOUT = "playout"


@dataclass(frozen=True)
class AnalyzeSettings:
    """How the decisions are valued and the games sampled.

    Attributes:
        budget: play-outs per decision (``--budget``).
        policy: the play-out policy (``--policy``).
        seed: the seed of the sample and of the searches.
        games: games sampled per source (a run, a pairing, a trace file).
        part_games: games per part (the unit of resume and of Dask).
        strategies: analyse only these strategy labels (empty: all).
        played: which move counts as played: the game's own, or the search's choice.
        endgame: how an endgame is valued: exactly, or played out like every other decision.
        curve: budgets of the budget curve (each at most ``budget``).
        thresholds: the losses, in points, of an inaccuracy, a mistake and a blunder.
        worst: costliest positions written.
        bootstrap: resamples of the games for the intervals.
    """

    budget: int = DEFAULT_BUDGET
    policy: str = "greedy"
    seed: int = 0
    games: int = DEFAULT_GAMES  # games sampled per source (a run, a pairing, a trace file)
    part_games: int = DEFAULT_PART_GAMES  # games per part (the unit of resume and of Dask)
    strategies: tuple[str, ...] = ()  # analyse only these strategy labels (empty: all)
    played: Played = Played.GAME
    endgame: Endgame = Endgame.EXACT
    curve: tuple[int, ...] = ()  # budgets of the budget curve (each at most ``budget``)
    thresholds: tuple[float, float, float] = (INACCURACY, MISTAKE, BLUNDER)
    worst: int = DEFAULT_WORST  # costliest positions written
    bootstrap: int = 1000  # resamples of the games for the intervals

    def check(self) -> AnalyzeSettings:
        """Self, or a ``SettingError`` naming the setting that is out of range."""
        check_budget(self.budget)
        check_policy(self.policy)
        check_seed(self.seed)
        if isinstance(self.games, bool) or not 1 <= self.games <= MAX_GAMES:
            raise SettingError(f"{{games}} must be 1..{MAX_GAMES:,} games, got {self.games}")
        if not 1 <= self.part_games <= 10_000:
            raise SettingError(f"{{part_games}} must be 1..10,000, got {self.part_games}")
        for budget in self.curve:
            if not MIN_CURVE_BUDGET <= budget <= self.budget:
                raise SettingError(f"{{budget_curve}} budgets must be "
                                   f"{MIN_CURVE_BUDGET}..{{budget}} "
                                   f"({self.budget}), got {budget}")
        low, mid, high = self.thresholds
        if not 0 < low <= mid <= high <= 1:
            raise SettingError("{thresholds} must rise within 0..100 points (inaccuracy, "
                               f"mistake, blunder), got {100 * low:g}, {100 * mid:g}, "
                               f"{100 * high:g}")
        if not 0 <= self.worst <= 1000:
            raise SettingError(f"{{worst}} must be 0..1,000 positions, got {self.worst}")
        if not 100 <= self.bootstrap <= 100_000:
            raise SettingError(f"{{bootstrap}} must be 100..100,000, got {self.bootstrap}")
        return self

    def record(self) -> dict:
        """The settings as JSON values (the folder's record; :meth:`of` reads it back)."""
        data = asdict(self)
        data["played"] = self.played.value
        data["endgame"] = self.endgame.value
        data["strategies"] = list(self.strategies)
        data["curve"] = list(self.curve)
        data["thresholds"] = list(self.thresholds)
        return data

    @classmethod
    def of(cls, data: dict) -> AnalyzeSettings:
        """Settings from :meth:`record`'s JSON (a folder to resume)."""
        low, mid, high = (float(t) for t in data["thresholds"])
        return cls(budget=int(data["budget"]), policy=str(data["policy"]),
                   seed=int(data["seed"]), games=int(data["games"]),
                   part_games=int(data["part_games"]),
                   strategies=tuple(data["strategies"]), played=Played(data["played"]),
                   endgame=Endgame(data["endgame"]),
                   curve=tuple(int(b) for b in data["curve"]),
                   thresholds=(low, mid, high),
                   worst=int(data["worst"]), bootstrap=int(data["bootstrap"])).check()


def mark_of(loss: float, low: float, thresholds: tuple[float, float, float]) -> Mark:
    """The mark of a loss whose paired interval starts at ``low``."""
    if low <= 0.0:
        return Mark.NONE
    inaccuracy, mistake, blunder = thresholds
    if loss >= blunder:
        return Mark.BLUNDER
    if loss >= mistake:
        return Mark.MISTAKE
    if loss >= inaccuracy:
        return Mark.INACCURACY
    return Mark.NONE


__all__ = ["AnalyzeSettings", "DEFAULT_BUDGET", "Endgame", "Mark", "mark_of", "Played"]
