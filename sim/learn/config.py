"""The settings of a ``sniff learn`` run (:class:`LearnConfig`), checked where they enter
and recorded in the run's folder: what the network learns to predict, who labels its
decisions, and the sizes of its self-play, training and evaluation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from sim.core.checks import check_players, check_seed
from sim.errors import SettingError
from sim.learn import seat
from strategies.learned.features import FEATURE_VERSION, FEATURE_VERSIONS
from strategies.learned.record_inputs import inputs_for

__all__ = ["LearnConfig"]

# What a decision's value is fitted to: the Monte-Carlo return, the game's outcome, or a mix
Target = Literal["value", "outcome", "mix"]
TARGETS: tuple[Target, ...] = get_args(Target)
# Who labels sampled decisions' candidates: nobody, or expert's value of each
Teacher = Literal["none", "expert"]
TEACHERS: tuple[Teacher, ...] = get_args(Teacher)


@dataclass(frozen=True)
class LearnConfig:
    """The settings of a sniff learn run, recorded in its folder.

    Attributes:
        players: the player count (``--players``).
        seed: the seed of the self-play games (``--seed``).
        iterations: rounds of self-play and training (``--iterations``).
        games: self-play games per iteration (``--games``).
        epsilon: the chance of a random legal move in self-play (``--epsilon``).
        hidden: the hidden layers' widths, comma-separated (``--hidden``).
        epochs: training passes per iteration (``--epochs``).
        batch: the training batch size (``--batch``).
        rate: the learning rate (``--rate``).
        window: iterations of records the network trains on (``--window``).
        target: what the network learns to predict (``--target``).
        eval_games: held-out games that measure each iteration (``--eval-games``).
        teacher: the search that labels decisions, or ``none`` (``--teacher``).
        label_rate: the share of decisions the teacher labels (``--label-rate``).
        teacher_budget: the teacher's play-outs per decision (``--teacher-budget``).
        feature_version: the version of the network's input features.
    """

    players: int = 4
    seed: int = 1
    iterations: int = 12
    games: int = 4000
    epsilon: float = 0.05
    hidden: str = "64,64"
    epochs: int = 3
    batch: int = 256
    rate: float = 0.001
    window: int = 3
    target: Target = "value"
    eval_games: int = 2000
    teacher: Teacher = "none"
    label_rate: float = 0.3
    teacher_budget: int = 256
    feature_version: int = FEATURE_VERSION

    def check(self) -> None:
        """One :class:`SniffError` line for an option out of range."""
        ranges = {"iterations": (1, 1000), "games": (2, 10_000_000), "epochs": (1, 100),
                  "batch": (8, 65536), "window": (1, 1000), "eval_games": (0, 1_000_000),
                  "teacher_budget": (1, 4096)}
        check_players(self.players)
        for name, (low, high) in ranges.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise SettingError(f"{{{name}}} must be between {low:,} and "
                                   f"{high:,}, got {value}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise SettingError(f"{{epsilon}} must be between 0 and 1, got {self.epsilon}")
        if not 0.0 < self.rate <= 1.0:
            raise SettingError(f"{{rate}} must be in (0, 1], got {self.rate}")
        if self.teacher not in TEACHERS:
            raise SettingError(f"{{teacher}} must be one of {', '.join(TEACHERS)}, got "
                               f"{self.teacher}")
        if not 0.0 < self.label_rate <= 1.0:
            raise SettingError(f"{{label_rate}} must be in (0, 1], got {self.label_rate}")
        if self.target not in TARGETS:
            raise SettingError(f"{{target}} must be one of {', '.join(TARGETS)}, got "
                               f"{self.target}")
        if self.labelled and self.target != "value":
            raise SettingError("{target} chooses a Monte-Carlo return; with {teacher} the "
                               "teacher's values are the targets")
        check_seed(self.seed)
        if self.feature_version not in FEATURE_VERSIONS:
            known = " or ".join(str(v) for v in FEATURE_VERSIONS)
            raise SettingError(f"{{feature_version}} must be {known}, got "
                               f"{self.feature_version}")
        self.layers()

    def layers(self) -> tuple[int, ...]:
        try:
            widths = tuple(int(part) for part in self.hidden.split(","))
        except ValueError:
            widths = ()
        if not 1 <= len(widths) <= 3 or not all(1 <= w <= 512 for w in widths):
            raise SettingError(f"{{hidden}} must be 1 to 3 widths of 1..512 separated by "
                               f"commas, got {self.hidden!r}")
        return widths

    @property
    def labelled(self) -> bool:
        return self.teacher != "none"

    def teacher_row(self) -> np.ndarray | None:
        """The teacher's parameter row (``expert`` at ``teacher_budget``), or None."""
        if not self.labelled:
            return None
        from strategies import parse_spec

        return np.array(parse_spec(f"expert:budget={self.teacher_budget}").values, dtype=float)

    @property
    def inputs(self) -> int:
        """How many inputs the network reads (and a record keeps)."""
        return inputs_for(self.feature_version, self.players)

    @property
    def heuristic(self) -> int:
        return seat.PARTNER if self.players == 4 else seat.BLOCKER

    @property
    def heuristic_name(self) -> str:
        return "partner" if self.players == 4 else "blocker"
