"""``sniff hint``: every legal move of one position with its estimated value (docs/hint.md).

The estimate is the ``expert`` strategy's, made exhaustive: the hidden tiles are dealt
``budget`` ways, each consistent deal exactly equally likely (``strategies.search.determinize``,
reading only the public view of the seat to move), every legal move is placed on every one
of those deals and the round played out by the engine's turn loop with the play-out policy
in every seat, and the round's end is valued by the chance that the mover's side wins the
game (``strategies.value.round_value.outcome``). Every move meets the same deals and the same random
numbers, so the difference between two moves is measured deal by deal (paired), with a
much narrower interval than either value alone.

The search itself is compiled in ``sim.hint.search`` and cached by ``sim.hint.kernel``.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np

from sim.core import engine
from sim.core.checks import check_seed
from sim.core.layout import POINTS_FOR_COUNT
from sim.core.rng import seed_word
from sim.core.seating import team_name
from sim.core.tiles import tile_name
from sim.errors import SettingError, SniffError
from sim.hint import kernel as hint_kernel
from sim.hint.position import Position, format_position
from sim.hint.search import HEURISTICS, N_VALUES
from strategies import MAX_PARAMS
from strategies import get as get_strategy
from strategies.search.paired import VALUE_MARGIN, VALUE_POINTS, VALUE_WIN
from strategies.search.playout import POLICIES

__all__ = [
    "analyse", "check_budget", "check_policy", "Estimate", "Hint", "hint_json", "hint_text",
    "MIN_BUDGET", "Z95"
]

DEFAULT_BUDGET = 2000
MIN_BUDGET = 2  # an interval needs two play-outs
MAX_BUDGET = 100_000
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """A mean of per-play-out values with its 95% interval (mean ± 1.96 sd / √n).

    Attributes:
        mean: the mean value.
        low: the interval's lower end.
        high: the interval's upper end.
    """

    mean: float
    low: float
    high: float

    @classmethod
    def of(cls, values: np.ndarray, clip: tuple[float, float] | None = None) -> Estimate:
        mean = float(values.mean())
        half = Z95 * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else 0
        low, high = mean - half, mean + half
        if clip is not None:
            low, high = max(low, clip[0]), min(high, clip[1])
        return cls(mean, low, high)

    def as_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "low": self.low, "high": self.high}


@dataclass
class MoveValue:
    """One legal move and what the play-outs say of it."""

    move: int
    name: str
    now: int  # points the placement itself scores
    win: Estimate  # P(the mover's side wins the game)
    points: Estimate  # the mover's side's score change to the end of the round
    margin: Estimate  # that change minus the other sides' average change
    loss: Estimate  # win probability given up against the best move (paired, same deals)
    heuristics: list[str] = field(default_factory=list)


@dataclass
class Hint:
    """The analysis of one position: its moves best first, and the heuristics' choices.

    Attributes:
        position: the position analysed.
        budget: the play-outs spent.
        policy: the play-out policy.
        seed: the search's seed.
        deals: consistent deals of the hidden hands.
        moves: each legal move with its value, best first.
        heuristics: heuristic name -> the move it plays.
        seconds: how long the search took.
    """

    position: Position
    budget: int
    policy: str
    seed: int
    deals: float  # consistent deals of the hidden hands
    moves: list[MoveValue]
    heuristics: dict[str, int]  # heuristic name -> the move it plays
    seconds: float

    @property
    def best(self) -> MoveValue:
        return self.moves[0]

    def value_of(self, move: int) -> MoveValue:
        return next(value for value in self.moves if value.move == move)


def check_budget(budget: int, option: str = "{budget}") -> int:
    """The budget as an int, or refused naming it as ``option`` (a setting in braces: a
    ``SettingError``, worded by the caller)."""
    if isinstance(budget, bool) or not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise SettingError(f"{option} must be {MIN_BUDGET}..{MAX_BUDGET:,} play-outs per move, "
                         f"got {budget}")
    return int(budget)


def check_policy(policy: str) -> int:
    """The index of a named play-out policy, or a SettingError naming the choices."""
    if policy not in POLICIES:
        raise SettingError(f"{{policy}} must be one of {', '.join(POLICIES)}, got {policy!r}")
    return POLICIES.index(policy)


def heuristic_params() -> np.ndarray:
    """Each heuristic's registered default parameters, one row each (``HEURISTICS``)."""
    params = np.zeros((len(HEURISTICS), MAX_PARAMS), dtype=np.float64)
    for row, name in enumerate(HEURISTICS):
        values = list(get_strategy(name).params.values())
        params[row, : len(values)] = values
    return params


