"""Probes of where `expert`'s gap to its targets is: docs/expert.md, "Where the gap is".

Usage::

    python scripts/gap_probes.py win-rate --players 4 --opponent partner --games 1000 \\
        --seed 1 expert expert:tries=64
    python scripts/gap_probes.py agreement --players 4 --games 150 --seed 5
    python scripts/gap_probes.py agreement --players 4 --games 15 --seed 5 \
        --strategy rollout:samples=512
    python scripts/gap_probes.py acceptance --games 30 --seed 3
    python scripts/gap_probes.py read-share --players 2 --games 20 --seed 3

``win-rate`` plays each spec against the opponent on duplicate deals (as
``scripts/expert_curve.py``), and gives each later spec's difference from the first on
the same games (95% interval over deals); with one of the throw-away patches of commit 2c7a0dc
applied (``git show 2c7a0dc:scripts/experiments/README.md``) it measures that change.
``agreement``: how often a strategy (``--strategy``, default `expert`) picks the move of
`expert`'s one-ply model player, and of each one-ply heuristic, at every
decision with a choice of games of that model against itself.
``acceptance``: at each decision of `expert` (4 players, against `partner`), the share of
uniformly drawn deals that pass the reading of the opponents' choices (a share under
1/``tries`` means the cap binds). ``read-share``: the share of the opponents' choices in
`expert`'s views that the reading uses (the rest came before a draw that kept a tile).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from expert_curve import duplicate_wins, paired_interval, positions  # noqa: E402

import strategies  # noqa: E402
from sim.core import (
    engine,  # noqa: E402
    record,
)
from sim.core import observation as view  # noqa: E402
from strategies.search import inference  # noqa: E402
from strategies.search.determinize import prepare, sample_deal  # noqa: E402
from strategies.search.playout import POLICIES, POLICY_PARAMS, choose_policy  # noqa: E402

# The deterministic one-ply heuristics among the play-out policies.
HEURISTICS = tuple(POLICIES.index(name) for name in ("greedy", "blocker", "partner", "weighted"))


def expert_views(players: int, opponent: str, games: int, seed: int) -> np.ndarray:
    """The view of every decision of `expert` (seats 0 and 2) with a choice of tile in
    traced games against ``opponent`` (not the placements of a tile just drawn)."""
    observations = positions(players, games, seed, f"expert,{opponent}", (0, 2))[0]
    return observations[observations[:, view.FORCED] == 0]


def agreement(players: int, games: int, seed: int, strategy_text: str) -> None:
    observations, moves, counts = positions(players, games, seed)
    spec = strategies.parse_spec(strategy_text)
    choose = getattr(sys.modules[spec.strategy.module], spec.strategy.attribute)
    params = np.zeros(strategies.MAX_PARAMS)
    params[: len(spec.values)] = spec.values
    model = inference.model_of(players)
    rng = np.zeros(1, dtype=np.uint64)
    same, asked, by_policy = Counter(), Counter(), Counter()
    for index in range(len(observations)):
        rng[0] = np.uint64(1000 + index)
        pick = choose(observations[index], moves[index], counts[index], params, rng)
        width = min(int(counts[index]), 6)
        asked[width] += 1
        same[width] += pick == inference.model_choice(model, observations[index],
                                                       moves[index], counts[index])
        for code in HEURISTICS:
            by_policy[code] += pick == choose_policy(code, observations[index], moves[index],
                                                     counts[index], POLICY_PARAMS[code], rng)
    total = sum(asked.values())
    print(f"{players} players: {strategy_text} picks its model's move at "
          f"{sum(same.values()) / total:.1%} of {total} decisions")
    for width in sorted(asked):
        label = f"{width}+" if width == 6 else str(width)
        print(f"  {label} moves: {same[width] / asked[width]:.1%} of {asked[width]}")
    print("  the move of " + ", ".join(f"{POLICIES[code]} {by_policy[code] / total:.1%}"
                                       for code in HEURISTICS))


def acceptance(games: int, seed: int, draws: int = 200) -> None:
    rng = np.array([12345], dtype=np.uint64)
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    deal = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    shares = []
    for observation in expert_views(4, "partner", games, seed):
        views, moves, placed_since, count = inference.past_decisions(observation)
        tables = inference.level_tables(views, count)
        runs, forbidden, kept = inference.draw_periods(observation)
        plan, counts = prepare(observation)
        passed = 0
        for _ in range(draws):
            sample_deal(observation, plan, counts, deal, rng)
            passed += (inference.fits_draw_history(deal, observation, runs, forbidden, kept)
                       and inference.explains_choices(deal, views, moves, placed_since, count,
                                                      inference.MODEL_PARTNER, 0.9, buffer,
                                                      tables, rng))
        shares.append(passed / draws)
    share = np.array(shares)
    print(f"{share.size} decisions: mean share of deals passing {share.mean():.3f}; "
          f"under 1/4 at {(share < 0.25).mean():.0%}, under 1/10 at {(share < 0.1).mean():.0%}")


def read_share(players: int, games: int, seed: int) -> None:
    opponent = "blocker" if players == 2 else "partner"
    read = total = 0
    for observation in expert_views(players, opponent, games, seed):
        read += inference.past_decisions(observation)[3]
        for index in range(observation[view.RECORD]):
            kind, seat, _ = record.event(observation, view.RECORD, index)
            total += kind == record.PLACE_CHOSEN and seat % 2 != observation[view.SEAT] % 2
    print(f"{players} players: the reading uses {read} of the opponents' {total} choices in "
          f"the views ({read / total:.0%})")


def win_rates(players: int, specs: list[str], opponent: str, games: int, seed: int) -> None:
    """Each spec's duplicate-deal win rate against ``opponent`` (paired 95% interval over
    deals) and, from the second spec on, its difference from the first spec's on the same
    games, with the 95% interval of the per-deal differences."""
    first = None
    for spec in specs:
        started = time.perf_counter()
        won = duplicate_wins(players, spec, opponent, games, seed)
        low, high = paired_interval(won)
        line = (f"{players} players, {spec} against {opponent}, seed {seed}: "
                f"{int(won.sum())}/{won.size} = {won.mean():.1%} [{low:.1%}, {high:.1%}]")
        if first is None:
            first = won
        else:
            low, high = paired_interval(won - first)
            line += (f"; minus {specs[0]}: {(won - first).mean():+.1%} [{low:+.1%}, "
                     f"{high:+.1%}], {int((won != first).sum())} games differ")
        print(f"{line} ({time.perf_counter() - started:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    win = commands.add_parser("win-rate", help="specs against an opponent, duplicate deals")
    win.add_argument("specs", nargs="+")
    win.add_argument("--opponent", default="partner")
    agree = commands.add_parser("agreement", help="how often a strategy picks heuristics' moves")
    accept = commands.add_parser("acceptance", help="share of deals passing the reading")
    share = commands.add_parser("read-share", help="share of the opponents' choices read")
    agree.add_argument("--strategy", default="expert")
    for command in (win, agree, share):
        command.add_argument("--players", type=int, choices=(2, 4), default=4)
    for command in (win, agree, accept, share):
        command.add_argument("--games", type=int, default=30)
        command.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.command == "win-rate":
        asked = [*args.specs, args.opponent]
    elif args.command == "agreement":
        asked = [args.strategy]
    else:
        asked = []
    for spec in asked:
        try:
            strategies.parse_spec(spec)
        except strategies.StrategyError as error:
            parser.error(str(error))
    if args.command == "win-rate":
        win_rates(args.players, args.specs, args.opponent, args.games, args.seed)
    elif args.command == "agreement":
        agreement(args.players, args.games, args.seed, args.strategy)
    elif args.command == "acceptance":
        acceptance(args.games, args.seed)
    else:
        read_share(args.players, args.games, args.seed)


if __name__ == "__main__":
    main()
