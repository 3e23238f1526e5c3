"""The public record and what ``expert`` infers from it (``sim.core.record``,
``strategies.search.inference``).

The record in every view must be what a player saw (rebuilt from traces independently of
the engine's bookkeeping), the earlier views rebuilt from it must be the views the engine
gave then, the true deal must explain every choice of a player who is the model, and the
rejection sampler must draw deals in proportion to the likelihood it claims.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from sim.core import engine, record
from sim.core import observation as view
from sim.core.tiles import ALL_TILES, parse_tile
from strategies.heuristics.features import tiles_with_values
from strategies.search import inference
from tests.helpers.compiled_functions import CachedModule, cached
from tests.helpers.views import chi_square_z, decisions, view_of

# the search's @njit functions through cached wrappers: compiled once per machine, not in
# every test process (tests/helpers/compiled_functions.py)
compiled_inference = CachedModule("strategies.search.inference")
compiled_draws = CachedModule("strategies.search.draw_history")
compiled_det = CachedModule("strategies.search.determinize")
compiled_legal_moves = cached("sim.core.layout.legal_moves")
MODEL = {"blocker": inference.MODEL_BLOCKER, "partner": inference.MODEL_PARTNER}


def round_views(players: int, text: str, seed: int, game_id: int):
    """Per round, every placement's ``(view, state, seat, forced, move)`` in order."""
    rounds: list[list] = []
    last_round = -1
    for state, seat, forced, move in decisions(players, text, seed, game_id):
        observation, _, _ = view_of(state, seat, forced, move)
        if int(state[engine.ROUND]) != last_round:
            rounds.append([])
            last_round = int(state[engine.ROUND])
        rounds[-1].append((observation, state, seat, forced, move))
    return rounds


def events(observation: np.ndarray) -> list[tuple[int, int, int]]:
    return [record.event(observation, view.RECORD, i) for i in range(observation[view.RECORD])]


def test_the_record_packs_and_reads_back_every_event() -> None:
    array = np.full(3 + record.RECORD_SIZE, -1, dtype=np.int64)
    record.clear(array, 3)
    written = [(k % 4, k % 4 if k % 3 else 3 - k % 4, (k * 37) % 112) for k in range(126)]
    for kind, seat, move in written:
        record.append(array, 3, kind, seat, move)
    assert array[3] == 126 and array[2] == -1  # nothing written before the record
    assert [record.event(array, 3, i) for i in range(126)] == written
    copied = np.zeros(record.RECORD_SIZE, dtype=np.int64)
    record.copy(array, 3, copied, 0)
    assert [record.event(copied, 0, i) for i in range(126)] == written


@pytest.mark.parametrize(("players", "text"), [(2, "blocker,greedy"), (4, "partner,random"),
                                               (3, "blocker,heavy,greedy")])
def test_earlier_views_rebuilt_from_the_record_are_the_engines(players: int, text: str) -> None:
    """Each earlier choice ``past_decisions`` returns is the engine's view then, hand aside."""
    compared = 0
    for game_id in range(2):
        for placements in round_views(players, text, 5, game_id):
            by_count = {int(p[0][view.RECORD]): p for p in placements}
            for observation, state, seat, _, _ in placements:
                views, moves, placed_since, count = compiled_inference.past_decisions(observation)
                expected = 0
                for index, (kind, other, _) in enumerate(events(observation)):
                    later = events(observation)[index:] + [(-1, -1, -1)]
                    drew_since = any(  # a drawn tile kept, not placed at once
                        k == record.DRAW and s == other and later[i + 1][0] != record.PLACE_FORCED
                        for i, (k, s, _) in enumerate(later[:-1]))
                    opponent = other % 2 != seat % 2 if players == 4 else other != seat
                    if kind == record.PLACE_CHOSEN and opponent and not drew_since:
                        expected += 1
                assert count == expected
                for d in range(count):
                    then, then_state, then_seat, forced, move = by_count[int(views[d, view.RECORD])]
                    assert not forced and then_seat == views[d, view.SEAT] and moves[d] == move
                    wanted = then.copy()
                    wanted[view.HAND] = 0
                    assert np.array_equal(views[d, :view.RECORD], wanted[:view.RECORD])
                    assert events(views[d]) == events(then)
                    # Its hand then: its hand now plus what it placed since.
                    now = int(state[engine.HANDS + then_seat])
                    assert now | int(placed_since[d]) == then_state[engine.HANDS + then_seat]
                    compared += 1
    assert compared > 50


