"""The record block of ``learned``'s inputs (feature version 3): what it reads from the
round's public record, that nothing hidden reaches it, that the once-per-decision first
layer gives the bits of the whole forward pass, and that version-1 models still play."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.core import observation as view
from sim.core import record
from sim.core.tiles import tile_id
from sim.errors import SniffError
from strategies import parse_spec
from strategies.learned.features import N_BASE_INPUTS
from strategies.learned.net import (
    MAX_WIDTH,
    ModelError,
    load_model,
    read_layers,
    save_model,
)
from strategies.learned.player import shipped_path
from strategies.learned.record_inputs import (
    MAX_INPUTS,
    RECORD_START,
    RECORD_STRIDE,
    inputs_for,
)
from tests.helpers.cli import sniff
from tests.helpers.compiled_functions import cached
from tests.helpers.learned import decisions, tiny
from tests.helpers.views import redealt_views, view_of

# the network's @njit functions through cached wrappers: compiled once per machine, not in
# every test process (tests/helpers/compiled_functions.py)
first_layer_partial = cached("strategies.learned.net.first_layer_partial")
forward = cached("strategies.learned.net.forward")
forward_from = cached("strategies.learned.net.forward_from")
learned_choice = cached("strategies.learned.player.learned_choice")
encode_record = cached("strategies.learned.record_inputs.encode_record")

PLACED, PASSED_UP = 0, 28


def two_player_view(hand: list[tuple[int, int]], played: list[tuple[int, int]]) -> np.ndarray:
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    observation[view.PLAYERS] = 2
    observation[view.TARGET] = 250
    for tile in hand:
        observation[view.HAND] |= 1 << tile_id(*tile)
    for tile in played:
        observation[view.PLAYED] |= 1 << tile_id(*tile)
    return observation


def block(observation: np.ndarray, seat: int = 1) -> np.ndarray:
    out = np.full(MAX_INPUTS, 9.0)
    encode_record(observation, out)
    start = RECORD_START + RECORD_STRIDE * (seat - 1)
    assert np.all(out[:N_BASE_INPUTS] == 9.0), "the record block writes only its own inputs"
    return out[start:start + RECORD_STRIDE]


def test_the_block_reads_who_placed_what_and_the_scoring_plays_passed_up() -> None:
    # Seat 1 led 3-2 (5 points); 5-5 and 6-4 would have counted 10. The mover holds 6-4,
    # so only 5-5 is an unseen tile seat 1 passed up.
    observation = two_player_view(hand=[(6, 4), (1, 1)], played=[(3, 2)])
    record.clear(observation, view.RECORD)
    record.append(observation, view.RECORD, record.PLACE_CHOSEN, 1, tile_id(3, 2) * 4)
    seen = block(observation)
    assert seen[PLACED + tile_id(3, 2)] == 1.0
    assert seen[PASSED_UP + tile_id(5, 5)] == 0.5
    assert np.count_nonzero(seen) == 2

    # A draw it keeps may have brought the tile: its implied lacks start again; what it
    # placed stays.
    record.append(observation, view.RECORD, record.DRAW, 1, 0)
    seen = block(observation)
    assert seen[PLACED + tile_id(3, 2)] == 1.0 and np.count_nonzero(seen) == 1


def test_the_movers_own_choices_and_forced_placements_are_not_read() -> None:
    observation = two_player_view(hand=[(1, 1)], played=[(3, 2), (2, 2)])
    record.clear(observation, view.RECORD)
    record.append(observation, view.RECORD, record.PLACE_CHOSEN, 0, tile_id(3, 2) * 4)
    record.append(observation, view.RECORD, record.PLACE_FORCED, 1, tile_id(2, 2) * 4 + 1)
    assert np.count_nonzero(block(observation)) == 0


def test_a_tile_passed_up_at_two_choices_counts_fully() -> None:
    """Seat 1 led 0-0 and, after the mover's 5-0, placed 5-1 on the 5, both for no points:
    5-5 would have scored at both choices and reads 1, a tile that would have scored at
    one of them 0.5 (the tables' points from ``sim.core.layout``, the counting here)."""
    from sim.core.layout import EMPTY_LAYOUT, count_ends, place_tile, points_for_count
    from strategies.heuristics.features import tile_best_points

    events = [(1, (0, 0), 0), (0, (5, 0), 0), (1, (5, 1), 0)]
    hand = [(6, 6), (4, 4)]
    observation = two_player_view(hand=hand, played=[tile for _, tile, _ in events])
    record.clear(observation, view.RECORD)
    layout, counts = EMPTY_LAYOUT, np.zeros(28, dtype=int)
    unseen = [t for t in range(28) if not (observation[view.HAND] | observation[view.PLAYED])
              >> t & 1]
    for seat, tile, arm in events:
        t = tile_id(*tile)
        record.append(observation, view.RECORD, record.PLACE_CHOSEN, seat, t * 4 + arm)
        after = place_tile(layout, t, arm)
        if seat == 1:
            chosen = points_for_count(count_ends(after))
            for u in unseen:
                best = (points_for_count(count_ends(place_tile(layout, u, 0)))
                        if layout == EMPTY_LAYOUT else tile_best_points(layout, u))
                counts[u] += best > chosen
        layout = after
    seen = block(observation)
    assert counts[tile_id(5, 5)] == 2 and (counts == 1).any()
    np.testing.assert_array_equal(seen[PASSED_UP:], np.minimum(counts, 2) / 2)
    assert {t for t in range(28) if seen[PLACED + t]} == {tile_id(0, 0), tile_id(5, 1)}


@pytest.mark.parametrize(("players", "text"), [
    (2, "learned,blocker"), (3, "learned,blocker,blocker"), (4, "learned,partner")])
def test_the_block_sees_nothing_hidden(players: int, text: str) -> None:
    """At real decisions of traced games, re-dealing the other hands and the boneyard
    consistently with everything public leaves the record block as it was; seats past the
    table's stay zero."""
    rng = np.array([77], dtype=np.uint64)
    x, y = np.zeros(MAX_INPUTS), np.zeros(MAX_INPUTS)
    checked = nonzero = 0
    for game_id in range(2):
        for state, seat, forced, move in decisions(players, text, game_id):
            observation, _, n_moves = view_of(state, seat, forced, move)
            encode_record(observation, x)
            nonzero += np.count_nonzero(x[RECORD_START + RECORD_STRIDE:]) if players == 2 \
                else 0
            for again, *_ in redealt_views(state, seat, forced, move, players, observation,
                                           rng, 2):
                encode_record(again, y)
                np.testing.assert_array_equal(x, y)
            checked += 1
    assert checked > 20 and nonzero == 0


def random_network(players: int, hidden=(16, 8), seed: int = 0):
    rng = np.random.default_rng(seed)
    widths = (inputs_for(3, players), *hidden, 1)
    coefs = [rng.normal(scale=0.3, size=(a, b)) for a, b in zip(widths, widths[1:])]
    intercepts = [rng.normal(scale=0.1, size=b) for b in widths[1:]]
    return coefs, intercepts


def test_the_first_layer_once_per_decision_gives_the_bits_of_the_whole_pass(
        tmp_path: Path) -> None:
    save_model(tmp_path / "m.npz", *random_network(3), players=3)
    weights, sizes = load_model(tmp_path / "m.npz", 3)
    assert sizes[0] == inputs_for(3, 3) == N_BASE_INPUTS + 2 * RECORD_STRIDE
    rng = np.random.default_rng(1)
    scratch, partial = np.zeros((2, MAX_WIDTH)), np.zeros(MAX_WIDTH)
    coefs, intercepts = read_layers(tmp_path / "m.npz", 3)
    for _ in range(50):
        x = np.zeros(MAX_INPUTS)
        x[:sizes[0]] = rng.random(sizes[0]) * (rng.random(sizes[0]) < 0.3)
        whole = forward(x, weights, sizes, scratch)
        first_layer_partial(x, weights, sizes, partial)
        assert forward_from(x, weights, sizes, scratch, partial) == whole
        hidden = x[:sizes[0]]
        for weight, bias in zip(coefs[:-1], intercepts[:-1]):
            hidden = np.maximum(hidden @ weight + bias, 0.0)
        assert abs(whole - (hidden @ coefs[-1] + intercepts[-1])[0]) < 1e-10


def test_a_version_3_model_plays_the_move_its_whole_inputs_value_highest(
        tmp_path: Path) -> None:
    from strategies.learned.features import encode

    save_model(tmp_path / "m.npz", *random_network(2, seed=4), players=2)
    weights, sizes = load_model(tmp_path / "m.npz", 2)
    scratch = np.zeros((2, MAX_WIDTH))
    checked = 0
    for state, seat, forced, move in decisions(2, "blocker,partner", 3):
        observation, moves, n_moves = view_of(state, seat, forced, move)
        if n_moves < 2 or observation[view.RECORD] == 0:
            continue
        x = np.zeros(MAX_INPUTS)
        encode_record(observation, x)
        values = []
        for index in range(n_moves):
            encode(observation, moves[index], x)
            values.append(forward(x, weights, sizes, scratch))
        team = view.team_of(seat, 2)
        needed = observation[view.TARGET] - observation[view.SCORE + team]
        from sim.core.layout import move_points
        if any(move_points(observation[view.LAYOUT], moves[i]) >= needed
               for i in range(n_moves)):
            continue
        assert learned_choice(observation, moves, n_moves, weights, sizes) == int(
            np.argmax(values))
        checked += 1
    assert checked > 5


def test_model_files_of_each_version_and_width(tmp_path: Path) -> None:
    for players in (2, 3, 4):
        coefs, _ = read_layers(shipped_path(players), players)
        assert coefs[0].shape[0] in (N_BASE_INPUTS, inputs_for(3, players))
    coefs, intercepts = random_network(2)
    save_model(tmp_path / "v3.npz", coefs, intercepts, players=2)
    with np.load(tmp_path / "v3.npz") as data:
        assert int(data["feature_version"]) == 3
    with pytest.raises(ModelError, match="is a model for 2 players, not 4"):
        read_layers(tmp_path / "v3.npz", 4)
    wrong = [coefs[0][:150], *coefs[1:]]
    save_model(tmp_path / "short.npz", wrong, intercepts, players=2)
    with pytest.raises(ModelError, match="need W0: 163 inputs"):
        read_layers(tmp_path / "short.npz", 2)  # 150 rows read as version 3: 163 wanted
    arrays = dict(np.load(tmp_path / "v3.npz"))
    arrays["feature_version"] = np.array(2)
    np.savez(tmp_path / "v2.npz", **arrays)
    with pytest.raises(ModelError, match="feature version 2; this sniff reads versions 1 "
                                         "and 3: train it again"):
        read_layers(tmp_path / "v2.npz", 2)
    spec = parse_spec(f"learned:model={tmp_path / 'v3.npz'}")
    assert spec.strategy.players == (2,)


def test_training_on_version_1_inputs_still_runs_and_resumes(tmp_path: Path) -> None:
    from sim.learn.training import learn

    folder = tmp_path / "v1"
    learn(tiny(iterations=1, feature_version=1), folder)
    assert read_layers(folder / "model.npz", 2)[0][0].shape[0] == N_BASE_INPUTS
    learn(tiny(iterations=2), folder, resume=True, given={"iterations"})
    assert read_layers(folder / "model.npz", 2)[0][0].shape[0] == N_BASE_INPUTS
    with pytest.raises(SniffError, match="feature_version=3 differs from the folder's 1"):
        learn(tiny(iterations=2, feature_version=3), folder, resume=True,
              given={"feature_version"})
    completed = sniff("learn", "--out", str(tmp_path / "x"), "--feature-version", "2")
    assert completed.returncode == 2 and completed.stderr.count("\n") == 1
    assert "--feature-version must be 1 or 3, got 2" in completed.stderr
