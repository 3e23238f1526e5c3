"""Exactly uniform determinizations: the hidden tiles dealt every consistent way, equally likely.

What is public about the hidden tiles (``sim.core.observation``): each other seat's hand size,
the pip values each seat is known to lack, and the boneyard's size. A *consistent deal*
gives every other seat a hand of its size with no tile showing a value it lacks, puts the
rest in the boneyard, and orders the boneyard. Sampling one uniformly is what a
determinizing search needs: a biased sampler (sequential with retries, as ``rollout``'s)
over-weights the deals in which the constrained seats happen to be dealt first.

Method. A hidden tile's *class* is the set of other seats allowed to hold it (with 3 other
seats at most 8 classes; the boneyard takes any tile). A deal is fixed by how many tiles of
each class go to each seat (the split ``x[class, seat]``, the boneyard taking the rest of
the class) and by which tiles those are. For a given split there are
``prod_class count! / prod_seat x! / boneyard_x!`` deals, so the split is drawn with that
weight times the number of completions of the later classes, which a small dynamic
programme over (class, remaining capacity of each seat) counts exactly (:func:`prepare`).
Given the split, the tiles of each class are dealt to its seats uniformly (a uniform
subset each), and the boneyard is shuffled uniformly: every consistent deal then has the
same probability. Counts are float64 (at most 23 hidden tiles: multinomials below 1e23, so
the relative rounding of a weight is about 1e-16).

Nothing here depends on the hidden tiles themselves: :func:`prepare` reads the observation
only, and the deals are drawn from the stream it is handed.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, record
from sim.core import observation as view
from sim.core.layout import bit_index, popcount
from sim.core.rng import random_below, random_unit
from sim.core.tiles import N_TILES
from strategies.heuristics.features import tiles_with_values, unseen_tiles

__all__ = ["deal_count", "prepare", "sample_deal"]

MAX_OTHERS = 3
MAX_CLASSES = 1 << MAX_OTHERS
# prepare() fills the header of a plan; the counting table follows it.
PLAN_OTHERS = 0  # number of other seats m (players - 1)
PLAN_SEATS = 1  # + j: the j-th other seat, (seat + 1 + j) % players
PLAN_SIZES = 4  # + j: its hand size
PLAN_STRIDES = 7  # + j: stride of capacity j in a table row
PLAN_ROW = 10  # entries in a table row: prod (size_j + 1)
PLAN_CLASSES = 11  # number of non-empty classes
PLAN_CLASS_MASK = 12  # + k: seats allowed to hold class k (bit j = j-th other seat)
PLAN_CLASS_TILES = 20  # + k: the tiles of class k
PLAN_HEADER = 28

FACTORIAL = np.array([float(np.prod(np.arange(1, n + 1, dtype=np.float64))) for n in range(29)])


@njit
def _capacity(index: int, plan, j: int) -> int:
    return (index // plan[PLAN_STRIDES + j]) % (plan[PLAN_SIZES + j] + 1)


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def prepare(observation):
    """The plan of a decision: who may hold what, and the completion counts.

    Returns ``(plan, counts)``: ``plan`` the int64 header above; ``counts[k, index]`` the
    number of ways to deal classes ``k..`` to the seats when their remaining capacities
    are those encoded by ``index`` (mixed radix, strides in the plan) and the boneyard
    takes the rest. ``counts[0, sizes]`` is the number of consistent deals of the hands.
    """
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    others = players - 1
    plan = np.zeros(PLAN_HEADER, dtype=np.int64)
    plan[PLAN_OTHERS] = others
    stride = 1
    for j in range(MAX_OTHERS):
        plan[PLAN_STRIDES + j] = stride
        if j < others:
            other = (seat + 1 + j) % players
            plan[PLAN_SEATS + j] = other
            plan[PLAN_SIZES + j] = observation[view.HAND_SIZE + other]
            stride *= plan[PLAN_SIZES + j] + 1
    plan[PLAN_ROW] = stride
    unseen = unseen_tiles(observation)
    classes = 0
    for mask in range(1 << others):
        tiles = unseen
        for j in range(others):
            lacked = tiles_with_values(observation[view.LACKS + plan[PLAN_SEATS + j]])
            if (mask >> j) & 1:
                tiles &= ~lacked
            else:
                tiles &= lacked
        if tiles:
            plan[PLAN_CLASS_MASK + classes] = mask
            plan[PLAN_CLASS_TILES + classes] = tiles
            classes += 1
    plan[PLAN_CLASSES] = classes
    counts = np.zeros((classes + 1, stride), dtype=np.float64)
    counts[classes, 0] = 1.0
    remaining = 0  # tiles in classes k.. (filled backwards)
    for k in range(classes - 1, -1, -1):
        size = popcount(plan[PLAN_CLASS_TILES + k])
        remaining += size
        for index in range(stride):
            held = 0
            for j in range(others):
                held += _capacity(index, plan, j)
            if held <= remaining:
                counts[k, index] = _splits(plan, counts, k, index, size, -1.0, 0)
    return plan, counts


@njit
def _splits(plan, counts, k: int, index: int, size: int, stop: float, out: int):
    """Sum over the splits of class ``k`` of weight x completions, or with ``stop`` >= 0
    the first split whose running sum passes ``stop`` (its seat counts packed 5 bits each).

    Splits are enumerated in one fixed order, so the draw in :func:`sample_deal` walks the
    same terms as the count.
    """
    mask = plan[PLAN_CLASS_MASK + k]
    limit0 = min(size, _capacity(index, plan, 0)) if mask & 1 else 0
    limit1 = min(size, _capacity(index, plan, 1)) if mask & 2 else 0
    limit2 = min(size, _capacity(index, plan, 2)) if mask & 4 else 0
    s0, s1, s2 = plan[PLAN_STRIDES], plan[PLAN_STRIDES + 1], plan[PLAN_STRIDES + 2]
    total = 0.0
    for x0 in range(limit0 + 1):
        for x1 in range(min(limit1, size - x0) + 1):
            for x2 in range(min(limit2, size - x0 - x1) + 1):
                rest = counts[k + 1, index - x0 * s0 - x1 * s1 - x2 * s2]
                if rest == 0.0:
                    continue
                weight = FACTORIAL[size] / (
                    FACTORIAL[x0] * FACTORIAL[x1] * FACTORIAL[x2]
                    * FACTORIAL[size - x0 - x1 - x2]
                )
                total += weight * rest
                if stop >= 0.0 and total > stop:
                    return float(x0 | (x1 << 5) | (x2 << 10))
    if stop >= 0.0:
        return -1.0  # rounding left the draw past the last term: caller takes the last
    return total


@njit
def deal_count(plan, counts) -> float:
    """The number of consistent hand deals (boneyard order not counted)."""
    index = 0
    for j in range(plan[PLAN_OTHERS]):
        index += plan[PLAN_SIZES + j] * plan[PLAN_STRIDES + j]
    return counts[0, index]


@njit
def pick_tiles(pool: int, count: int, rng) -> int:
    """``count`` tiles drawn uniformly without replacement from the mask ``pool``."""
    picked = 0
    size = popcount(pool)
    for _ in range(count):
        rest = pool
        for _ in range(random_below(rng, size)):
            rest &= rest - 1
        bit = rest & -rest
        picked |= bit
        pool ^= bit
        size -= 1
    return picked


@njit
def copy_public(observation, state) -> None:
    """The engine state's public part (own hand, table, scores, lacks, record) from the view."""
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    state[:] = 0
    state[engine.PLAYERS] = players
    state[engine.TARGET] = observation[view.TARGET]
    state[engine.ROUND] = observation[view.ROUND]
    state[engine.LEADER] = observation[view.LEADER]
    state[engine.LAYOUT] = observation[view.LAYOUT]
    state[engine.PLAYED] = observation[view.PLAYED]
    state[engine.WINNER_TEAM] = -1
    for team in range(view.team_count(players)):
        state[engine.SCORES + team] = observation[view.SCORE + team]
    for other in range(players):
        state[engine.LACKS + other] = observation[view.LACKS + other]
    state[engine.HANDS + seat] = observation[view.HAND]
    record.copy(observation, view.RECORD, state, engine.RECORD)


