"""The Gymnasium environment: one seat learns, the other seats play built-in strategies.

The learner sits at lineup position 0 of a one-game ``GameBatch``; the opponents (spec
strings as ``sniff simulate --strategies`` takes them, e.g. ``"greedy"`` or
``"blocker,greedy"``) fill the other positions and play inside the compiled kernel. Seats
rotate with the game id exactly as in ``sniff simulate``, so over many episodes the learner
leads and sits at every place. An episode is one game; a step is one of the learner's
decisions (the engine plays everything in between).

Observation: ``sim.env.encoding`` (float32, ``ENCODING_SIZE``). Action: ``Discrete(112)``,
``tile * 4 + arm``; ``action_masks()`` gives the legal ones (sb3-contrib's MaskablePPO
reads it) and ``info["action_mask"]`` carries the same. An illegal action is replaced by
the first legal move and flagged in ``info["illegal_action"]`` (``check_env`` samples
actions without a mask); with a mask it never happens. Rewards: ``sim.env.outcome``.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sim.core.checks import check_players, check_seed
from sim.env.encoding import ENCODING_SIZE, HIGH, LOW, encode
from sim.env.lineups import ROUND_CAP, fresh_seed, learner_lineup, open_batch
from sim.env.outcome import Rewards, check_rewards, game_rewards, point_rewards
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import N_ACTIONS

__all__ = ["SniffEnv"]


class SniffEnv(gym.Env):
    """One learning seat against built-in strategies (Gymnasium API, with action masks)."""

    metadata = {"render_modes": ["ansi"]}
    _batch: GameBatch  # the game being played: opened by reset

    def __init__(self, players: int = 2, opponents: str | Sequence[str] = "greedy", *,
                 rewards: Rewards = "game", round_cap: int = ROUND_CAP,
                 render_mode: str | None = None) -> None:
        self.players = check_players(players)
        self.reward_scheme = check_rewards(rewards)
        self.lineup = learner_lineup(self.players, opponents)
        self.round_cap = round_cap
        self.render_mode = render_mode
        self.observation_space = spaces.Box(LOW, HIGH, (ENCODING_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._seed: int | None = None
        self._next_game = 0

    @property
    def batch(self) -> GameBatch:
        """The game being played (opened by ``reset``): its scores and winners, and for a
        referee or a test its hidden tiles (``GameBatch.hand``, ``boneyard``)."""
        return self._batch

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        seed = None if seed is None else check_seed(seed)
        super().reset(seed=seed)
        if seed is not None or self._seed is None:
            self._seed = seed if seed is not None else fresh_seed(self.np_random)
            self._next_game = 0
        self.game_id = self._next_game
        self._next_game += 1
        self._batch, self._decision = open_batch(
            self.players, self.lineup, 1, self._seed, first_game=self.game_id,
            round_cap=self.round_cap)
        while self._batch.done:  # the others finished a game without asking the learner
            self.game_id = self._next_game
            self._next_game += 1
            self._batch, self._decision = open_batch(
                self.players, self.lineup, 1, self._seed, first_game=self.game_id,
                round_cap=self.round_cap)
        self._seat = int(self._decision.seats[0])
        self._scores = np.zeros_like(self._batch.scores)  # every game starts at 0
        return encode(self._decision.observations[0]), self._info(False)

    def _info(self, illegal: bool) -> dict:
        mask = self.action_masks()
        return {"action_mask": mask, "illegal_action": illegal, "seat": self._seat,
                "game_id": self.game_id}

    def action_masks(self) -> np.ndarray:
        """The legal actions now (bool, 112); all False once the game is over."""
        if self._batch.done:
            return np.zeros(N_ACTIONS, dtype=bool)
        return self._decision.masks[0].astype(bool)

    def step(self, action):
        action = int(action)
        illegal = not (0 <= action < N_ACTIONS and self._decision.masks[0, action])
        if illegal:
            action = int(self._decision.moves[0, 0])
        self._decision = self._batch.advance(np.array([action], dtype=np.int64))
        done = bool(self._batch.done)
        reward = 0.0
        if done:
            reward = game_rewards(self._batch.winners, self.players)[0, self._seat]
            observation = encode(self._batch.observe(0, self._seat))
        else:
            observation = encode(self._decision.observations[0])
        after = self._batch.scores
        if self.reward_scheme == "points":
            reward = point_rewards(self._scores, after, self.players)[0, self._seat]
        self._scores = after
        return observation, float(reward), done, False, self._info(illegal)

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        return f"game {self.game_id} of seed {self._seed}, learner at seat {self._seat}"
