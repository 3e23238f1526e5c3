"""A seat of ``sniff learn``'s games: its choice, and the records it keeps of its decisions.

The seat is one of three players, ``partner`` and ``blocker`` (the strongest heuristics) and
the value network being trained (``strategies.learned.net``, read from the seat's row), each
with an exploration rate ε (a uniformly random legal move with probability ε). A seat that
records writes, at each of its decisions, the inputs of the afterstate it chose
(``strategies.learned.features.encode``, the mover's public view only) and the round number,
or, when a teacher labels the decision, every candidate's afterstate with the teacher's value
of it (``expert``'s search, called through its address: ``sim.core.calls.call_search``).

Everything a seat needs travels in its parameter row (the engine hands a strategy only its
row): a header (kind, ε, recording, the record count and capacity, the offsets, the
network's layer widths and the heuristic's parameters), the network's flat weights, and the
record area. :func:`player_choice` has a strategy's signature: ``sim.learn.kernel`` compiles
it alone, as the engine compiles a strategy, and the games call it through its address.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import observation as view
from sim.core.calls import RAISED, SEARCH_SLOT, SEARCH_VALUES, call_search, slot
from sim.core.layout import move_points
from sim.core.rng import random_below, random_unit
from strategies.heuristics.blocker import blocker_choice
from strategies.heuristics.partner import partner_choice
from strategies.learned.features import N_BASE_INPUTS, encode
from strategies.learned.net import MAX_WIDTH, first_layer_partial, forward_from
from strategies.learned.record_inputs import MAX_INPUTS, encode_record

__all__: list[str] = []  # nothing here is used outside its room

PARTNER, BLOCKER, NET = 0, 1, 2
KIND, EPSILON, RECORDING, COUNT, CAPACITY, WEIGHTS_AT, RECORDS_AT, N_SIZES = range(8)
SIZES = 8  # up to 6 layer widths
HEURISTIC = 14  # up to 8 heuristic parameters
LABEL_RATE = 22  # the share of decisions the teacher labels (0: Monte-Carlo returns)
INPUTS = 23  # how many inputs a record keeps: N_BASE_INPUTS, or with the record block more
TEACHER = 24  # the teacher's (expert's) parameter row, 10 slots
HEADER = 34
RECORD_WIDTH = MAX_INPUTS + 2  # the inputs, the round number, the teacher's label (-1: none)
PARTNER_PARAMS = (0.7, 6.0, 0.2, 5.0, 0.1)
BLOCKER_PARAMS = (8.0, 0.5, 0.1)


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def player_choice(observation, moves, n_moves, params, rng) -> int:
    """The seat's move: a winning move if any, else ε-random or the player's own pick;
    the chosen afterstate is recorded when the seat records."""
    team = view.team_of(observation[view.SEAT], observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    for index in range(n_moves):
        if move_points(observation[view.LAYOUT], moves[index]) >= needed:
            return index
    kind = np.int64(params[KIND])
    x = np.zeros(MAX_INPUTS, dtype=np.float64)
    # The record block is the same for every move; it is encoded only where it is read:
    # by the network's choice, or in a record kept (unlabelled decisions of a heuristic
    # seat are most decisions, and need none).
    record_pending = params[INPUTS] > N_BASE_INPUTS
    if params[EPSILON] > 0.0 and random_unit(rng) < params[EPSILON]:
        choice = random_below(rng, n_moves)
    elif kind == PARTNER:
        choice = partner_choice(observation, moves, n_moves, params[HEURISTIC:HEURISTIC + 8])
    elif kind == BLOCKER:
        choice = blocker_choice(observation, moves, n_moves, params[HEURISTIC:HEURISTIC + 8])
    else:
        n_sizes = np.int64(params[N_SIZES])
        sizes = np.empty(n_sizes, dtype=np.int64)
        for layer in range(n_sizes):
            sizes[layer] = np.int64(params[SIZES + layer])
        start = np.int64(params[WEIGHTS_AT])
        weights = params[start:np.int64(params[RECORDS_AT])]
        scratch = np.empty((2, MAX_WIDTH), dtype=np.float64)
        partial = np.empty(MAX_WIDTH, dtype=np.float64)
        if record_pending:
            encode_record(observation, x)
            record_pending = False
        first_layer_partial(x, weights, sizes, partial)
        choice = 0
        best = -np.inf
        for index in range(n_moves):
            encode(observation, moves[index], x)
            value = forward_from(x, weights, sizes, scratch, partial)
            if value > best:
                best = value
                choice = index
    if params[RECORDING] <= 0.0:
        return choice
    labelled = params[LABEL_RATE] > 0.0
    if labelled and random_unit(rng) >= params[LABEL_RATE]:
        return choice  # a decision the teacher does not label is not recorded
    if record_pending:
        encode_record(observation, x)
    if labelled:
        label(observation, moves, n_moves, params, rng, x)
    else:
        append_record(observation, moves[choice], -1.0, params, x)
    return choice


@njit(inline="always")
def append_record(observation, move, value, params, x) -> bool:
    """Append ``move``'s afterstate, the round and ``value`` (the teacher's label, -1 for
    none) to the seat's records; False when its room is full."""
    count = np.int64(params[COUNT])
    if count >= params[CAPACITY]:
        return False
    at = np.int64(params[RECORDS_AT]) + count * RECORD_WIDTH
    encode(observation, move, x)  # the record block is in x already (player_choice)
    params[at:at + MAX_INPUTS] = x
    params[at + MAX_INPUTS] = observation[view.ROUND]
    params[at + MAX_INPUTS + 1] = value
    params[COUNT] = count + 1
    return True


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def label(observation, moves, n_moves, params, rng, x) -> None:
    """Record every candidate's afterstate with the teacher's value of it (``expert``'s
    search, each move on the same deals)."""
    values = np.empty(n_moves, dtype=np.float64)
    teacher = params[TEACHER:TEACHER + 10].copy()
    # expert's search, compiled alone and called through its address (sim.kernels.generate
    # load_search): these games do not compile a search of their own (the ignore: numba
    # passes an intrinsic's typing context itself)
    if call_search(slot(SEARCH_SLOT), SEARCH_VALUES, observation, moves, n_moves, teacher,  # type: ignore[call-arg]
                   rng, values) == RAISED:
        raise RuntimeError("the teacher's search failed")
    for index in range(n_moves):
        if not append_record(observation, moves[index], values[index], params, x):
            return