@njit
def sample_deal(observation, plan, counts, state, rng) -> bool:
    """Fill ``state`` with a uniformly drawn consistent deal; False if there is none.

    (There always is one in a real game: the true deal. None means the view was built by
    hand inconsistently.)
    """
    copy_public(observation, state)
    total = deal_count(plan, counts)
    if total <= 0.0:
        return False
    index = 0
    for j in range(plan[PLAN_OTHERS]):
        index += plan[PLAN_SIZES + j] * plan[PLAN_STRIDES + j]
    boneyard = 0
    for k in range(plan[PLAN_CLASSES]):
        tiles = plan[PLAN_CLASS_TILES + k]
        size = popcount(tiles)
        stop = random_unit(rng) * counts[k, index]
        packed = int(_splits(plan, counts, k, index, size, stop, 0))
        if packed < 0:
            packed = _last_split(plan, counts, k, index, size)
        for j in range(plan[PLAN_OTHERS]):
            take = (packed >> (5 * j)) & 31
            if take:
                hand = pick_tiles(tiles, take, rng)
                state[engine.HANDS + plan[PLAN_SEATS + j]] |= hand
                tiles &= ~hand
                index -= take * plan[PLAN_STRIDES + j]
        boneyard |= tiles
    shuffle_boneyard(boneyard, state, rng)
    return True


@njit
def shuffle_boneyard(boneyard: int, state, rng) -> None:
    """The tiles of the mask ``boneyard``, uniformly shuffled into the end of the deck."""
    position = N_TILES - popcount(boneyard)
    state[engine.BONEYARD_POS] = position
    for slot in range(position, N_TILES):
        bit = pick_tiles(boneyard, 1, rng)
        boneyard ^= bit
        state[engine.DECK + slot] = bit_index(bit)


@njit
def _last_split(plan, counts, k: int, index: int, size: int) -> int:
    """The last split with completions (a draw that rounding pushed past the total)."""
    mask = plan[PLAN_CLASS_MASK + k]
    limit0 = min(size, _capacity(index, plan, 0)) if mask & 1 else 0
    limit1 = min(size, _capacity(index, plan, 1)) if mask & 2 else 0
    limit2 = min(size, _capacity(index, plan, 2)) if mask & 4 else 0
    s0, s1, s2 = plan[PLAN_STRIDES], plan[PLAN_STRIDES + 1], plan[PLAN_STRIDES + 2]
    last = 0
    for x0 in range(limit0 + 1):
        for x1 in range(min(limit1, size - x0) + 1):
            for x2 in range(min(limit2, size - x0 - x1) + 1):
                if counts[k + 1, index - x0 * s0 - x1 * s1 - x2 * s2] != 0.0:
                    last = x0 | (x1 << 5) | (x2 << 10)
    return last
