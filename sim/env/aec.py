"""The PettingZoo AEC environment: 2, 3 or 4 agents take turns at one game of Sniff.

Every seat is an outside seat of a one-game ``GameBatch``: the engine plays the deal, the
draws and the passes itself and stops at each decision, so an agent is asked only when it
has a choice to make or a drawn tile to place (``forced`` in its observation). Agent
``player_i`` is seat ``i``. As PettingZoo's classic games do, an observation is a dict:
``"observation"``, the seat's public view encoded by ``sim.env.encoding`` (float32,
``ENCODING_SIZE``), and ``"action_mask"`` (int8, 112), the legal actions of the agent to
move (all 0 for the others). An action is ``tile * 4 + arm`` (``sim.core.layout``); an
illegal one raises the batch's error. Rewards: ``sim.env.outcome``.

``reset(seed=s)`` plays game id 0 of seed ``s`` (the deal ``sniff simulate --seed s`` gives
its first game); each later ``reset()`` the next game id of the same seed.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from sim.core.checks import check_players, check_seed
from sim.core.seating import team_count
from sim.env.encoding import ENCODING_SIZE, HIGH, LOW, encode
from sim.env.lineups import ROUND_CAP, fresh_seed, open_batch
from sim.env.outcome import Rewards, check_rewards, game_rewards, point_rewards
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import N_ACTIONS

__all__ = ["SniffAEC"]


def observation_space() -> spaces.Dict:
    """The space of one agent's observation dict."""
    return spaces.Dict({
        "observation": spaces.Box(LOW, HIGH, (ENCODING_SIZE,), dtype=np.float32),
        "action_mask": spaces.Box(0, 1, (N_ACTIONS,), dtype=np.int8),
    })


class SniffAEC(AECEnv):
    """One game of Sniff for ``players`` agents, turn by turn (PettingZoo AEC API)."""

    metadata = {"name": "sniff_v0", "render_modes": ["ansi"], "is_parallelizable": False}
    _batch: GameBatch  # the game being played: opened by reset, let go by close

    def __init__(self, players: int = 2, *, rewards: Rewards = "game", round_cap: int = ROUND_CAP,
                 render_mode: str | None = None) -> None:
        super().__init__()
        self.players = check_players(players)
        self.reward_scheme = check_rewards(rewards)
        self.round_cap = round_cap
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(self.players)]
        self.agents = self.possible_agents[:]
        self.observation_spaces = {agent: observation_space() for agent in self.agents}
        self._seats = {agent: seat for seat, agent in enumerate(self.agents)}
        self.action_spaces = {agent: spaces.Discrete(N_ACTIONS) for agent in self.agents}
        self._seed: int | None = None
        self._next_game = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @property
    def batch(self) -> GameBatch:
        """The game being played (opened by ``reset``): its scores and winners, and for a
        referee or a test its hidden tiles (``GameBatch.hand``, ``boneyard``)."""
        return self._batch

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or self._seed is None:
            self._seed, self._next_game = (fresh_seed() if seed is None else check_seed(seed)), 0
        self.game_id = self._next_game
        self._next_game += 1
        self._batch, self._decision = open_batch(
            self.players, [None] * self.players, 1, self._seed, first_game=self.game_id,
            round_cap=self.round_cap)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict] = {agent: {} for agent in self.agents}
        self._scores = np.zeros_like(self._batch.scores)  # every game starts at 0
        self._after_move()

    def _after_move(self) -> None:
        """Point the turn at the seat now deciding, or end the game (every seat is
        outside, so the one game waits for a decision until it is over)."""
        self._over = len(self._decision) == 0
        if self._over:
            self.terminations = dict.fromkeys(self.agents, True)
            self.agent_selection = self.agents[0]
            self._seat = -1
            return
        self._seat = int(self._decision.seats[0])
        self.agent_selection = self.possible_agents[self._seat]

    def observe(self, agent: str) -> dict:
        seat = self._seats[agent]
        if seat == self._seat:
            view = self._decision.observations[0]
            mask = self._decision.masks[0].astype(np.int8)
        else:
            view = self._batch.observe(0, seat)
            mask = np.zeros(N_ACTIONS, dtype=np.int8)
        return {"observation": encode(view), "action_mask": mask}

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self._decision = self._batch.advance(np.array([action], dtype=np.int64))
        self._after_move()
        if self.reward_scheme == "points":
            after = self._batch.scores
            rewards = point_rewards(self._scores, after, self.players)[0]
            self._scores = after
        elif self._over:
            rewards = game_rewards(self._batch.winners, self.players)[0]
        else:
            rewards = None
        self.rewards = (dict.fromkeys(self.agents, 0.0) if rewards is None else
                        {name: float(rewards[seat]) for seat, name in enumerate(self.agents)})
        self._accumulate_rewards()

    def render(self) -> str | None:
        """The scores and whose turn it is, as text (``render_mode="ansi"``)."""
        if self.render_mode is None:
            return None
        teams = team_count(self.players)
        scores = ", ".join(f"{int(s)}" for s in self._batch.scores[0, :teams])
        return f"game {self.game_id} of seed {self._seed}: scores {scores}; " \
               f"{self.agent_selection} to move"

    def close(self) -> None:
        self.__dict__.pop("_batch", None)  # the batch's buffers go (a reset opens another)


def raw_env(**kwargs) -> SniffAEC:
    """PettingZoo's naming: the environment without wrappers."""
    return SniffAEC(**kwargs)


def env(**kwargs) -> SniffAEC:
    """PettingZoo's naming: the environment as users get it (no wrapper needed: illegal
    actions already raise, and the turn order is the engine's)."""
    return SniffAEC(**kwargs)
