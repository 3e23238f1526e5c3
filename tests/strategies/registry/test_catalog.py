"""Strategies: the registry and its errors, plugins, the public view, and playing strength.

Every batch here plays in the game loop compiled once; each strategy is compiled on its own,
once for the suite.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import strategies
from sim.core import engine
from sim.core import observation as view
from sim.core.layout import ARM_L, ARM_R
from sim.core.tiles import ALL_TILES, PIP_MASK, parse_tile
from sim.kernels import generate as kernels
from sim.kernels.runner import lineup_of, play_batch, winning_side
from sim.run.plan import rotation_for
from sim.stats.intervals import Z99, wilson_interval
from strategies import StrategyError, parse_lineup_text, parse_spec
from tests.helpers import ROOT, TESTS
from tests.helpers.cli import sniff, sniff_here
from tests.helpers.compiled_functions import CachedModule, cached
from tests.helpers.views import decisions, redealt_views, view_of, win_rate

# The compiled functions a test calls from Python, through cached wrappers
# (tests/helpers/compiled_functions.py): compiled once per machine, not in every test process.
feat = CachedModule("strategies.heuristics.features")
deal_hidden = cached("strategies.search.rollout.deal_hidden")
place_tile = cached("sim.core.layout.place_tile")

BUILTINS = (
    "blocker", "defensive", "expert", "greedy", "heavy", "partner", "random", "rollout", "weighted",
)
HEURISTICS = ("greedy", "heavy", "defensive", "blocker", "partner", "weighted", "rollout")
PLUGINS = TESTS / "plugins"


def choose_function(name: str) -> Callable[..., int]:
    """The compiled ``choose`` of a registered strategy, callable from Python through its
    cached wrapper, the one the engine calls (its ``@njit`` function called here would be
    compiled again in every test process)."""
    return kernels.python_choose(strategies.get(name))


# --- registry, parameters, errors


def test_every_builtin_is_registered_with_an_idea() -> None:
    registered = strategies.available()
    assert set(BUILTINS) <= set(registered)
    for name in BUILTINS:
        strategy = registered[name]
        assert strategy.description
        assert len(sys.modules[strategy.module].__doc__.strip()) > 80, name


def test_parameters_fill_defaults_and_parse_back_from_labels() -> None:
    spec = parse_spec("weighted:points=1,shed=0.3,reply=-0.7")
    defaults = strategies.get("weighted").params
    assert spec.values[:3] == (1.0, 0.3, -0.7)
    assert spec.values[3:] == tuple(defaults.values())[3:]
    assert parse_spec(spec.label) == spec
    rollout = parse_spec("rollout:samples=8,base=random")
    assert rollout.values == (8.0, 1.0, 50.0)
    assert rollout.label == "rollout:samples=8,base=random"
    assert parse_spec(rollout.label) == rollout


def test_lineup_text_continues_parameters_after_commas() -> None:
    specs = parse_lineup_text("greedy,weighted:points=1,shed=0.3,reply=-0.7,rollout:samples=4")
    assert [s.strategy.name for s in specs] == ["greedy", "weighted", "rollout"]
    assert specs[1].values[:3] == (1.0, 0.3, -0.7)
    assert specs[2].values[0] == 4.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("nosuch", "unknown strategy 'nosuch'; available: blocker, defensive, expert, greedy"),
        ("rollout:sample=3", "accepted (with defaults): samples=32, base=greedy "
                             "(greedy|random|heavy), win=50"),
        ("heavy:x=1", "strategy 'heavy'; it takes no parameters"),
        ("defensive:risk", "bad parameter 'risk' for strategy 'defensive'; "
                           "accepted (with defaults): risk=1, shed=0.1"),
        ("defensive:risk=high", "'risk' of strategy 'defensive' must be a finite number"),
        ("defensive:risk=nan", "must be a finite number, got 'nan'"),
        # #63 (scripts/campaign.py): accepted, and a weight times a feature was infinite
        ("weighted:points=1e308", "'points' of strategy 'weighted' must be at most 1e+100"),
        ("weighted:reply=-1e101", "must be at most 1e+100 in size"),
        ("rollout:base=minimax", "'base' of strategy 'rollout' must be one of greedy, random, "
                                 "heavy, got 'minimax'"),
    ],
)
def test_bad_names_and_parameters_say_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(StrategyError) as error:
        parse_spec(text)
    assert message in str(error.value)


def test_bad_parameter_is_one_line_from_the_command_line() -> None:
    completed = sniff_here("trace", "--players", "2", "--strategies", "weighted:point=1,random")
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1
    assert completed.stderr.startswith("sniff: error: bad parameter 'point=1'")
    assert "points=1, shed=0.2" in completed.stderr


def test_sniff_strategies_lists_names_ideas_and_parameters() -> None:
    from sim.cli.main import cli

    result = CliRunner().invoke(cli, ["strategies"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name, strategy in strategies.available().items():
        at = next(i for i, line in enumerate(lines) if line.split()[0] == name)
        assert lines[at].endswith(strategy.description)
        assert lines[at + 1].strip() == f"params: {strategy.describe_params()}"
    assert "params: samples=32, base=greedy (greedy|random|heavy), win=50" in result.output


# --- plugins


@pytest.fixture
def plugin(monkeypatch: pytest.MonkeyPatch) -> Iterator[strategies.Strategy]:
    """Register tests/plugins/my_strategy.py; the registry is restored afterwards."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    with strategies.kept_registry():
        strategies.load_plugin("my_strategy")
        yield strategies.get("doubles_first")


