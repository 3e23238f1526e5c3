"""OpenSpiel's own IS-MCTS bot head to head against ``expert`` and ``learned``.

The games are ``GameBatch`` games (the deals and rotations of ``sniff simulate``), the
built-in strategy plays its seats inside the engine, and IS-MCTS
(``open_spiel.python.algorithms.ismcts.ISMCTSBot``) decides for the outside seats. Every deal
is played twice, the sides swapped (duplicate deals): game id ``g`` of ``--seed`` once with
IS-MCTS at lineup position 0 (and 2 with 4 players), once at position 1 (and 3).

At each IS-MCTS decision the position becomes a ``python_sniff`` state
(``sim.env.openspiel``): the root is the true position, whose key is the deciding seat's
information set (its public view, then what follows in the search). The bot's resampler
deals the tiles that seat cannot see anew among the other hands and the boneyard (hand
sizes kept, and no tile with a pip value a seat is publicly known to lack), and its
evaluator plays the sampled position on inside the compiled engine (OpenSpiel's Python
random rollouts would take a second a game), with ``--playout`` (default uniformly random
legal moves) in every seat: ``--evaluator game`` to the game's end (+1 a win, -1 a loss),
``--evaluator round`` to the round's end only, valued by ``expert``'s model of the chance to
win the game from there (``strategies.value.round_value.win_chance``), as ``expert`` values
its play-outs. Both are a referee's: the batch's ``load_position`` and ``redeal`` (public,
documented in docs/batch.md) move hidden tiles, which no player may.

Writes one JSON line per finished game to ``--out`` (so an interrupted run keeps its
games) and prints win rates with 95% Wilson intervals, and the CPU seconds per move of
IS-MCTS and of the built-in strategy (measured playing itself on the same deals).

Usage: ``python examples/openspiel_ismcts.py --players 2 --opponent expert --deals 100
--simulations 32 --out results/ismcts/2-expert.jsonl`` (a rerun resumes the file);
``python examples/openspiel_ismcts.py --table results/ismcts/*.jsonl`` prints the table.
``expert``'s budget: ``--simulations 256 --evaluator round`` (its 256 play-outs, each valued
at the round's end as it values them); its time: ``--simulations 2`` (docs/environments.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import numba
import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts

from sim.core import engine
from sim.core import observation as slots
from sim.core.seating import side_of_team, team_count, team_of
from sim.core.tiles import N_TILES, TILE_HIGH, TILE_LOW
from sim.env.openspiel import GAME_NAME, SniffState, StateTable
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import KIND_DRAW, OUTSIDE, BatchSettings
from sim.stats.intervals import wilson_interval
from strategies.value.round_value import win_chance

TILE_PIP_BITS = [(1 << int(TILE_LOW[t])) | (1 << int(TILE_HIGH[t])) for t in range(N_TILES)]


def _bits(mask: int) -> list[int]:
    return [t for t in range(N_TILES) if mask >> t & 1]


def _histories(batch: GameBatch, players: int) -> list[str]:
    """Each seat's information at the root: a digest of its public view."""
    return [f"p{p} v" + hashlib.blake2b(batch.observe(0, p).tobytes(), digest_size=12).hexdigest()
            for p in range(players)]


def _state(game, batch: GameBatch) -> SniffState:
    view = batch.observe(0, 0)
    table = StateTable(batch, batch.pending(), game.players, (),
                   _histories(batch, game.players),
                   (int(view[slots.ROUND]), int(view[slots.RECORD])))
    return SniffState(game, table)