@pytest.mark.parametrize(("players", "model"), [(2, "blocker"), (4, "partner")])
def test_the_true_deal_explains_every_choice_of_the_model(players: int, model: str) -> None:
    """Players who are the model: the real hands agree with every usable choice."""
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    rng = np.array([1], dtype=np.uint64)
    checked = 0
    for game_id in range(3):
        for placements in round_views(players, f"{model},{model}", 8, game_id):
            for observation, state, _, _, _ in placements:
                views, moves, placed_since, count = compiled_inference.past_decisions(observation)
                tables = compiled_inference.level_tables(views, count)
                assert compiled_inference.explains_choices(state, views, moves, placed_since, count,
                                                  MODEL[model], 1.0, buffer, tables, rng)
                checked += count
    assert checked > 100


@pytest.mark.parametrize(("players", "text"), [(2, "blocker,greedy"), (4, "partner,random")])
def test_the_level_tables_give_the_models_own_choices(players: int, text: str) -> None:
    """The model asked with the precomputed level tables picks exactly what it picks
    without them, on every usable earlier decision, for hands drawn at random."""
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    rng = np.array([3], dtype=np.uint64)
    compared = differing_picks = 0
    for game_id in range(2):
        for placements in round_views(players, text, 13, game_id):
            for observation, *_ in placements[::3]:
                views, moves, placed_since, count = compiled_inference.past_decisions(observation)
                tables = compiled_inference.level_tables(views, count)
                plan, counts = compiled_det.prepare(observation)
                deal = np.zeros(engine.STATE_SIZE, dtype=np.int64)
                for _ in range(5):
                    compiled_det.sample_deal(observation, plan, counts, deal, rng)
                    for d in range(count):
                        row = views[d].copy()
                        row[view.HAND] = deal[engine.HANDS + row[view.SEAT]] | placed_since[d]
                        n_moves = compiled_legal_moves(int(row[view.LAYOUT]), int(row[view.HAND]),
                                              buffer)
                        if n_moves < 2:
                            continue
                        for model in MODEL.values():
                            plain = compiled_inference.model_choice(model, row, buffer, n_moves)
                            assert plain == compiled_inference.model_choice(
                                model, row, buffer, n_moves, tables[d])
                            differing_picks += plain != compiled_inference.model_choice(
                                3 - model, row, buffer, n_moves)
                        compared += 1
                        buffer[:] = engine.NO_MOVE
    assert compared > 200 and differing_picks > 0


def test_other_players_choices_are_not_all_explained() -> None:
    """The check has power: greedy players often choose what blocker would not."""
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    rng = np.array([1], dtype=np.uint64)
    rejected = 0
    for placements in round_views(2, "greedy,greedy", 8, 0):
        for observation, state, _, _, _ in placements:
            views, moves, placed_since, count = compiled_inference.past_decisions(observation)
            rejected += not compiled_inference.explains_choices(
                state, views, moves, placed_since, count, inference.MODEL_BLOCKER, 1.0,
                buffer, compiled_inference.level_tables(views, count), rng)
    assert rejected > 3


def opponent_hands(observation: np.ndarray) -> list[int]:
    """Every hand of the 2-player opponent that agrees with its size and lacks."""
    other = 1 - int(observation[view.SEAT])
    unseen = [t for t in range(28)
              if (ALL_TILES & ~(observation[view.HAND] | observation[view.PLAYED])) >> t & 1]
    banned = tiles_with_values(int(observation[view.LACKS + other]))
    size = int(observation[view.HAND_SIZE + other])
    return [sum(1 << t for t in hand) for hand in itertools.combinations(unseen, size)
            if sum(1 << t for t in hand) & banned == 0]


def likelihoods(observation: np.ndarray, hands: list[int], strength: float) -> list[float]:
    """``(1 - strength) ** disagreements`` of each hand, by asking the model directly
    (without the level tables the sampler uses)."""
    views, moves, placed_since, count = compiled_inference.past_decisions(observation)
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    weights = []
    for hand in hands:
        misses = sum(not compiled_inference.model_agrees(views[d], hand | int(placed_since[d]),
                                                int(moves[d]), inference.MODEL_BLOCKER,
                                                buffer) for d in range(count))
        weights.append((1.0 - strength) ** misses)
    return weights