def test_plugin_strategy_from_outside_the_package_plays_in_the_kernel(plugin) -> None:
    assert plugin.module == "my_strategy"
    assert "doubles_first" in strategies.available()
    players, games = 2, 200
    lineup = lineup_of(players, parse_lineup_text("doubles_first:double_bonus=8,random"))
    game_ids = np.arange(games, dtype=np.int64)
    result = play_batch(lineup, 3, game_ids, rotations=rotation_for(game_ids, players))
    wins = int((winning_side(result, players) == 0).sum())
    assert wilson_interval(wins, games, Z99)[0] > 0.5


def plugin_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PLUGINS), env.get("PYTHONPATH")]))
    env.pop("SNIFF_PLUGINS", None)
    env.update(extra)
    return env


def test_plugin_option_and_environment_reach_the_commands(tmp_path: Path) -> None:
    """``--plugin`` and ``SNIFF_PLUGINS`` both make a plugin playable from ``sniff``.

    ``simulate`` reuses the kernel the test above compiled (same strategies, same cache).
    """
    simulate = ["simulate", "--players", "2", "--strategies", "doubles_first,random",
                "--games", "64", "-q"]
    by_option = sniff("--plugin", "my_strategy", *simulate, "-o", str(tmp_path / "option"),
                      env=plugin_env())
    assert by_option.returncode == 0, by_option.stderr
    assert "seat 0: doubles_first" in by_option.stdout
    by_env = sniff(*simulate, "-o", str(tmp_path / "env"),
                   env=plugin_env(SNIFF_PLUGINS="my_strategy"))
    assert by_env.returncode == 0, by_env.stderr
    def results(output: str) -> list[str]:
        return [line for line in output.splitlines() if " wins " in line]

    assert len(results(by_env.stdout)) == 2
    assert results(by_env.stdout) == results(by_option.stdout)  # same games either way

    listing = sniff("strategies", env=plugin_env(SNIFF_PLUGINS="my_strategy"))
    assert listing.returncode == 0, listing.stderr
    assert "doubles_first" in listing.stdout and "double_bonus=8" in listing.stdout

    missing = sniff("--plugin", "no_such_plugin", "strategies", env=plugin_env())
    assert missing.returncode == 2
    assert "cannot import strategy module 'no_such_plugin'" in missing.stderr
    assert "PYTHONPATH" in missing.stderr


def test_readme_example_is_the_plugin_file() -> None:
    readme = (ROOT / "docs" / "strategies.md").read_text()
    assert (PLUGINS / "my_strategy.py").read_text().strip() in readme


# --- public inferences


def test_expected_best_reply_and_stuck_probability_match_enumeration() -> None:
    layout = 0
    for text, arm in (("3-5", ARM_L), ("5-5", ARM_R), ("5-0", ARM_R), ("3-4", ARM_L)):
        layout = place_tile(layout, parse_tile(text), arm)
    candidates = 0
    for text in ("0-0", "0-5", "4-4", "4-6", "2-4", "1-5", "5-6", "2-3", "1-1"):
        candidates |= 1 << parse_tile(text)
    tiles = [t for t in range(28) if candidates >> t & 1]
    stuck_rates = []
    for hand_size in (1, 2, 3, 5):
        hands = list(itertools.combinations(tiles, hand_size))
        best = [max(feat.tile_best_points(layout, t) for t in hand) for hand in hands]
        stuck = [
            all(feat.playable_tiles(layout, 1 << t) == 0 for t in hand) for hand in hands
        ]
        assert feat.expected_best_reply(layout, candidates, hand_size) == pytest.approx(
            np.mean(best)
        )
        # With the level table of the layout (all unplayed tiles): exactly the same.
        levels = np.zeros(28, dtype=np.int8)
        feat.fill_levels(layout, ALL_TILES, levels)
        assert feat.expected_best_reply(layout, candidates, hand_size, levels) == (
            feat.expected_best_reply(layout, candidates, hand_size))
        assert feat.stuck_probability(layout, candidates, hand_size) == pytest.approx(
            np.mean(stuck)
        )
        stuck_rates.append(np.mean(stuck))
    assert max(best) > 0 and 0 < max(stuck_rates) < 1  # the case is not degenerate


def test_possible_tiles_drop_the_values_a_seat_lacks() -> None:
    observation = np.zeros(view.OBSERVATION_SIZE, dtype=np.int64)
    observation[view.HAND] = 1 << parse_tile("6-6")
    observation[view.PLAYED] = 1 << parse_tile("0-1")
    observation[view.LACKS + 1] = (1 << 2) | (1 << 5)
    unseen = ALL_TILES & ~((1 << parse_tile("6-6")) | (1 << parse_tile("0-1")))
    assert feat.unseen_tiles(observation) == unseen
    assert feat.possible_tiles(observation, 1) == unseen & ~(PIP_MASK[2] | PIP_MASK[5])
    assert feat.possible_tiles(observation, 2) == unseen
    assert feat.partner_of(1, 4) == 3 and feat.partner_of(1, 2) == -1