def player_row(kind: int, epsilon: float = 0.0, recording: bool = False, capacity: int = 0,
               weights: np.ndarray | None = None, sizes: np.ndarray | None = None,
               label_rate: float = 0.0, teacher: np.ndarray | None = None,
               inputs: int = N_BASE_INPUTS) -> np.ndarray:
    """A seat's parameter row: header, network weights, room for ``capacity`` records;
    with ``label_rate`` > 0 the seat records only the decisions the ``teacher`` (expert's
    parameter row) labels, each candidate with its value. ``inputs``: how many inputs a
    record keeps (more than ``N_BASE_INPUTS``: the record block too); a network's seat
    needs at least its first layer's width."""
    weights = np.zeros(0) if weights is None else np.asarray(weights, dtype=np.float64)
    sizes = np.zeros(0, dtype=np.int64) if sizes is None else np.asarray(sizes)
    row = np.zeros(HEADER + weights.size + capacity * RECORD_WIDTH, dtype=np.float64)
    row[KIND], row[EPSILON], row[RECORDING], row[CAPACITY] = kind, epsilon, recording, capacity
    row[WEIGHTS_AT] = HEADER
    row[RECORDS_AT] = HEADER + weights.size
    row[N_SIZES] = sizes.size
    row[SIZES:SIZES + sizes.size] = sizes
    heuristic = PARTNER_PARAMS if kind == PARTNER else BLOCKER_PARAMS
    row[HEURISTIC:HEURISTIC + len(heuristic)] = heuristic
    row[HEADER:HEADER + weights.size] = weights
    row[LABEL_RATE] = label_rate
    row[INPUTS] = max(inputs, sizes[0] if sizes.size else 0)
    if teacher is not None:
        row[TEACHER:TEACHER + len(teacher)] = teacher
    return row


def roles_matrix(rows: list[np.ndarray]) -> np.ndarray:
    """The players' rows as one matrix (padded to the longest)."""
    width = max(row.size for row in rows)
    matrix = np.zeros((len(rows), width), dtype=np.float64)
    for index, row in enumerate(rows):
        matrix[index, :row.size] = row
    return matrix