def test_inferred_deals_follow_the_likelihood_of_the_choices() -> None:
    """Chi-square of the drawn opponent hands against the enumerated weighted distribution."""
    strength = 0.6
    position = None
    for game_id in range(6):
        for placements in round_views(2, "blocker,blocker", 3, game_id):
            for observation, *_ in placements:
                hands = opponent_hands(observation)
                if 15 <= len(hands) <= 150:
                    weights = likelihoods(observation, hands, strength)
                    if len(set(weights)) >= 3:
                        position = observation, hands, weights
        if position:
            break
    assert position, "no small position with informative choices in the traced games"
    observation, hands, weights = position
    other = 1 - int(observation[view.SEAT])
    plan, counts = compiled_det.prepare(observation)
    share = np.array(weights) / sum(weights)
    n_deals = int(60 / share.min()) if share.min() > 0 else 20000
    n_deals = min(max(n_deals, 40 * len(hands)), 60000)
    rng = np.array([17], dtype=np.uint64)
    deals = compiled_inference.inferred_deals(observation, plan, counts, n_deals, 10_000, strength,
                                     inference.MODEL_BLOCKER, rng)
    drawn = Counter(int(deal[engine.HANDS + other]) for deal in deals)
    assert set(drawn) <= set(hands)
    observed = [drawn[hand] for hand in hands]
    expected = share * n_deals
    chi = sum((o - e) ** 2 / e for o, e in zip(observed, expected))
    df = len(hands) - 1
    z = ((chi / df) ** (1 / 3) - (1 - 2 / (9 * df))) / np.sqrt(2 / (9 * df))
    assert z < 3.1, f"deals do not follow the likelihood: chi-square z = {z:.2f}"
    # Power: the uniform draw of the same number of deals fails the same test.
    uniform = [int(n_deals / len(hands))] * len(hands)
    chi_uniform = sum((o - e) ** 2 / e for o, e in zip(uniform, expected))
    assert chi_uniform > chi + 100
    assert chi_square_z(observed, n_deals / len(hands)) > 5  # and they are not uniform


@pytest.mark.parametrize(("players", "text"), [(2, "greedy,random"), (3, "random,greedy,heavy"),
                                               (4, "random,greedy")])
def test_the_draw_history_never_rules_out_the_true_hands_and_does_rule_out(
        players: int, text: str) -> None:
    """Real hands always pass; hands drawn from the lacks alone sometimes do not."""
    rng = np.array([5], dtype=np.uint64)
    checked = ruled_out = 0
    for game_id in range(4):
        for placements in round_views(players, text, 21, game_id):
            for observation, state, seat, _, _ in placements:
                runs, forbidden, kept = compiled_draws.draw_periods(observation)
                # The other seats' hands (the deciding seat may hold a tile it is drawing).
                for other in set(range(players)) - {seat}:
                    assert compiled_draws.hand_fits_draws(
                        int(state[engine.HANDS + other]), runs[other], forbidden[other],
                        kept[other])
                checked += 1
                if runs.max() >= 2:
                    plan, counts = compiled_det.prepare(observation)
                    deal = np.zeros_like(state)
                    for _ in range(20):
                        compiled_det.sample_deal(observation, plan, counts, deal, rng)
                        ruled_out += not compiled_inference.fits_draw_history(
                            deal, observation, runs, forbidden, kept)
    assert checked > 100
    # With 4 players the boneyard (8 tiles) seldom allows two draw runs in these games.
    assert ruled_out > 0 or players == 4


def test_the_draw_history_counts_the_tiles_a_later_draw_could_bring() -> None:
    """Two draw runs: values 6 and 5 open at the first (run 1 kept 1 tile), 5 and 2 at the
    second (kept 2). Tiles showing a 6 (and no 5 or 2) came in run 2 at the earliest: two
    of them fit, three do not; a tile showing a 5 fits in no period."""
    def mask(*values: int) -> int:
        return int(tiles_with_values(sum(1 << v for v in values)))
    forbidden = np.array([mask(6, 5, 2), mask(6, 5, 2), mask(5, 2)] + [0] * 12, dtype=np.int64)
    kept = np.array([0, 1, 2] + [0] * 12, dtype=np.int64)
    sixes = [parse_tile(t) for t in ("0-6", "1-6", "3-6")]
    plain = [parse_tile(t) for t in ("0-0", "1-3", "3-4")]

    def fits(tiles: list[int]) -> bool:
        return compiled_draws.hand_fits_draws(sum(1 << t for t in tiles), 2, forbidden, kept)

    assert fits(plain) and fits(sixes[:2] + plain)
    assert not fits(sixes + plain)
    assert not fits([parse_tile("0-5")] + plain)
    # With no draw this round nothing is ruled out.
    assert compiled_draws.hand_fits_draws(sum(1 << t for t in sixes), 0, forbidden, kept)
