"""The Gymnasium vector environment: many games at once, stepped in compiled batches.

``num_envs`` slots each hold one game of ``SniffEnv``'s setting (the learner at lineup
position 0, built-in opponents elsewhere). A step takes one action per slot and advances
every game in one compiled call per batch. When a game ends its slot starts the next game
id at once (Gymnasium's ``AutoresetMode.SAME_STEP``): the step returns the new game's first
observation, and ``info["final_obs"]`` / ``info["_final_obs"]`` hold the finished game's
last one, ``info["final_game_id"]`` its game id (-1 in the other slots). Fresh games are
opened together, as one new ``GameBatch`` for all the slots that finished on the same
step, so the work stays batched; a batch is dropped when its last game ends.

Game ids: the first ``num_envs`` games are ids ``0 .. num_envs-1`` of the seed, and each
later game takes the next unused id, in slot order, so one seed gives the same games.
Actions: ``(num_envs,)`` action ids; ``action_masks()`` is ``(num_envs, 112)`` bool.
An illegal action is replaced by the first legal move and flagged in
``info["illegal_action"]``, as in ``SniffEnv``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from sim.core.checks import check_players, check_seed
from sim.core.seating import team_count
from sim.env.encoding import ENCODING_SIZE, HIGH, LOW, encode
from sim.env.lineups import ROUND_CAP, fresh_seed, learner_lineup, open_batch
from sim.env.outcome import Rewards, check_rewards, game_rewards, point_rewards
from sim.kernels.decisions import N_ACTIONS

__all__ = ["SniffVectorEnv"]


class _Open:
    """One GameBatch and the slot each of its games fills."""

    def __init__(self, batch, decision, slots: np.ndarray) -> None:
        self.batch, self.decision, self.slots = batch, decision, slots


class SniffVectorEnv(VectorEnv):
    """``num_envs`` games of one learning seat against built-in strategies."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int, players: int = 2,
                 opponents: str | Sequence[str] = "greedy", *, rewards: Rewards = "game",
                 round_cap: int = ROUND_CAP) -> None:
        self.num_envs = int(num_envs)
        self.players = check_players(players)
        self.reward_scheme = check_rewards(rewards)
        self.lineup = learner_lineup(self.players, opponents)
        self.round_cap = round_cap
        self.single_observation_space = spaces.Box(
            LOW, HIGH, (ENCODING_SIZE,), dtype=np.float32)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._open: list[_Open] = []

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._seed = check_seed(seed) if seed is not None else fresh_seed()
        self._next_game = 0
        self._open = []
        self._views = np.zeros((self.num_envs, 0), dtype=np.int64)
        self._masks = np.zeros((self.num_envs, N_ACTIONS), dtype=bool)
        self._moves = np.zeros(self.num_envs, dtype=np.int64)
        self._seats = np.zeros(self.num_envs, dtype=np.int64)
        self._game_ids = np.zeros(self.num_envs, dtype=np.int64)
        self._scores = np.zeros((self.num_envs, team_count(self.players)))
        self._start(np.arange(self.num_envs))
        return encode(self._views), {"seat": self._seats.copy(), "game_id": self._game_ids.copy()}

    def _start(self, slots: np.ndarray) -> None:
        """New games in ``slots``: the next game ids, in one batch (more while a game ends
        without asking the learner, which only a round cap of 0 could do)."""
        while len(slots):
            batch, decision = open_batch(
                self.players, self.lineup, len(slots), self._seed,
                first_game=self._next_game, round_cap=self.round_cap)
            self._game_ids[slots] = self._next_game + np.arange(len(slots))
            self._next_game += len(slots)
            waiting = slots[decision.games]
            self._open.append(_Open(batch, decision, slots))
            self._take(decision, waiting)
            self._scores[slots] = 0  # every game starts at 0
            slots = np.setdiff1d(slots, waiting)

    def _take(self, decision, slots: np.ndarray) -> None:
        if self._views.shape[1] == 0:
            self._views = np.zeros((self.num_envs, decision.observations.shape[1]), np.int64)
        self._views[slots] = decision.observations
        self._masks[slots] = decision.masks
        self._moves[slots] = decision.moves[:, 0]
        self._seats[slots] = decision.seats

    def action_masks(self) -> np.ndarray:
        """The legal actions of every slot now, ``(num_envs, 112)`` bool."""
        return self._masks.copy()

    def step(self, actions):
        actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)
        legal = (actions >= 0) & (actions < N_ACTIONS)
        legal[legal] = self._masks[np.flatnonzero(legal), actions[legal]]
        actions = np.where(legal, actions, self._moves)
        rewards = np.zeros(self.num_envs)
        done = np.zeros(self.num_envs, dtype=bool)
        final_views = np.zeros_like(self._views)
        still_open = []
        for group in self._open:
            asked = group.decision.games
            group.decision = group.batch.advance(actions[group.slots[asked]])
            self._take(group.decision, group.slots[group.decision.games])
            self._settle(group, asked, rewards, done, final_views)
            if len(group.decision.games):
                still_open.append(group)
        self._open = still_open
        info = {"illegal_action": ~legal, "seat": self._seats.copy(),
                "final_game_id": np.where(done, self._game_ids, -1)}
        if done.any():
            final = np.zeros((self.num_envs, ENCODING_SIZE), dtype=np.float32)
            final[done] = encode(final_views[done])
            info["final_obs"] = final
            info["_final_obs"] = done
            self._start(np.flatnonzero(done))
        info["game_id"] = self._game_ids.copy()
        return encode(self._views), rewards, done, np.zeros(self.num_envs, bool), info

    def _settle(self, group: _Open, asked: np.ndarray, rewards, done, final_views) -> None:
        """Rewards of the games of ``group`` that were asked, last views of those that ended."""
        slots = group.slots[asked]
        seats = self._seats[slots]
        rows = np.arange(len(asked))
        ended = group.batch.finished[asked]
        if self.reward_scheme == "points":
            after = group.batch.scores[asked]
            rewards[slots] = point_rewards(self._scores[slots], after, self.players)[rows, seats]
            self._scores[slots] = after
        else:
            won = game_rewards(group.batch.winners[asked], self.players)[rows, seats]
            rewards[slots] = np.where(ended, won, 0.0)
        done[slots] = ended
        for game, slot, seat in zip(asked[ended], slots[ended], seats[ended]):
            final_views[slot] = group.batch.observe(int(game), int(seat))