class Referee:
    """Turns true positions into OpenSpiel states, resamples them, and plays them out."""

    def __init__(self, game, players: int, seed: int, evaluator: str = "game",
                 playout: str = "random") -> None:
        self.game, self.players, self.evaluator = game, players, evaluator
        self.rng = np.random.default_rng(seed)
        self.outside = GameBatch(players, [OUTSIDE] * players, 1, seed,
                                 BatchSettings(external_chance=True))
        # a round's play-out stops at the next deal: chance from outside
        self.playouts = GameBatch(players, [playout] * players, 1, seed,
                                  BatchSettings(external_chance=evaluator == "round"))

    def root(self, source: GameBatch, game: int) -> SniffState:
        """The true position of game ``game`` as an OpenSpiel state (chance from outside)."""
        batch = self.outside.copy()
        batch.load_position(0, source, game)
        return _state(self.game, batch)

    def resample(self, state: SniffState, player: int) -> SniffState:
        """A copy whose tiles hidden from ``player`` are dealt anew (sizes and known lacks
        kept): what ``player`` sees is all it reads (``observe``)."""
        batch = state.table.batch.copy()
        view = batch.observe(0, player)
        hidden = [t for t in range(N_TILES)
                  if not (int(view[slots.HAND]) | int(view[slots.PLAYED])) >> t & 1]
        others = [s for s in range(self.players) if s != player]
        sizes = {s: int(view[slots.HAND_SIZE + s]) for s in others}
        known = {s: int(view[slots.LACKS + s]) for s in others}
        for attempt in range(50):
            pool = list(self.rng.permutation(hidden))
            hands = {}
            for seat in sorted(others, key=lambda s: -known[s].bit_count()):
                lacks = known[seat] if attempt < 49 else 0
                fits = [t for t in pool if not TILE_PIP_BITS[t] & lacks][:sizes[seat]]
                if len(fits) < sizes[seat]:
                    break
                hands[seat] = fits
                pool = [t for t in pool if t not in fits]
            else:
                break
        masks = [sum(1 << t for t in hands[s]) if s in hands else int(view[slots.HAND])
                 for s in range(self.players)]
        batch.redeal(0, masks, pool)
        return _state(self.game, batch)

    def playout(self, state: SniffState) -> np.ndarray:
        """Returns after ``--playout``'s moves (compiled) to the end of the game, or of the
        round valued by the chance to win the game from there; the position's first move
        is uniformly random."""
        batch = self.playouts.copy()
        batch.load_position(0, state.table.batch, 0)
        batch.deal_ids[0] = int(self.rng.integers(1 << 40))  # later rounds' deals
        decisions = batch.pending()
        if len(decisions):
            pick = int(self.rng.integers(decisions.n_moves[0]))
            decisions = batch.advance(decisions.moves[:, pick])
        while len(decisions) and decisions.kinds[0] == KIND_DRAW:
            boneyard = batch.boneyard(0)
            tile = boneyard[int(self.rng.integers(len(boneyard)))]
            decisions = batch.advance(np.array([tile], dtype=np.int64))
        winner = int(batch.winners[0])
        loss = -1.0 if self.players != 3 else -0.5
        if winner >= 0:
            return np.array([1.0 if team_of(s, self.players) == winner else loss
                             for s in range(self.players)])
        if batch.done:  # the round cap
            return np.zeros(self.players)
        return self.round_value(batch)

    def round_value(self, batch: GameBatch) -> np.ndarray:
        """Each seat's expected return from a round's end: ``expert``'s model of the chance
        to win the game from these scores with this next leader."""
        players, scores = self.players, batch.scores[0]
        target = float(batch.observe(0, 0)[slots.TARGET])
        out = [seat for seat in range(players) if batch.hand_sizes[0, seat] == 0]
        loss = -1.0 if players != 3 else -0.5
        returns = np.empty(players)
        for seat in range(players):
            team = team_of(seat, players)
            if out:  # who went out leads the next round; a blocked round draws its leader
                lead = 1.0 if team_of(out[0], players) == team else -1.0
            else:
                lead = 2.0 * (2 if players == 4 else 1) / players - 1.0
            need = [target - float(scores[t]) for t in range(team_count(players))]
            rival = min(need[t] for t in range(len(need)) if t != team)
            chance = win_chance(players, need[team], rival, lead, target)
            returns[seat] = chance + (1.0 - chance) * loss
        return returns


class RolloutEvaluator:
    """IS-MCTS's evaluator: one compiled random playout; uniform priors."""

    def __init__(self, referee: Referee) -> None:
        self.referee = referee

    def evaluate(self, state) -> np.ndarray:
        return self.referee.playout(state)

    def prior(self, state) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(action, 1.0 / len(legal)) for action in legal]


def builtin_seconds_per_move(players: int, opponent: str, deals: int, seed: int) -> float:
    """The built-in strategy against itself on the first deals: CPU seconds per decision
    (one thread; CPU time, as the machine is shared)."""
    # compile or load first, with as many games (a batch of one game uses other entry
    # points): else the first timing of a cold cache counts the compile
    GameBatch(players, [opponent] * players, deals, seed + 1)
    start = time.process_time()
    batch = GameBatch(players, [opponent] * players, deals, seed)
    seconds = time.process_time() - start
    return seconds / max(int(batch.results().games[:, engine.GAME_DECISIONS].sum()), 1)


def play_deal(referee: Referee, players: int, opponent: str, deal: int, seed: int,
              simulations: int, swap: int) -> dict:
    positions = [OUTSIDE if (p % 2 == 0) != bool(swap) else opponent for p in range(players)]
    batch = GameBatch(players, positions, 1, seed, BatchSettings(first_game=deal))
    bot = ismcts.ISMCTSBot(referee.game, RolloutEvaluator(referee), uct_c=2.0,
                           max_simulations=simulations,
                           random_state=np.random.RandomState(seed * 1_000 + 2 * deal + swap))
    bot.set_resampler(referee.resample)
    moves, thinking = 0, 0.0
    while not batch.done:
        start = time.process_time()
        action = bot.step(referee.root(batch, 0))
        thinking += time.process_time() - start
        moves += 1
        batch.advance(np.array([action], dtype=np.int64))
    winner, rotation = int(batch.winners[0]), int(batch.rotations[0])
    side = swap  # IS-MCTS's side: lineup positions 0 (+2) or 1 (+3)
    won = winner >= 0 and side_of_team(winner, rotation, players) == side
    return {"deal": deal, "swap": swap, "won": bool(won), "cap": winner < 0,
            "moves": moves, "seconds": thinking,
            "scores": batch.scores[0].tolist()}


