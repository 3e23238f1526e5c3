"""What each input family of ``learned``'s network is worth (docs/learned.md, "Ablation").

Usage::

    python scripts/learned_ablation.py results/learned-2p-record --iterations 4 \\
        --drop none --drop record --drop placed --drop passed_up --epochs 4

Reads the labelled records (``records/iter-NNN.npz``) of the first ``--iterations``
iterations of a ``sniff learn --teacher expert`` folder of feature version 3, and for each
``--drop`` fits a fresh network on them (the folder's hidden widths, seed, batch and rate)
with that family's inputs set to zero, zeroes its rows of the first layer (so that the
network ignores them in play as in the fit), and measures it as the learning curve does:
the win rate against the heuristic on the held-out duplicate deals of the folder's
evaluation seed (``--eval-games``), with the paired 95% interval, and its change from the
network fitted with every input (``none``, always fitted first), paired over the same
deals. Every variant sees the same records, the same initialisation and the same deals:
the differences are the inputs', plus the chance of one fit, which the interval over
deals does not cover: ``--refit-seed S`` fits every input again from another
initialisation and shuffle to show how large that chance is.

The families are ``strategies.learned.features``' and ``strategies.learned.record_inputs``'
blocks (``FAMILIES`` below); ``record`` drops the whole record block.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np

from sim.learn import measure, training
from sim.stats.intervals import mean_interval
from strategies.learned.features import N_BASE_INPUTS
from strategies.learned.net import pack
from strategies.learned.record_inputs import RECORD_START, RECORD_STRIDE

BASE_FAMILIES = {
    "hand": range(0, 28), "table": range(28, 56), "ends": range(56, 65),
    "sizes": range(65, 70), "lacks": range(70, 91), "scores": range(91, 95),
    "heuristics": range(95, 103), "move": range(103, N_BASE_INPUTS),
}


def families(players: int) -> dict[str, list[int]]:
    """Input columns of each family for ``players``."""
    found = {name: list(columns) for name, columns in BASE_FAMILIES.items()}
    seats = range(players - 1)
    found["placed"] = [RECORD_START + RECORD_STRIDE * r + t for r in seats for t in range(28)]
    found["passed_up"] = [RECORD_START + RECORD_STRIDE * r + 28 + t for r in seats
                          for t in range(28)]
    found["record"] = found["placed"] + found["passed_up"]
    found["none"] = []
    return found


def fit_without(config: training.LearnConfig, x: np.ndarray, y: np.ndarray,
                columns: list[int], epochs: int):
    """A fresh regressor fitted on ``x`` with ``columns`` zeroed; those rows of W0 zeroed."""
    x = x.copy()
    x[:, columns] = 0.0
    regressor = training.new_regressor(config)
    for _ in range(epochs):
        regressor.partial_fit(x, y)
    coefs = [c.copy() for c in regressor.coefs_]
    coefs[0][columns, :] = 0.0
    return pack(coefs, regressor.intercepts_)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--drop", action="append", default=[])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--eval-games", type=int, default=2000)
    parser.add_argument("--refit-seed", type=int, action="append", default=[],
                        help="also fit every input with this initialisation and shuffle "
                             "seed: how far two fits differ by chance alone")
    parser.add_argument("-o", "--out", type=Path, default=None,
                        help="JSON lines of the results (default: FOLDER/ablation.jsonl)")
    args = parser.parse_args()
    settings = json.loads((args.folder / "settings.json").read_text())
    config = training.recorded_config(args.folder, settings)
    if config.feature_version != 3 or not config.labelled:
        parser.error("needs a --teacher expert folder of feature version 3")
    if any(not 0 <= seed < 2**32 for seed in args.refit_seed):
        parser.error("--refit-seed takes a seed in 0 .. 2**32 - 1")
    known = families(config.players)
    unknown = [name for name in args.drop if name not in known]
    if unknown:
        parser.error(f"unknown family {unknown[0]!r}; one of {', '.join(known)}")
    parts = []
    for iteration in range(1, args.iterations + 1):
        path = args.folder / "records" / f"iter-{iteration:03d}.npz"
        if not path.exists():
            parser.error(f"{path} is missing: not a labelled iteration of this folder")
        with np.load(path) as data:
            parts.append((data["x"], data["value"]))
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    out = args.out or args.folder / "ablation.jsonl"
    heuristic = training.selfplay.player_row(config.heuristic)
    eval_seed = config.seed + measure.EVAL_SALT
    reference = None  # the per-deal wins of the network with every input
    variants = [("none", config)] + [(d, config) for d in args.drop if d != "none"] + [
        (f"none@seed={seed}", dataclasses.replace(config, seed=seed))
        for seed in args.refit_seed]
    for name, fit_config in variants:
        started = time.perf_counter()
        columns = known[name.split("@")[0]]
        weights, sizes = fit_without(fit_config, x, y, columns, args.epochs)
        per_deal = measure.deal_wins(config.players, eval_seed, args.eval_games,
                                     training.network_row(weights, sizes), heuristic)
        rate, low, high = mean_interval(per_deal)
        row = {"dropped": name, "inputs_zeroed": len(columns), "records": int(x.shape[0]),
               "iterations": args.iterations, "epochs": args.epochs,
               "opponent": config.heuristic_name, "games": 2 * per_deal.size,
               "rate": rate, "low": low, "high": high}
        if reference is None:
            reference = per_deal
        else:  # paired over the same deals: the family's worth is minus this
            change, change_low, change_high = mean_interval(per_deal - reference)
            row.update(change=change, change_low=change_low, change_high=change_high)
        row["seconds"] = round(time.perf_counter() - started, 1)
        with out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")
        paired = ("" if "change" not in row else
                  f"; {row['change']:+.1%} [{row['change_low']:+.1%}, "
                  f"{row['change_high']:+.1%}] against all inputs")
        print(f"without {name:<10} {rate:.1%} [{low:.1%}, {high:.1%}] against "
              f"{config.heuristic_name} on {row['games']:,} games{paired} "
              f"({row['seconds']:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
