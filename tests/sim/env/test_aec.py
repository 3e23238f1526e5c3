"""The standard interfaces of sim.env: PettingZoo's and Gymnasium's own checkers, the vector
env, and a probe that no hidden tile reaches an observation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from sim.core.tiles import ALL_TILES
from sim.env.aec import SniffAEC
from sim.env.encoding import BLOCKS, ENCODING_SIZE, HIGH, LOW, OFFSETS, decode_tiles, encode
from sim.env.single import SniffEnv
from sim.env.vector import SniffVectorEnv
from sim.errors import SettingError, SniffError
from sim.kernels.decisions import KIND_FORCED, IllegalMove
from tests.helpers import ROOT


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_and_seed_tests_pass(players):
    with warnings.catch_warnings():  # the checker's advice against dict observations, which
        # PettingZoo's classic games use for their action masks, as this one does
        warnings.filterwarnings("ignore", "Observation is not a NumPy array")
        warnings.filterwarnings("ignore", "Observation space for each agent probably")
        api_test(SniffAEC(players), num_cycles=200)
        seed_test(lambda: SniffAEC(players), num_cycles=200)


def _play_aec(env: SniffAEC, seed: int, rng: np.random.Generator) -> dict[str, float]:
    env.reset(seed=seed)
    totals = dict.fromkeys(env.agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    return totals


@pytest.mark.parametrize("players", [2, 4])
def test_aec_rewards_are_the_game_result_and_the_points(players):
    rng = np.random.default_rng(1)
    env = SniffAEC(players)
    totals = _play_aec(env, 11, rng)
    winner = int(env.batch.winners[0])
    teams = [engine_team(seat, players) for seat in range(players)]
    assert totals == {f"player_{s}": (1.0 if teams[s] == winner else -1.0)
                      for s in range(players)}
    points = SniffAEC(players, rewards="points")
    totals = _play_aec(points, 11, np.random.default_rng(1))
    scores = points.batch.scores[0]
    for seat in range(players):
        own = scores[teams[seat]]
        assert totals[f"player_{seat}"] == pytest.approx(own - scores[1 - teams[seat]])


def engine_team(seat: int, players: int) -> int:
    return seat % 2 if players == 4 else seat


def test_aec_refuses_an_illegal_action_and_a_bad_reward_name():
    env = SniffAEC(2)
    env.reset(seed=3)
    mask = env.observe(env.agent_selection)["action_mask"]
    with pytest.raises(IllegalMove):
        env.step(int(np.flatnonzero(mask == 0)[0]))
    with pytest.raises(SniffError, match="rewards must be one of"):
        SniffAEC(2, rewards="money")


@pytest.mark.parametrize("make", [SniffAEC, SniffEnv,
                                  lambda players=2: SniffVectorEnv(2, players)])
def test_each_environment_refuses_a_bad_player_count_and_a_negative_seed(make):
    with pytest.raises(SettingError) as refused:
        make(players=5)
    assert str(refused.value) == "players must be 2, 3 or 4, got 5"
    with pytest.raises(SettingError) as refused:
        make().reset(seed=-1)
    assert str(refused.value) == "seed must be an integer from 0 to 2**63-1, got -1"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_gymnasium_check_env_passes(players):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning from the checker either
        check_env(SniffEnv(players, "greedy"), skip_render_check=True)


def test_gymnasium_env_plays_its_seat_against_the_named_strategies():
    # Two named strategies in the kernel the other tests here play (greedy's, with random):
    # a third strategy would compile a kernel for this one test.
    env = SniffEnv(3, "greedy,random", rewards="points")
    assert [None if s is None else s.label for s in env.lineup] == [None, "greedy", "random"]
    observation, info = env.reset(seed=5)
    total, done = 0.0, False
    while not done:
        assert observation.shape == (ENCODING_SIZE,)
        assert info["action_mask"].any() and np.array_equal(info["action_mask"],
                                                            env.action_masks())
        observation, reward, done, truncated, info = env.step(
            int(np.flatnonzero(env.action_masks())[-1]))
        assert not truncated and not info["illegal_action"]
        total += reward
    scores = env.batch.scores[0]
    seat = info["seat"]
    others = np.delete(scores, seat)
    assert total == pytest.approx(scores[seat] - others.mean())
    assert not env.action_masks().any()


def test_vector_env_steps_many_games_and_restarts_them():
    env = SniffVectorEnv(64, 2, "greedy")
    observations, info = env.reset(seed=2)
    assert observations.shape == (64, ENCODING_SIZE)
    assert sorted(info["game_id"].tolist()) == list(range(64))
    rng = np.random.default_rng(0)
    finished, rewards = 0, []
    while finished < 100:
        masks = env.action_masks()
        assert masks.any(axis=1).all()
        picks = (rng.random(64)[:, None] * masks.sum(axis=1, keepdims=True)).astype(int)
        actions = np.array([np.flatnonzero(m)[p] for m, p in zip(masks, picks[:, 0])])
        observations, reward, terminated, truncated, info = env.step(actions)
        assert observations.shape == (64, ENCODING_SIZE) and not truncated.any()
        assert LOW <= observations.min() and observations.max() <= HIGH
        assert not info["illegal_action"].any()
        assert np.all(reward[~terminated] == 0)
        rewards += reward[terminated].tolist()
        finished += int(terminated.sum())
        if terminated.any():
            assert info["_final_obs"].tolist() == terminated.tolist()
    assert set(rewards) <= {-1.0, 1.0, 0.0} and len(rewards) == finished
    # new games take the next ids: every id played once
    assert info["game_id"].max() == 64 + finished - 1
    # an illegal action is replaced by the first legal move and flagged
    _, _, _, _, info = env.step(np.full(64, -1))
    assert info["illegal_action"].all()


def test_one_seed_gives_the_same_vector_games():
    def run() -> list:
        env = SniffVectorEnv(8, 2, "greedy")
        env.reset(seed=9)
        out = []
        for _ in range(40):
            masks = env.action_masks()
            observations, reward, terminated, _, _ = env.step(masks.argmax(axis=1))
            out.append((observations.sum(), reward.tolist(), terminated.tolist()))
        return out

    assert run() == run()


def test_encoding_blocks_tile_the_vector():
    assert sum(size for _, size in BLOCKS) == ENCODING_SIZE
    assert OFFSETS["hand"] == 0 and OFFSETS["played"] == 28


def _hidden_of(batch, game: int, seat: int) -> int:
    """Every tile ``seat`` cannot see: the other hands and the boneyard (the batch's referee
    tools)."""
    others = 0
    for other in range(batch.players):
        if other != seat:
            others |= batch.hand(game, other)
    return others | sum(1 << tile for tile in batch.boneyard(game))


def _played(batch, game: int) -> int:
    """The tiles on the table: neither in a hand nor in the boneyard."""
    return ALL_TILES & ~_hidden_of(batch, game, 0) & ~batch.hand(game, 0)


def _reshuffled(batch, seat: int, rng: np.random.Generator):
    """A copy of the batch with the tiles hidden from ``seat`` dealt anew among the other
    hands and the boneyard (same sizes): what ``seat`` sees must not change. The seat that
    places a tile it just drew keeps its hand (``GameBatch.redeal``)."""
    twin = batch.copy()
    kept = {seat}
    if batch.pending().kinds[0] == KIND_FORCED:
        kept.add(int(batch.pending().seats[0]))
    hands = [batch.hand(0, s) for s in range(batch.players)]
    hidden = _hidden_of(batch, 0, seat)
    for other in kept - {seat}:
        hidden &= ~hands[other]
    tiles = rng.permutation([t for t in range(28) if hidden >> t & 1]).tolist()
    for other in range(batch.players):
        if other not in kept:
            size = hands[other].bit_count()
            hands[other] = sum(1 << t for t in tiles[:size])
            tiles = tiles[size:]
    assert len(tiles) == len(batch.boneyard(0))
    twin.redeal(0, hands, tiles)
    return twin


@pytest.mark.parametrize("players", [2, 4])
def test_no_hidden_tile_reaches_an_observation(players):
    """Leak probe: at every turn of whole games, each agent's encoded observation shows
    exactly its own hand and the table, and the rest of the vector is the same whatever
    the hidden tiles are (it is computed from the public view only)."""
    env = SniffAEC(players)
    rng = np.random.default_rng(4)
    env.reset(seed=21)
    steps = 0
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        batch = env.batch
        for seat, name in enumerate(env.possible_agents):
            row = env.observe(name)["observation"]
            hand = batch.hand(0, seat)
            hidden = _hidden_of(batch, 0, seat)
            assert decode_tiles(row, "hand") == hand
            assert decode_tiles(row, "hand") & hidden == 0
            assert decode_tiles(row, "played") == _played(batch, 0)
            assert decode_tiles(row, "unseen") == hidden
            assert np.array_equal(row, encode(batch.observe(0, seat)))
            assert np.array_equal(row, encode(_reshuffled(batch, seat, rng).observe(0, seat)))
        mask = env.observe(agent)["action_mask"]
        env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
    assert steps > 20


def test_the_docs_table_lists_every_block_in_order():

    page = (ROOT / "docs" / "environments.md").read_text()
    rows = [line.split("|")[1:3] for line in page.splitlines()
            if line.startswith("| ") and line.split("|")[2].strip().isdigit()]
    assert [(name.strip(), int(size)) for name, size in rows] == list(BLOCKS)