def analyse(position: Position, budget: int = DEFAULT_BUDGET, policy: str = "greedy",
            seed: int = 0) -> Hint:
    """Play every legal move of ``position`` out ``budget`` times on the same deals."""
    budget = check_budget(budget)
    policy_index = check_policy(policy)
    seed = check_seed(seed)
    kernel = hint_kernel.load(search=True)
    moves_list = position.legal_moves()
    if not moves_list:
        raise SniffError("position: no legal placement: there is no decision to analyse")
    moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    moves[: len(moves_list)] = moves_list
    n_moves = len(moves_list)
    observation = position.observation()
    values = np.zeros((n_moves, budget, N_VALUES), dtype=np.float64)
    # One play-out per move first, untimed: the first search of a process compiles (or
    # loads) the search, and that is not search time.
    kernel.search(observation, moves, n_moves, 1, policy_index, seed_word(seed),
                  np.zeros((n_moves, 1, N_VALUES), dtype=np.float64))
    started = time.perf_counter()
    deals = float(kernel.search(observation, moves, n_moves, budget, policy_index,
                                seed_word(seed), values))
    seconds = time.perf_counter() - started
    if deals <= 0.0:
        raise SniffError("position: no deal of the hidden tiles fits the hand sizes and the "
                         "known lacks: the position cannot arise")
    chosen = np.zeros(len(HEURISTICS), dtype=np.int64)
    kernel.heuristics(observation, moves, n_moves, heuristic_params(), seed_word(seed), chosen)
    wins = values[:, :, VALUE_WIN]
    order = sorted(range(n_moves), key=lambda i: (-wins[i].mean(),
                                                  -values[i, :, VALUE_POINTS].mean(), i))
    best = order[0]
    layout = position.layout
    result = []
    for index in order:
        move = moves_list[index]
        tile, arm = move >> 2, move & 3
        now = int(POINTS_FOR_COUNT[int(kernel.count(int(kernel.place(layout, tile, arm))))])
        result.append(MoveValue(
            move=move, name=position.move_name(move), now=now,
            win=Estimate.of(wins[index], (0.0, 1.0)),
            points=Estimate.of(values[index, :, VALUE_POINTS]),
            margin=Estimate.of(values[index, :, VALUE_MARGIN]),
            loss=Estimate.of(wins[best] - wins[index]),
            heuristics=[name for name, pick in zip(HEURISTICS, chosen) if pick == index],
        ))
    picks = {name: moves_list[int(pick)] for name, pick in zip(HEURISTICS, chosen)}
    return Hint(position, budget, policy, seed, deals, result, picks, seconds)


# ------------------------------------------------------------ output


def _percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def _signed(value: float) -> str:
    return f"{value:+.1f}"


def position_summary(position: Position) -> list[str]:
    """Two lines that say whose decision it is and what the table shows."""
    from sim.core.layout import decode_ends

    side = team_name(position.team(), position.players)
    scores = " · ".join(
        f"{team_name(team, position.players)} {score}" for team, score in enumerate(position.scores)
    )
    ends = decode_ends(position.layout)
    open_ends = " ".join(f"{arm}={v}" for arm, v in ends.items() if v is not None) or "empty"
    sizes = " ".join(f"{seat}:{size}" for seat, size in enumerate(position.sizes))
    drawn = (f" · must place the drawn {tile_name(position.drawn)}"
             if position.drawn >= 0 else "")
    return [
        f"seat {position.seat} to move ({side}), round {position.round}, target "
        f"{position.target}; scores {scores}",
        f"hand {' '.join(tile_name(t) for t in sorted(position.hand))} · table {open_ends} · "
        f"hand sizes {sizes} · boneyard {position.boneyard}{drawn}",
    ]


def hint_text(hint: Hint, numbers: dict[int, int] | None = None) -> str:
    """The table of docs/hint.md; ``numbers`` adds the placement numbers ``sniff play`` shows."""
    lines = position_summary(hint.position)
    lines.append(
        f"{hint.budget:,} play-outs per move on the same deals (policy {hint.policy}, seed "
        f"{hint.seed}); {hint.deals:,.0f} consistent deals of the hidden hands; "
        f"{hint.seconds:.2f} s"
    )
    width = max(len(value.name) for value in hint.moves)
    head = ("  #  " if numbers else "") + (
        f"rank  {'move':<{width}}  now  win     95% CI            vs best (paired)        "
        "points  95% CI          heuristics"
    )
    lines.append(head)
    for rank, value in enumerate(hint.moves, start=1):
        win = (f"{_percent(value.win.mean):>6}  [{_percent(value.win.low)}, "
               f"{_percent(value.win.high)}]")
        if rank == 1:
            loss = "best"
        else:
            loss = (f"{_signed(-100 * value.loss.mean)} [{_signed(-100 * value.loss.high)}, "
                    f"{_signed(-100 * value.loss.low)}]")
        points = (f"{_signed(value.points.mean):>6}  [{_signed(value.points.low)}, "
                  f"{_signed(value.points.high)}]")
        number = f"{numbers[value.move]:>3}  " if numbers else ""
        lines.append(
            f"{number}{rank:>4}  {value.name:<{width}}  {value.now:>3}  {win:<23}  {loss:<22}  "
            f"{points:<22}  {', '.join(value.heuristics) or '-'}"
        )
    return "\n".join(lines) + "\n"


def hint_json(hint: Hint) -> str:
    """The same analysis as one JSON object (docs/hint.md lists its fields)."""
    document = {
        "position": format_position(hint.position),
        "seat": hint.position.seat,
        "budget": hint.budget,
        "policy": hint.policy,
        "seed": hint.seed,
        "deals": hint.deals,
        "seconds": round(hint.seconds, 4),
        "moves": [
            {
                "move": value.name,
                "tile": tile_name(value.move >> 2),
                "end": None if not hint.position.table else "LRUD"[value.move & 3],
                "now": value.now,
                "win": value.win.as_dict(),
                "vs_best": {"mean": 0.0 - value.loss.mean, "low": 0.0 - value.loss.high,
                            "high": 0.0 - value.loss.low},
                "points": value.points.as_dict(),
                "margin": value.margin.as_dict(),
                "heuristics": value.heuristics,
            }
            for value in hint.moves
        ],
        "heuristics": {name: hint.position.move_name(move)
                       for name, move in hint.heuristics.items()},
    }
    return json.dumps(document, indent=2) + "\n"
