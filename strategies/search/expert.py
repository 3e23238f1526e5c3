"""``expert``: determinized search with heuristic play-outs, valued by the chance to win the game.

At each decision with a real choice:

1. A move that reaches the target wins on the spot and is taken.
2. The hidden tiles are dealt many ways (deals shared by all candidates), each
   consistent deal exactly equally likely (``strategies.search.determinize``): other hands of
   their known sizes, no tile showing a value its seat is known to lack, the rest a
   uniformly shuffled boneyard. A deal the others' draw history rules out is dropped
   (``strategies.search.draw_history``), and any other is kept with probability
   ``(1 - infer) ** d``, d the number of the opponents' choices this round (the public
   record) that a model player (``partner`` with 4 players, else ``blocker``) holding
   that deal's hands would not have made (``strategies.search.inference``): the deals played
   are those that explain what the opponents did.
3. On a deal, a candidate is placed and the round is played out to its end by the
   compiled engine's own turn loop (``sim.core.loop.make_game_player``) with a heuristic
   ``policy`` in every seat for the first ``plies`` placements, ``greedy`` after them:
   the placements right after the candidate decide most of its value, and a policy that
   answers the table as a real opponent does is worth its cost there, not for the whole
   round. The end is valued by the probability that the deciding side
   wins the game from there: 1 or 0 if a side reached the target inside the round, else
   the win probability of the new score state with the next leader (the domino player,
   or a random seat after a block) from a model fitted to simulated games
   (``strategies.value.score_table``, made by ``scripts/score_table.py``;
   ``strategies.value.round_value``). Points matter as much as they move the race: 10 points
   when 15 are needed are worth more than when 200 are.
4. Successive halving spends the budget where the decision is close: the candidates play
   on the same deals with the same random numbers (common random numbers), the worse half
   is dropped after each stage and the survivors get more deals, so ``budget`` play-outs
   are split over about log2(moves) stages whatever the number of moves.

Everything is drawn from the ``rng`` handed in, so a game is reproducible by its seed;
the budget is counted in play-outs, not in time, for the same reason.

Parameters: ``budget`` (default 256, 1..4096): play-outs per decision, in all;
``policy`` (default ``auto``: ``blocker`` for ``plies`` placements with 2 and 3 players,
for 2 placements with 4; or ``greedy``, ``blocker``, ``partner``,
``weighted``, ``random``, ``heavy``, ``learned``: the trained value network,
``strategies.learned.player``): who plays the rounds out; ``plies`` (default 4,
0..64): placements after the candidate that ``policy`` plays before ``greedy`` takes
over, 0 for the whole round; ``halving`` (default 1): 1 successive halving, 0 an
equal share per move; ``value`` (default ``win``; ``points``): ``points`` values a round's
end like ``rollout`` (own side's points minus the others', plus or minus 50 for a won
game) instead of by the win probability; ``prior`` (default 0.02, 0..1): a bonus, in win
probability, for the move the best one-ply heuristic would play (``partner`` with 4
players, else ``blocker``), so that the search overrules it only by a margin; ``infer``
(default 0.9, 0..1): how strongly an opponent's choice the model would not have made
counts against a deal (0: deals stay uniform); ``tries`` (default 4, 1..64): at most
``tries`` times as many deals are drawn as are played, after which the rest are kept
unweighed (opponents the model does not describe would otherwise cost many draws);
``guide`` (default ``heuristic``; ``learned``): whose move gets the ``prior`` bonus, the
one-ply heuristic's or ``learned``'s (docs/expert.md, "Search with the learned model").
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine
from sim.core import observation as view
from sim.core.calls import (
    RAISED,
    SEARCH_CHOICE,
    SEARCH_SLOT,
    SEARCH_VALUES,
    call_search,
    slot,
)
from sim.core.layout import move_points, popcount
from sim.core.rng import next_random, stream_key
from strategies import register
from strategies.learned.features import N_BASE_INPUTS, encode
from strategies.learned.net import MAX_WIDTH, forward
from strategies.learned.player import (
    SIZES_2,
    SIZES_4,
    WEIGHTS_2,
    WEIGHTS_4,
    choose_learned,
)
from strategies.learned.record_inputs import MAX_INPUTS, encode_record
from strategies.search.determinize import prepare
from strategies.search.inference import inferred_deals, model_choice, model_of
from strategies.search.playout import (
    POLICIES,
    give_streams,
    limit_policy,
    play_round_from,
    play_round_until,
    playout_buffers,
)
from strategies.value.round_value import Value, outcome
from strategies.value.score_table import N_FEATURES

__all__ = ["choose_expert", "run_search"]

VALUES = tuple(kind.name.lower() for kind in Value)  # "win", "points", "learned"
# Value.WIN as a plain int, for the call that passes it as an argument: numba compiles that
# call for the constant (as sim.core.engine.END_DOMINO says), not for any Value.
VALUE_WIN = int(Value.WIN)
GUIDES = ("heuristic", "learned")
# "auto": blocker for the first plies with 2 and 3 players, for the first 2 with 4 (where 4
# cost a quarter more time for no clear gain): what the measurements in docs/expert.md
# chose (greedy for the whole round with 3 players was weaker).
EXPERT_POLICIES = POLICIES + ("auto",)
AUTO = len(POLICIES)
AUTO_PLIES_4 = 2
BLOCKER = POLICIES.index("blocker")
MAX_BUDGET = 4096
MAX_PLIES = 64
MAX_TRIES = 64
SALT_DEALS = np.uint64(0x6A09E667F3BCC909)

@njit
def model_value(observation, move, team: int, x, scratch) -> float:
    """``learned``'s network's value of ``move``'s afterstate as its mover sees it, for
    ``team`` (two sides: the other side's chance is one minus the mover's)."""
    encode(observation, move, x)
    players = observation[view.PLAYERS]
    sizes = SIZES_2 if players == 2 else SIZES_4
    if sizes[0] > N_BASE_INPUTS:
        encode_record(observation, x)
    if players == 2:
        value = forward(x, WEIGHTS_2, SIZES_2, scratch)
    else:
        value = forward(x, WEIGHTS_4, SIZES_4, scratch)
    value = min(max(value, 0.0), 1.0)
    if view.team_of(observation[view.SEAT], players) == team:
        return value
    return 1.0 - value


@njit
def play_candidate(state, deal, seat, move, value_kind, seats, log, features) -> float:
    """Place ``move`` on a copy of ``deal``, play the round out, value its end (``seats``,
    ``log``: ``strategies.search.playout.playout_buffers``)."""
    play_round_from(state, deal, seat, move, seats, log)
    return outcome(state, deal, view.team_of(seat, state[engine.PLAYERS]), value_kind, features)


@njit
def play_candidate_until(
    state, deal, seat, move, placements, seats, log, features, x, scratch,
) -> float:
    """``value=learned``: place ``move`` on a copy of ``deal``, stop ``placements``
    placements later and value the last one with ``learned``'s network as its mover saw
    it (a round that ends first is valued as ``play_candidate`` values it)."""
    team = view.team_of(seat, state[engine.PLAYERS])
    mover = play_round_until(state, deal, seat, move, placements, seats, log)
    if mover >= 0:
        value = model_value(seats.observation, seats.moves[0], team, x, scratch)
        seats.moves[0] = engine.NO_MOVE
        return value
    return outcome(state, deal, team, VALUE_WIN, features)


@njit
def schedule(n_moves: int, budget: int, halving: bool, shares) -> int:
    """Deals per stage (into ``shares``); returns the number of stages.

    With halving there are ceil(log2(n)) stages, each of about budget / stages play-outs
    shared by the candidates still in; without, one stage of budget / n deals.
    """
    if not halving or n_moves <= 2:
        shares[0] = max(1, budget // n_moves)
        return 1
    stages = 0
    alive = n_moves
    while alive > 1:
        alive = (alive + 1) // 2
        stages += 1
    alive = n_moves
    for stage in range(stages):
        shares[stage] = max(1, budget // (stages * alive))
        alive = (alive + 1) // 2
    return stages


@register(
    "expert",
    "determinized search: heuristic play-outs valued by the chance to win the game",
    params={"budget": 256, "policy": "auto", "halving": 1.0, "value": "win", "prior": 0.02,
            "plies": 4, "infer": 0.9, "tries": 4, "guide": "heuristic"},
    choices={"policy": EXPERT_POLICIES, "value": VALUES, "guide": GUIDES},
    bounds={"budget": (1, MAX_BUDGET), "halving": (0, 1), "prior": (0, 1),
            "plies": (0, MAX_PLIES), "infer": (0, 1), "tries": (1, MAX_TRIES)},
)
# It allocates its scratch arrays, so it asks for reference counting explicitly (the
# engine's turn loop that calls it is compiled without).
@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def choose_expert(observation, moves, n_moves, params, rng):
    seat = observation[view.SEAT]
    team = view.team_of(seat, observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    for index in range(n_moves):
        if move_points(observation[view.LAYOUT], moves[index]) >= needed:
            return index
    # The search is compiled once, alone, and called through its address
    # (``sim.kernels.generate.load_search`` fills the slot): its compile is shared with
    # ``sniff learn``'s teacher, and this wrapper compiles in seconds.
    values = np.zeros(1, dtype=np.float64)
    choice = call_search(slot(SEARCH_SLOT), SEARCH_CHOICE, observation, moves, n_moves, params,
                         rng, values)
    if choice == RAISED:
        raise RuntimeError("expert's search failed")
    return choice


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def run_search(mode, observation, moves, n_moves, params, rng, values) -> int:
    """The search, as its compiled-alone wrapper calls it (``sim.core.calls.SEARCH_SIGNATURE``):
    with ``mode`` ``SEARCH_CHOICE``, the move ``choose_expert`` plays (the survivor of the
    halving when ``halving`` is on); with ``SEARCH_VALUES``, every move's value into
    ``values`` (:func:`search_values`), returning 0."""
    if mode == SEARCH_VALUES:
        search_values(observation, moves, n_moves, params, rng, values)
        return 0
    totals = np.zeros(n_moves, dtype=np.float64)
    alive = np.ones(n_moves, dtype=np.bool_)
    search(observation, moves, n_moves, params, rng, params[2] >= 0.5, totals, alive)
    for index in range(n_moves):
        if alive[index]:
            return index
    return 0


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def search_values(observation, moves, n_moves, params, rng, values) -> None:
    """Every candidate's mean value (the deciding side's chance to win), each on the same
    ``budget / n_moves`` deals, without halving or prior: what ``sniff learn
    --teacher expert`` distils (a move that reaches the target is worth 1)."""
    totals = np.zeros(n_moves, dtype=np.float64)
    alive = np.ones(n_moves, dtype=np.bool_)
    unbiased = params.copy()
    unbiased[4] = 0.0  # no prior
    deals = search(observation, moves, n_moves, unbiased, rng, False, totals, alive)
    team = view.team_of(observation[view.SEAT], observation[view.PLAYERS])
    needed = observation[view.TARGET] - observation[view.SCORE + team]
    for index in range(n_moves):
        values[index] = totals[index] / deals
        if move_points(observation[view.LAYOUT], moves[index]) >= needed:
            values[index] = 1.0


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def search(observation, moves, n_moves, params, rng, halving, totals, alive) -> int:
    """The search (steps 2 to 4 of the module's text): fills ``totals`` (each candidate's
    summed values, prior included) and leaves the last survivor(s) in ``alive``; returns
    the deals played by each candidate that stayed in to the end."""
    budget = max(1, np.int64(params[0]))
    policy = np.int64(params[1])
    plies = np.int64(params[5])
    value_kind = np.int64(params[3])
    seat = observation[view.SEAT]
    players = observation[view.PLAYERS]
    if policy == AUTO:
        if players == 4:
            policy, plies = BLOCKER, AUTO_PLIES_4  # type: ignore[assignment]  # numba: int64 scalars
        else:
            policy = BLOCKER  # type: ignore[assignment]  # numba: int64 scalars
    prior = params[4]
    model = model_of(players)
    favourite = -1
    if prior > 0.0:
        if params[8] >= 0.5:
            favourite = choose_learned(observation, moves, n_moves, params, rng)
        else:
            favourite = model_choice(model, observation, moves, n_moves)
    plan, counts = prepare(observation)
    shares = np.zeros(8, dtype=np.int64)
    stages = schedule(n_moves, budget, halving, shares)  # type: ignore[arg-type]  # numba: int64 scalars
    deals_needed = 0
    for stage in range(stages):
        deals_needed += shares[stage]
    deal_rng = np.zeros(1, dtype=np.uint64)
    deal_rng[0] = stream_key(next_random(rng), 0, 0, SALT_DEALS)
    deals = inferred_deals(observation, plan, counts, deals_needed, np.int64(params[7]),
                           params[6], model, deal_rng)
    for index in range(deals_needed):
        give_streams(deals[index], deal_rng)
    state, seats, log = playout_buffers(policy)
    # numba: int64 scalars
    limit_policy(seats.functions, plies, popcount(observation[view.PLAYED]))  # type: ignore[arg-type]
    features = np.zeros(N_FEATURES, dtype=np.float64)
    # value=learned (2 sides only: 2 or 4 players) stops each play-out after ``plies``
    # placements past the candidate (at least 1) and values it with the network.
    placements = 0
    if value_kind == Value.LEARNED:
        value_kind = Value.WIN  # type: ignore[assignment]  # numba: int64 scalars
        if players != 3:
            placements = max(1, plies)  # type: ignore[assignment]  # numba: int64 scalars
    x = np.zeros(MAX_INPUTS, dtype=np.float64)
    scratch = np.zeros((2, MAX_WIDTH), dtype=np.float64)
    n_alive = n_moves
    done = 0
    for stage in range(stages):
        for deal in range(done, done + shares[stage]):
            for index in range(n_moves):
                if alive[index]:
                    if placements > 0:
                        totals[index] += play_candidate_until(
                            state, deals[deal], seat, moves[index], placements, seats, log,
                            features, x, scratch,
                        )
                    else:
                        totals[index] += play_candidate(
                            state, deals[deal], seat, moves[index], value_kind, seats, log,
                            features,
                        )
        done += shares[stage]
        if favourite >= 0:
            totals[favourite] += prior * shares[stage]
        keep = (n_alive + 1) // 2 if stage < stages - 1 else 1
        # Drop the worst until ``keep`` remain (ties: the later move goes first).
        while n_alive > keep:
            worst = -1
            for index in range(n_moves):
                if alive[index] and (worst < 0 or totals[index] <= totals[worst]):
                    worst = index
            alive[worst] = False
            n_alive -= 1
    return done
