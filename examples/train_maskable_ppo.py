"""Worked example: sb3-contrib's MaskablePPO learns 2-player Sniff against ``greedy``.

The learner is ``sim.env.SniffEnv`` (one seat, built-in opponents, action masks); training
runs on ``n_envs`` copies in a stable-baselines3 ``DummyVecEnv``. Every ``--eval-every``
steps the policy (deterministic, masked) plays the same ``--eval-games`` held-out games
(game ids 0.. of seed ``--eval-seed``, all of them to the end, through
``sim.env.SniffVectorEnv``) and its win rate is written with its 95% Wilson interval to
``<out>/curve.csv`` (after every evaluation, so an interrupted run keeps its curve). At the
end a larger evaluation (``--final-games``) gives the final win rate, and the curve is
drawn to ``--png``. A uniform random masked policy is measured on the same games as the
starting point.

Needs the ``rl`` and ``env`` extras (``pip install -e '.[env,rl]'``); torch runs on the
CPU with one thread. Usage::

    python examples/train_maskable_ppo.py --timesteps 1000000 --out results/ppo

(the curve goes to ``results/ppo/curve.png``; ``--png docs/img/maskable-ppo-curve.png``
replaces the documentation's picture).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

# This folder's profile.py would shadow the standard library's, which torch imports.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=1_000_000,
                        help="environment steps to learn for (default %(default)s)")
    parser.add_argument("--minutes", type=float, default=float("inf"),
                        help="stop learning after this long (the final evaluation follows)")
    parser.add_argument("--n-envs", type=int, default=8,
                        help="environments stepped side by side (default %(default)s)")
    parser.add_argument("--opponent", default="greedy",
                        help="the built-in strategy learned against (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="training seed (default 1)")
    parser.add_argument("--eval-every", type=int, default=50_000,
                        help="steps between evaluations (default %(default)s)")
    parser.add_argument("--eval-games", type=int, default=500,
                        help="held-out games of each evaluation (default %(default)s)")
    parser.add_argument("--eval-seed", type=int, default=1_000_003,
                        help="seed of the held-out games (default %(default)s)")
    parser.add_argument("--final-games", type=int, default=4000,
                        help="games of the final evaluation (default %(default)s)")
    parser.add_argument("--out", type=Path, default=Path("results/maskable-ppo"),
                        help="folder for curve.csv, the model and the result "
                             "(default %(default)s)")
    parser.add_argument("--png", type=Path,
                        help="the learning curve's picture (default OUT/curve.png; the "
                             "documentation's is docs/img/maskable-ppo-curve.png)")
    args = parser.parse_args()
    args.png = args.png or args.out / "curve.png"
    return args


def require_rl_extra() -> None:
    """torch and sb3-contrib, or one line saying how to get them (never a traceback)."""
    import importlib.util

    missing = [name for module, name in (("torch", "torch"), ("sb3_contrib", "sb3-contrib"))
               if importlib.util.find_spec(module) is None]
    if missing:
        sys.exit(f"train_maskable_ppo: error: {' and '.join(missing)} not installed; "
                 "pip install -e '.[env,rl]' adds them")


if __name__ == "__main__":
    arguments()  # --help and bad flags answer before torch loads (the rl extra: not in test)
    require_rl_extra()

import numpy as np  # noqa: E402
import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from sim.env import SniffEnv, SniffVectorEnv  # noqa: E402
from sim.stats.intervals import wilson_interval  # noqa: E402


def win_rate(policy, games: int, seed: int, opponent: str, slots: int = 256) -> dict:
    """Wins of ``policy(observations, masks) -> actions`` in game ids ``0..games-1``."""
    env = SniffVectorEnv(min(slots, games), 2, opponent)
    observations, _ = env.reset(seed=seed)
    results: dict[int, float] = {}
    while len(results) < games:
        actions = policy(observations, env.action_masks())
        observations, rewards, done, _, info = env.step(actions)
        for slot in np.flatnonzero(done):
            game = int(info["final_game_id"][slot])
            if game < games:
                results[game] = float(rewards[slot])
    wins = sum(1 for r in results.values() if r > 0)
    low, high = wilson_interval(wins, games)
    return {"games": games, "wins": wins, "win_rate": wins / games, "low": low, "high": high}


def model_policy(model: MaskablePPO):
    def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = model.predict(observations, action_masks=masks, deterministic=True)
        return np.asarray(actions)
    return policy


def random_policy(seed: int):
    rng = np.random.default_rng(seed)

    def policy(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        scores = rng.random(masks.shape) * masks
        return scores.argmax(axis=1)
    return policy


class Curve(BaseCallback):
    """Evaluate every ``every`` steps; append a row to the CSV at once."""

    def __init__(self, every: int, games: int, seed: int, opponent: str, path: Path,
                 minutes: float) -> None:
        super().__init__()
        self.every, self.games, self.seed, self.opponent, self.path = (
            every, games, seed, opponent, path)
        self.minutes = minutes
        self.next = 0
        self.start = time.perf_counter()

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next:
            self.next += self.every
            row = win_rate(model_policy(self.model), self.games, self.seed, self.opponent)
            row.update(steps=self.num_timesteps,
                       minutes=round((time.perf_counter() - self.start) / 60, 2))
            new = not self.path.exists()
            with self.path.open("a", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(row))
                if new:
                    writer.writeheader()
                writer.writerow(row)
            print(f"{row['steps']:>9} steps  {row['minutes']:>6} min  win rate "
                  f"{row['win_rate']:.3f} ({row['low']:.3f}-{row['high']:.3f})", flush=True)
        return time.perf_counter() - self.start < 60 * self.minutes  # False: stop learning


def draw(curve: Path, baseline: dict, png: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(curve.open()))
    steps = np.array([float(r["steps"]) for r in rows])
    rate = np.array([float(r["win_rate"]) for r in rows])
    low = np.array([float(r["low"]) for r in rows])
    high = np.array([float(r["high"]) for r in rows])
    figure, axis = plt.subplots(figsize=(7, 4))
    axis.fill_between(steps, low, high, alpha=0.25, label="95% interval")
    axis.plot(steps, rate, marker="o", label="MaskablePPO (deterministic)")
    axis.axhline(baseline["win_rate"], color="grey", linestyle=":",
                 label=f"uniform random legal move ({baseline['win_rate']:.1%})")
    axis.axhline(0.5, color="black", linewidth=0.6)
    axis.set_xlabel("training steps (the learner's decisions)")
    axis.set_ylabel(f"games won against greedy (of {rows[0]['games']})")
    axis.set_title("MaskablePPO on sim.env.SniffEnv, 2 players vs greedy")
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(png, dpi=110)


def main() -> None:
    args = arguments()
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    curve = args.out / "curve.csv"
    curve.unlink(missing_ok=True)

    baseline = win_rate(random_policy(0), args.eval_games, args.eval_seed, args.opponent)
    print(f"random masked policy: {baseline}", flush=True)
    env = DummyVecEnv([lambda i=i: SniffEnv(2, args.opponent) for i in range(args.n_envs)])
    env.seed(args.seed)
    model = MaskablePPO("MlpPolicy", env, seed=args.seed, verbose=0, n_steps=512,
                        batch_size=512, learning_rate=3e-4, gamma=1.0, ent_coef=0.01)
    callback = Curve(args.eval_every, args.eval_games, args.eval_seed, args.opponent, curve,
                     args.minutes)
    start = time.perf_counter()
    model.learn(total_timesteps=args.timesteps, callback=callback)
    minutes = (time.perf_counter() - start) / 60
    model.save(args.out / "model")
    final = win_rate(model_policy(model), args.final_games, args.eval_seed + 1, args.opponent)
    summary = {"timesteps": int(model.num_timesteps), "minutes": round(minutes, 1),
               "final": final,
               "random": baseline, "n_envs": args.n_envs, "seed": args.seed}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2))
    draw(curve, baseline, args.png)
    print(json.dumps(summary, indent=2), flush=True)


if __name__ == "__main__":
    main()
