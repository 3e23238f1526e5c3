"""``expert`` and its exact sampler: uniformity, consistency, reproducibility, errors.

The batches run in the kernel of ``tests/strategies/registry/test_catalog.py`` (every
built-in strategy, ``expert`` included), and the search called from Python runs in the
cached module of ``tests/helpers/compiled_strategies.py``, so this file adds no compile of
its own beyond the sampler's.
Strength is not tested here beyond a cheap sanity game: it is measured by
``benchmarks/expert_curve.py`` (docs/expert.md).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

import strategies
from sim.core import engine
from sim.core import observation as view
from sim.core.tiles import ALL_TILES, parse_tile
from sim.kernels.runner import lineup_of, play_batch
from strategies import StrategyError, parse_spec
from strategies.heuristics.features import tiles_with_values as compiled_tiles_with_values
from strategies.search import expert, playout
from strategies.value.score_table import N_FEATURES
from tests.helpers import compiled_strategies as compiled
from tests.helpers.cli import run_main
from tests.helpers.compiled_functions import cached
from tests.helpers.views import chi_square_z, decisions, redealt_views, view_of, win_rate

# Called from Python through cached wrappers (tests/helpers/compiled_functions.py): compiled
# once per machine, not in every test process.
tiles_with_values = compiled_tiles_with_values.py_func  # a loop over 7 values: plain Python
prepare = cached("strategies.search.determinize.prepare")
deal_count = cached("strategies.search.determinize.deal_count")
sample_deal = cached("strategies.search.determinize.sample_deal")
deal_hidden = cached("strategies.search.rollout.deal_hidden")

HIDDEN = ("0-0", "0-1", "1-2", "2-3", "3-4", "4-6", "1-5")
SIZES = {1: 2, 2: 2, 3: 1}  # seat 0 decides; two tiles are left for the boneyard
LACKS = {1: (0, 6), 3: (1, 2)}


def small_position() -> np.ndarray:
    """A 4-player view with 7 hidden tiles and lacks that rule out many deals."""
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    observation[view.SEAT] = 0
    observation[view.PLAYERS] = 4
    observation[view.TARGET] = 200
    hidden = sum(1 << parse_tile(t) for t in HIDDEN)
    hand = 1 << parse_tile("6-6")
    observation[view.HAND] = hand
    observation[view.HAND_SIZE] = 1
    observation[view.PLAYED] = ALL_TILES & ~hidden & ~hand
    observation[view.BONEYARD_SIZE] = len(HIDDEN) - sum(SIZES.values())
    for seat, size in SIZES.items():
        observation[view.HAND_SIZE + seat] = size
    for seat, values in LACKS.items():
        observation[view.LACKS + seat] = sum(1 << v for v in values)
    return observation


def consistent_deals(observation: np.ndarray) -> list[tuple[int, int, int]]:
    """Every hand deal of seats 1..3 that agrees with the view, by enumeration."""
    tiles = [parse_tile(t) for t in HIDDEN]
    deals = []
    for one in itertools.combinations(tiles, SIZES[1]):
        rest = [t for t in tiles if t not in one]
        for two in itertools.combinations(rest, SIZES[2]):
            for three in itertools.combinations([t for t in rest if t not in two], SIZES[3]):
                hands = [sum(1 << t for t in hand) for hand in (one, two, three)]
                if all(hands[s - 1] & tiles_with_values(int(observation[view.LACKS + s])) == 0
                       for s in (1, 2, 3)):
                    deals.append(tuple(hands))
    return deals


def hands_of(state: np.ndarray) -> tuple[int, int, int]:
    return tuple(int(state[engine.HANDS + s]) for s in (1, 2, 3))


def test_sampler_counts_the_deals_and_draws_each_equally_often() -> None:
    observation = small_position()
    deals = consistent_deals(observation)
    plan, counts = prepare(observation)
    assert deal_count(plan, counts) == len(deals) > 20
    rng = np.array([3], dtype=np.uint64)
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    per_deal = 60
    drawn: Counter = Counter()
    boneyard_orders: Counter = Counter()
    for _ in range(per_deal * len(deals)):
        assert sample_deal(observation, plan, counts, state, rng)
        drawn[hands_of(state)] += 1
        boneyard_orders[tuple(state[engine.DECK + 26:engine.DECK + 28])] += 1
    assert set(drawn) == set(deals)  # every draw is consistent, every deal is drawn
    z = chi_square_z([drawn[d] for d in deals], per_deal)
    assert z < 3.1, f"not uniform: chi-square z = {z:.2f}"  # one-sided p ~ 0.001
    # The boneyard's order is uniform too: each ordered pair of two tiles equally often.
    for pair, count in boneyard_orders.items():
        flipped = boneyard_orders[pair[::-1]]
        assert abs(count - flipped) < 4 * math.sqrt(count + flipped)


def test_rollouts_sequential_sampler_fails_the_same_test() -> None:
    """The test has power: the sequential sampler with retries is measurably biased."""
    observation = small_position()
    deals = consistent_deals(observation)
    rng = np.array([3], dtype=np.uint64)
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    drawn: Counter = Counter()
    for _ in range(60 * len(deals)):
        deal_hidden(observation, state, rng)
        drawn[hands_of(state)] += 1
    assert chi_square_z([drawn[d] for d in deals], 60) > 5


def test_sampled_deals_agree_with_every_real_decision() -> None:
    rng = np.array([11], dtype=np.uint64)
    checked = 0
    for players, text in ((4, "random,greedy"), (3, "greedy,heavy,random"), (2, "greedy,random")):
        for state, seat, forced, move in itertools.islice(decisions(players, text, 5, 1), 60):
            observation, _, _ = view_of(state, seat, forced, move)
            plan, counts = prepare(observation)
            true_hands = [int(state[engine.HANDS + s]) for s in range(players)]
            for _ in range(5):
                other = np.zeros_like(state)
                assert sample_deal(observation, plan, counts, other, rng)
                everything = int(other[engine.PLAYED])
                for s in range(players):
                    hand = int(other[engine.HANDS + s])
                    assert bin(hand).count("1") == bin(true_hands[s]).count("1")
                    if s == seat:
                        assert hand == true_hands[s]
                    else:
                        lacks = int(state[engine.LACKS + s])
                        assert hand & tiles_with_values(lacks) == 0
                    assert everything & hand == 0
                    everything |= hand
                position = int(other[engine.BONEYARD_POS])
                assert position == state[engine.BONEYARD_POS]
                for tile in other[engine.DECK + position:engine.DECK + 28]:
                    assert everything >> int(tile) & 1 == 0
                    everything |= 1 << int(tile)
                assert everything == ALL_TILES
            checked += 1
    assert checked > 60


def test_win_model_is_a_probability_that_favours_the_side_ahead() -> None:
    state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    features = np.zeros(N_FEATURES)
    win_probability = cached("strategies.value.round_value.win_probability")
    for players, target in ((2, 250), (4, 200)):
        state[engine.PLAYERS] = players
        state[engine.TARGET] = target
        state[engine.SCORES:engine.SCORES + 2] = (150, 60)
        ahead = win_probability(state, 0, 0.0, features)
        behind = win_probability(state, 1, 0.0, features)
        assert 0.5 < ahead < 1 and ahead + behind == pytest.approx(1.0)
        leading = win_probability(state, 1, 1.0, features)
        assert 0 < behind < 0.5 and leading + win_probability(
            state, 0, -1.0, features) == pytest.approx(1.0)
        state[engine.SCORES] = 200 if players == 2 else 180
        assert win_probability(state, 0, 0.0, features) > ahead


def test_play_out_policies_use_their_registered_defaults() -> None:
    for index, name in enumerate(playout.POLICIES):
        defaults = list(strategies.get(name).params.values())
        assert list(playout.POLICY_PARAMS[index, : len(defaults)]) == defaults, name


def test_a_limited_play_out_policy_hands_over_to_greedy() -> None:
    """A seat's play-out code carries a limit of tiles on the table: up to it the policy
    chooses, past it greedy does (``plies``: the policy plays the first placements)."""
    blocker = playout.POLICIES.index("blocker")
    params = playout.POLICY_PARAMS[blocker]
    unit = playout.LIMIT_UNIT
    checked = differ = 0
    for game_id in range(3):
        for state, seat, forced, move in decisions(2, "blocker,greedy", 3, game_id):
            observation, moves, n_moves = view_of(state, seat, forced, move)
            played = bin(int(observation[view.PLAYED])).count("1")
            if played < 2 or n_moves < 2:
                continue

            own, within, plain, past = (
                compiled.choose_policy(code, observation, moves, n_moves, params,
                                        np.zeros(1, dtype=np.uint64))
                for code in (blocker, blocker + unit * played, 0,
                             blocker + unit * (played - 1)))
            assert within == own and past == plain  # the limit: up to it, then past it
            checked += 1
            differ += own != plain
    assert checked > 20 and differ > 0  # the two policies do disagree here
    codes = np.full(4, blocker, dtype=np.int64)
    playout.limit_policy.py_func(codes, 0, 9)
    assert (codes == blocker).all()  # plies 0: the whole round
    playout.limit_policy.py_func(codes, 4, 9)
    assert (codes == blocker + unit * 13).all()


def test_halving_schedule_spends_about_the_budget() -> None:
    shares = np.zeros(8, dtype=np.int64)
    for n_moves in range(2, 20):
        for budget in (16, 192, 1000):
            stages = expert.schedule.py_func(n_moves, budget, True, shares)
            alive, spent = n_moves, 0
            for stage in range(stages):
                spent += shares[stage] * alive
                alive = (alive + 1) // 2
            assert alive == 1 and spent <= budget + n_moves * stages
            assert spent >= budget // 2 or shares[0] == 1


def test_same_seed_same_games_other_seed_other_games() -> None:
    lineup = lineup_of(2, strategies.parse_lineup_text("expert:budget=12,blocker"))
    game_ids = np.arange(8, dtype=np.int64)

    def play(seed: int) -> np.ndarray:
        result = play_batch(lineup, seed, game_ids, rotations=game_ids % 2)
        return np.column_stack([result.games, result.round_rows[:8]])

    first = play(4)
    np.testing.assert_array_equal(first, play(4))
    assert not np.array_equal(first, play(5))


@pytest.mark.parametrize(("players", "same", "other"), [
    (2, "policy=blocker,plies=4", "policy=blocker,plies=2"),
    (3, "policy=blocker,plies=4", "policy=greedy,plies=0"),
    (4, "policy=blocker,plies=2", "policy=greedy,plies=0"),
])
def test_auto_play_outs_are_the_setting_chosen_for_each_player_count(
        players: int, same: str, other: str) -> None:
    """``policy=auto`` plays exactly the explicit setting docs/expert.md chose for the
    player count (same games), and not another one."""
    game_ids = np.arange(3, dtype=np.int64)
    others = ",blocker,greedy" if players == 3 else ",blocker"

    def play(settings: str) -> np.ndarray:
        lineup = lineup_of(players, strategies.parse_lineup_text(
            f"expert:budget=12,{settings}{others}"))
        result = play_batch(lineup, 6, game_ids, rotations=game_ids % players)
        return np.concatenate([result.games.ravel(), result.round_rows.ravel()])

    auto = play("policy=auto")
    np.testing.assert_array_equal(auto, play(same))
    assert not np.array_equal(auto, play(other))


@pytest.mark.parametrize("players", [2, 4])
def test_expert_beats_random(players: int) -> None:
    low, high, wins = win_rate(players, "expert:budget=8,random", 100, seed=2024)
    assert low > 0.5, f"expert won {wins}/100: 99% interval [{low:.3f}, {high:.3f}]"


# Play-outs by learned with its move as the prior's favourite; play-outs stopped after 2
# placements and valued by learned's network.
MODEL_OPTIONS = ("expert:budget=16,policy=learned,plies=2,guide=learned",
                 "expert:budget=16,value=learned,plies=2")


@pytest.mark.parametrize("options", MODEL_OPTIONS)
@pytest.mark.parametrize("players", [2, 4])
def test_expert_with_the_learned_model_plays_legal_games_and_beats_random(
    players: int, options: str
) -> None:
    """Whole games in the engine (an illegal choice would stop the run), well ahead of
    ``random``."""
    low, high, wins = win_rate(players, f"{options},random", 40, seed=2025)
    assert low > 0.5, f"won {wins}/40: 99% interval [{low:.3f}, {high:.3f}]"


@pytest.mark.parametrize("options", MODEL_OPTIONS)
@pytest.mark.parametrize(("players", "text"), [(2, "blocker,blocker"), (4, "partner,partner")])
def test_expert_with_the_learned_model_sees_nothing_hidden(
    players: int, text: str, options: str
) -> None:
    """At real decisions, re-dealing the other hands and the boneyard consistently with
    everything public leaves the view, and so the choice, the same."""
    spec = parse_spec(options)
    params = np.zeros(strategies.MAX_PARAMS)
    params[: len(spec.values)] = spec.values
    rng = np.array([77], dtype=np.uint64)
    checked = changed = 0
    for state, seat, forced, move in decisions(players, text, 9, 0):
        observation, moves, n_moves = view_of(state, seat, forced, move)
        if n_moves < 2:
            continue
        chosen = compiled.choose_expert(observation, moves, n_moves, params,
                                        np.array([5], np.uint64))
        assert 0 <= chosen < n_moves
        for again, moves_again, n_again, hidden_changed in redealt_views(
                state, seat, forced, move, players, observation, rng, 2):
            changed += hidden_changed
            assert compiled.choose_expert(again, moves_again, n_again, params,
                                          np.array([5], np.uint64)) == chosen
        checked += 1
        if checked == 12:
            break
    assert checked >= 6 and changed > checked


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("expert:budget=0", "parameter 'budget' of strategy 'expert' must be between 1 and "
                            "4096, got 0"),
        ("expert:budget=5000", "must be between 1 and 4096, got 5000"),
        ("expert:policy=minimax", "'policy' of strategy 'expert' must be one of greedy, "
                                  "blocker, partner, weighted, random, heavy, learned, auto, got "
                                  "'minimax'"),
        ("expert:plies=65", "parameter 'plies' of strategy 'expert' must be between 0 and 64, "
                            "got 65"),
        ("expert:infer=1.5", "parameter 'infer' of strategy 'expert' must be between 0 and 1, "
                             "got 1.5"),
        ("expert:tries=0", "parameter 'tries' of strategy 'expert' must be between 1 and 64, "
                           "got 0"),
        ("rollout:samples=0", "parameter 'samples' of strategy 'rollout' must be between 1 "
                              "and 100000, got 0"),
    ],
)
def test_out_of_range_parameters_are_refused(text: str, message: str) -> None:
    with pytest.raises(StrategyError) as error:
        parse_spec(text)
    assert message in str(error.value)


def test_register_refuses_bounds_that_exclude_the_default() -> None:
    with pytest.raises(StrategyError, match="bounds of bad.k"):
        strategies.register("bad", "x", params={"k": 0.0}, bounds={"k": (1, 2)})


@pytest.mark.parametrize(
    ("lineup", "message"),
    [
        ("expert:budget=0,blocker", "must be between 1 and 4096, got 0"),
        ("expert:policy=minimax,blocker", "'policy' of strategy 'expert' must be one of"),
        ("expert:infer=-1,blocker", "parameter 'infer' of strategy 'expert' must be between"),
    ],
)
def test_bad_expert_parameters_are_one_line_from_the_command_line(
    lineup: str, message: str, capsys, tmp_path
) -> None:
    code, out, err = run_main(["simulate", "--players", "2", "--strategies", lineup,
                               "--games", "2", "-q", "-o", str(tmp_path / "run")], capsys)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("sniff: error: ") and message in err


def test_search_values_are_the_search_without_halving_or_prior() -> None:
    """What ``sniff learn --teacher expert`` distils: every candidate's value on the same
    deals; its best move is the move ``expert:halving=0,prior=0`` plays from the same
    random state, and the default's prior does not enter the values."""
    plain = np.array(parse_spec("expert:budget=32,halving=0,prior=0").values)
    default = np.array(parse_spec("expert:budget=32").values)
    checked = 0
    for players, text in ((2, "greedy,blocker"), (4, "partner,greedy")):
        for state, seat, forced, move in itertools.islice(decisions(players, text, 3, 2), 80):
            observation, moves, n_moves = view_of(state, seat, forced, move)
            if n_moves < 2:
                continue
            values = np.zeros(n_moves)
            compiled.search_values(observation, moves, n_moves, default,
                                   np.array([5], dtype=np.uint64), values)
            assert np.all((values >= 0) & (values <= 1))
            choice = compiled.choose_expert(observation, moves, n_moves, plain,
                                            np.array([5], dtype=np.uint64))
            assert values[choice] == values.max()
            unbiased = np.zeros(n_moves)
            compiled.search_values(observation, moves, n_moves, plain,
                                   np.array([5], dtype=np.uint64), unbiased)
            np.testing.assert_array_equal(values, unbiased)
            checked += 1
    assert checked > 20