# --- the public view: reconstructed decisions and consistent re-deals


@pytest.mark.parametrize(
    ("players", "text"),
    [(2, "defensive,weighted"), (4, "blocker,partner"), (3, "heavy,greedy,blocker")],
)
def test_choices_depend_only_on_the_public_view(players: int, text: str) -> None:
    """Re-deal the hidden tiles consistently with the public record: nothing changes.

    At every real decision of traced games, the strategy that made it is asked again from
    the rebuilt state (it must repeat the traced move: the rebuild is faithful), then the
    other hands and the boneyard are re-dealt several ways that agree with everything
    public (hand sizes, known lacks). The engine's view of each re-deal is identical, and
    every built-in strategy, the sampling of rollout and expert included, makes the same
    choice.
    """
    lineup = lineup_of(players, parse_lineup_text(text)).seats
    functions = {name: choose_function(name) for name in BUILTINS}
    params = {
        name: np.array(list(strategies.get(name).params.values()) or [0.0]) for name in BUILTINS
    }
    params["rollout"] = np.array([8.0, 0.0, 50.0])  # few samples: the choice, not strength
    # Blocker play-outs, the prior, and the inference from the record (a strong one).
    params["expert"] = np.array([24.0, 1.0, 1.0, 0.0, 0.02, 4.0, 0.9, 8.0])
    redeal_rng = np.array([12345], dtype=np.uint64)
    checked = changed = 0
    for game_id in range(2):
        for state, seat, forced, move in decisions(players, text, 11, game_id):
            observation, moves, n_moves = view_of(state, seat, forced, move)
            if n_moves < 2:
                continue  # the engine does not ask
            spec = lineup[seat]  # traces do not rotate: seat s plays lineup seat s
            played = functions[spec.strategy.name](
                observation, moves, n_moves, np.array(spec.values or (0.0,)),
                np.array([1], dtype=np.uint64),
            )
            assert moves[played] == move
            for again, moves_again, n_again, hidden_changed in redealt_views(
                    state, seat, forced, move, players, observation, redeal_rng, 3):
                np.testing.assert_array_equal(moves_again[:n_again], moves[:n_moves])
                changed += hidden_changed
                for name, function in functions.items():
                    first = function(
                        observation, moves, n_moves, params[name], np.array([99], np.uint64)
                    )
                    second = function(
                        again, moves_again, n_again, params[name], np.array([99], np.uint64)
                    )
                    assert first == second, name
            checked += 1
    assert checked > 20 and changed > 2 * checked


def test_redeals_agree_with_everything_public() -> None:
    rng = np.array([7], dtype=np.uint64)
    seen_boneyards = set()
    for state, seat, forced, move in itertools.islice(decisions(4, "random,greedy", 5, 0), 40):
        observation, _, _ = view_of(state, seat, forced, move)
        for _ in range(20):
            other = np.zeros_like(state)
            assert deal_hidden(observation, other, rng)
            hands = other[engine.HANDS:engine.HANDS + 4]
            position = int(other[engine.BONEYARD_POS])
            boneyard = 0
            for tile in other[engine.DECK + position:engine.DECK + 28]:
                boneyard |= 1 << int(tile)
            assert hands[seat] == state[engine.HANDS + seat]
            assert 28 - position == 28 - state[engine.BONEYARD_POS]
            everything = boneyard | int(other[engine.PLAYED])
            for s in range(4):
                assert bin(int(hands[s])).count("1") == bin(
                    int(state[engine.HANDS + s])).count("1")
                lacks = int(state[engine.LACKS + s])
                assert hands[s] & feat.tiles_with_values(lacks) == 0 or s == seat
                assert everything & hands[s] == 0
                everything |= int(hands[s])
            assert everything == ALL_TILES
            seen_boneyards.add(boneyard)
    assert len(seen_boneyards) > 100


# --- playing strength (each batch is reproducible: fixed seeds, fixed game ids)


@pytest.mark.parametrize("players", [2, 4])
@pytest.mark.parametrize("name", HEURISTICS)
def test_every_heuristic_beats_random(name: str, players: int) -> None:
    games = 60 if name == "rollout" else 200
    low, high, wins = win_rate(players, f"{name},random", games, seed=2024)
    assert low > 0.5, f"{name} won {wins}/{games}: 99% interval [{low:.3f}, {high:.3f}]"


@pytest.mark.parametrize(("players", "games"), [(2, 200), (4, 400)])
def test_rollout_beats_greedy(players: int, games: int) -> None:
    low, high, wins = win_rate(players, "rollout,greedy", games, seed=2024)
    assert low > 0.5, f"rollout won {wins}/{games}: 99% interval [{low:.3f}, {high:.3f}]"
