"""``learned`` and ``sniff learn``: the compiled forward pass equals scikit-learn's, the
strategy reads only the public view, bad model files and options are one line, and
training on a tiny budget runs end to end, resumes, and is reproducible by its seed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from sim.errors import SniffError
from sim.kernels.runner import lineup_of, play_batch, winning_side
from strategies import StrategyError, parse_lineup_text, parse_spec
from strategies.learned.features import N_BASE_INPUTS as N_INPUTS
from strategies.learned.net import (
    MAX_WIDTH,
    ModelError,
    load_model,
    pack,
    read_layers,
    save_model,
)
from strategies.learned.player import shipped_path
from strategies.learned.record_inputs import inputs_for
from tests.helpers import compiled_strategies as compiled
from tests.helpers.cli import sniff
from tests.helpers.compiled_functions import cached
from tests.helpers.learned import decisions
from tests.helpers.views import redealt_views, view_of

sklearn = pytest.importorskip("sklearn.neural_network")
# the network's @njit functions through cached wrappers: compiled once per machine, not in
# every test process (tests/helpers/compiled_functions.py)
forward = cached("strategies.learned.net.forward")
learned_choice = cached("strategies.learned.player.learned_choice")


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("hidden", [(16,), (24, 12), (8, 8, 8)])
def test_forward_pass_equals_scikit_learn(hidden, dtype, tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, N_INPUTS)).astype(dtype)
    x[x < 0.3] = 0.0  # sparse, like the bits of a hand
    y = rng.random(400)
    model = sklearn.MLPRegressor(hidden_layer_sizes=hidden, random_state=0, max_iter=30)
    model.fit(x, y)
    save_model(tmp_path / "m.npz", model.coefs_, model.intercepts_, players=3)
    weights, sizes = load_model(tmp_path / "m.npz", 3)
    np.testing.assert_array_equal(weights, pack(model.coefs_, model.intercepts_)[0])
    scratch = np.zeros((2, MAX_WIDTH))
    ours = np.array([forward(row.astype(np.float64), weights, sizes, scratch) for row in x])
    # float64 networks agree to rounding; a float32 one (scikit-learn keeps the data's
    # dtype) to float32's precision.
    tolerance = 1e-10 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(ours, model.predict(x), rtol=tolerance, atol=tolerance)


def test_shipped_models_load_for_their_player_counts() -> None:
    for players in (2, 3, 4):
        coefs, _ = read_layers(shipped_path(players), players)
        assert coefs[0].shape[0] in (N_INPUTS, inputs_for(3, players)) and coefs[-1].shape[1] == 1
        with pytest.raises(ModelError, match=f"is a model for {players} players, not"):
            read_layers(shipped_path(players), 2 if players != 2 else 3)


@pytest.mark.parametrize(("players", "text"), [(2, "learned,blocker"), (4, "learned,partner"),
                                               (3, "learned,blocker,learned")])
def test_learned_sees_nothing_hidden(players: int, text: str) -> None:
    """At real decisions of traced games, learned repeats its traced move from the rebuilt
    view; re-dealing the other hands and the boneyard consistently with everything public
    changes neither its inputs nor its choice."""
    lineup = lineup_of(players, parse_lineup_text(text)).seats
    rng = np.array([4242], dtype=np.uint64)
    no_params = np.zeros(1)
    checked = changed = 0
    x, y = np.zeros(N_INPUTS), np.zeros(N_INPUTS)
    for game_id in range(2):
        for state, seat, forced, move in decisions(players, text, game_id):
            observation, moves, n_moves = view_of(state, seat, forced, move)
            if n_moves < 2 or lineup[seat].strategy.name != "learned":
                continue
            chosen = compiled.choose_learned(observation, moves, n_moves, no_params,
                                             np.array([1], np.uint64))
            assert moves[chosen] == move
            for again, moves_again, n_again, hidden_changed in redealt_views(
                    state, seat, forced, move, players, observation, rng, 3):
                changed += hidden_changed
                for index in range(n_moves):
                    compiled.encode(observation, moves[index], x)
                    compiled.encode(again, moves_again[index], y)
                    np.testing.assert_array_equal(x, y)
                assert compiled.choose_learned(again, moves_again, n_again, no_params,
                                               np.array([1], np.uint64)) == chosen
            checked += 1
    assert checked > 10 and changed > checked


def test_learned_plays_in_the_engine_and_beats_random() -> None:
    for players in (2, 3, 4):
        lineup = lineup_of(players, parse_lineup_text(
            "learned,random,random" if players == 3 else "learned,random"))
        ids = np.arange(60)
        result = play_batch(lineup, 3, ids, rotations=ids % players)
        assert (winning_side(result, players) == 0).mean() > 0.8


def test_own_model_file_plays_and_bad_files_are_one_line(tmp_path: Path) -> None:
    own = tmp_path / "mine.npz"
    shutil.copy(shipped_path(2), own)
    spec = parse_spec(f"learned:model={own}")
    assert spec.label == f"learned:model={own}" and spec.strategy.players == (2,)
    with pytest.raises(SniffError, match="plays only with 2 players, not 4"):
        lineup_of(4, [spec, parse_spec("partner")])
    (tmp_path / "corrupt.npz").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "text.npz").write_text("hello")
    cases = {
        f"learned:model={tmp_path / 'none.npz'}": "does not exist",
        f"learned:model={tmp_path / 'corrupt.npz'}": "is not an .npz model",
        f"learned:model={tmp_path / 'text.npz'}": "is not an .npz model",
        f"learned:model={tmp_path}": "is a folder",
        "learned:models=x": "accepted: model=PATH",
    }
    for text, message in cases.items():
        with pytest.raises(StrategyError, match=message) as error:
            parse_spec(text)
        assert "\n" not in str(error.value)
    completed = sniff("simulate", "--players", "4", "--strategies",
                      f"learned:model={own},partner", "--games", "10",
                      "--out", str(tmp_path / "run"))
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1
    assert "plays only with 2 players, not 4" in completed.stderr


def test_learned_choice_takes_a_winning_move_first() -> None:
    from sim.core import observation as view

    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    observation[view.PLAYERS] = 2
    observation[view.TARGET] = 250
    observation[view.SCORE] = 245
    observation[view.HAND] = (1 << 0) | (1 << 25)  # 0-0 and 5-5 on an empty table
    observation[view.HAND_SIZE] = 2
    moves = np.array([0, 25 * 4] + [-1] * 62, dtype=np.int64)
    weights, sizes = load_model(shipped_path(2), 2)
    # Opening 5-5 counts 10: 255, the target. A network that values every move alike
    # (the first would win a tie) must still take it.
    assert learned_choice(observation, moves, 2, weights, sizes) == 1
    assert learned_choice(observation, moves, 2, np.zeros(N_INPUTS + 1),
                          np.array([N_INPUTS, 1])) == 1


# --- sniff learn


def test_the_same_model_at_another_path_keeps_its_compiled_wrapper(tmp_path: Path) -> None:
    """A model file's path is not part of its wrapper's name (it was: each copy of a model,
    and each test's temporary folder, compiled the network again); another model's bytes
    are."""
    from sim.kernels.generate import chooser_path

    paths = [tmp_path / "a" / "m.npz", tmp_path / "b" / "other name.npz"]
    for path in paths:
        path.parent.mkdir()
        shutil.copy(shipped_path(2), path)
    wrappers = [chooser_path(parse_spec(f"learned:model={path}").strategy) for path in paths]
    assert wrappers[0] == wrappers[1]
    other = tmp_path / "four.npz"
    shutil.copy(shipped_path(4), other)
    assert chooser_path(parse_spec(f"learned:model={other}").strategy) != wrappers[0]


def test_a_run_of_a_model_file_is_rebuilt_from_its_manifest(tmp_path: Path) -> None:
    """#63: a run played with ``learned:model=m.npz`` could not be replayed (``verify
    --replay``) nor resumed: its manifest names the generated module
    ``sniff_learned_<digest>``, taken for a plugin to import (and ``--plugin`` with it gave
    the same error). The spec is built again from the recorded text, to the same code."""
    from sim.kernels.runner import lineup_code
    from sim.run.plan import Plan, resolve_plan

    own = tmp_path / "mine.npz"
    shutil.copy(shipped_path(2), own)
    plan = resolve_plan({"players": 2, "strategies": f"learned:model={own},random",
                         "games": 100})
    config = json.loads(json.dumps(plan.config()))  # as a manifest holds it
    assert config["modules"][0].startswith("sniff_learned_")
    rebuilt = Plan.from_config(config)
    assert rebuilt.config() == plan.config()
    assert lineup_code(rebuilt.lineup) == lineup_code(plan.lineup)  # what --replay checks