def table(paths: list[Path]) -> str:
    """The Markdown table of finished games in these JSON Lines files, one row each."""
    lines = ["| players | opponent | IS-MCTS simulations | evaluator | games | IS-MCTS won | "
             "95% Wilson | IS-MCTS ms/move (CPU) | opponent ms/decision (CPU) |",
             "|---:|---|---:|---|---:|---:|---|---:|---:|"]
    for path in paths:
        rows = [json.loads(line) for line in path.open()]
        if not rows:
            continue
        wins = sum(r["won"] for r in rows)
        low, high = wilson_interval(wins, len(rows))
        per_move = sum(r["seconds"] for r in rows) / max(sum(r["moves"] for r in rows), 1)
        first = rows[0]
        # each session measures the opponent anew: the least figure (an earlier one may have
        # counted a compile)
        builtin = min(r["builtin_seconds_per_move"] for r in rows)
        evaluator = f"{first.get('evaluator', 'game')}, {first.get('playout', 'random')}"
        lines.append(f"| {first['players']} | {first['opponent']} | {first['simulations']} | "
                     f"{evaluator} | {len(rows)} | {wins / len(rows):.1%} | {low:.1%}-{high:.1%} | "
                     f"{per_move * 1e3:.1f} | {builtin * 1e3:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2, help="2 or 4 (default 2)")
    parser.add_argument("--opponent", default="expert",
                        help="the built-in strategy IS-MCTS plays (default %(default)s)")
    parser.add_argument("--deals", type=int, default=100,
                        help="deals, each played twice, sides swapped (default %(default)s)")
    parser.add_argument("--seed", type=int, default=50, help="run seed (default 50)")
    parser.add_argument("--simulations", type=int, default=200,
                        help="IS-MCTS simulations per decision (default %(default)s)")
    parser.add_argument("--evaluator", choices=("game", "round"), default="game",
                        help="play-outs to the game's end, or to the round's end valued by "
                             "expert's chance to win the game from there (default %(default)s)")
    parser.add_argument("--playout", default="random",
                        help="the strategy of every seat in the play-outs, after a uniformly "
                             "random first move (default %(default)s)")
    parser.add_argument("--out", type=Path,
                        help="JSON Lines of the finished games (a rerun resumes it)")
    parser.add_argument("--table", type=Path, nargs="+", metavar="JSONL",
                        help="print the Markdown table of these files' games, play nothing")
    args = parser.parse_args()
    if args.table:
        print(table(args.table))
        return
    if args.out is None:
        parser.error("--out is required (or --table FILES to print their table)")
    if args.players not in (2, 4):
        parser.error("--players: 2 or 4 (two sides, swapped on each deal)")
    numba.set_num_threads(1)
    game = pyspiel.load_game(GAME_NAME, {"players": args.players})
    referee = Referee(game, args.players, args.seed, args.evaluator, args.playout)
    builtin = builtin_seconds_per_move(args.players, args.opponent, 20, args.seed)
    print(f"{args.opponent}: {builtin * 1e3:.2f} ms per decision", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["deal"], r["swap"]) for r in map(json.loads, args.out.open())} \
        if args.out.exists() else set()
    with args.out.open("a") as handle:
        for deal in range(args.deals):
            for swap in (0, 1):
                if (deal, swap) in done:
                    continue
                row = play_deal(referee, args.players, args.opponent, deal, args.seed,
                                args.simulations, swap)
                row.update(opponent=args.opponent, players=args.players,
                           simulations=args.simulations, evaluator=args.evaluator,
                           playout=args.playout, builtin_seconds_per_move=builtin)
                handle.write(json.dumps(row) + "\n")
                handle.flush()
    rows = [json.loads(line) for line in args.out.open()]
    wins = sum(r["won"] for r in rows)
    low, high = wilson_interval(wins, len(rows))
    per_move = sum(r["seconds"] for r in rows) / max(sum(r["moves"] for r in rows), 1)
    print(f"IS-MCTS ({args.simulations} simulations, {args.evaluator} play-outs by "
          f"{args.playout}) vs {args.opponent}, {args.players} players:"
          f" {wins}/{len(rows)} won = {wins / len(rows):.1%} ({low:.1%}-{high:.1%}); "
          f"{per_move * 1e3:.1f} ms per move vs {builtin * 1e3:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
