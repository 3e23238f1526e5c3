"""Where the 2-player network's gap to its teacher lies (docs/learned.md, same title).

Usage::

    # how noisy the teacher's labels are: the same games labelled at two budgets
    python scripts/learned_fit_probe.py noise results/learned-2p-record/records/iter-001.npz \\
        results/learned-2p-budget1024/records/iter-001.npz
    # how much of the labels' spread between one decision's moves a network reproduces
    python scripts/learned_fit_probe.py explain \\
        results/learned-2p-budget1024/records/iter-001.npz \\
        results/learned-2p-record/model.npz
    # a fresh fit (or a continued one) on a folder's records, measured like the curve
    python scripts/learned_fit_probe.py fit results/learned-2p-record --first 9 --last 16 \\
        --contrast 10 --tag contrast10 --ref plain

Only a decision's moves are compared when ``learned`` plays, so what matters is how well
the network reproduces the teacher's differences between the moves of one decision, not
the level they share. A labelled decision's candidates are written one after another;
the probe recovers the decisions as runs of records with the same hand plus table (the
move takes a tile from one to the other), scores and record block.

- ``noise``: two record files of the same games (same inputs, row for row) labelled at two
  teacher budgets: the spread of the label differences, the share of the spread within a
  decision that is the teacher's own noise, and how often the two budgets pick the same
  move.
- ``explain``: for each model, its error on the labels, the share of the labels' spread
  within a decision it reproduces (R²), and how often its best move is the teacher's.
- ``fit``: a network trained by plain numpy (Adam, ReLU, scikit-learn's initialisation
  and L2 term, the recipe's batch and rate) on the squared error plus ``--contrast`` times
  the squared error of each record's difference from its decision's mean, so that a large
  ``--contrast`` fits the differences between moves before the level; ``--init MODEL``
  continues from a model. scikit-learn's ``MLPRegressor`` has no such loss; the product's
  training (``sniff learn``) stays on it. Measured on the held-out deals of the folder's
  evaluation seed against the heuristic; ``--ref TAG`` pairs the result with an earlier
  fit's (``--tag``), or of a model measured by ``measure --model PATH --tag TAG``, deal by deal.

Results go to ``results/probe/``: ``probe.jsonl``, each fit's per-deal wins and its network
(``TAG.npz``, a model file: ``learned:model=results/probe/TAG.npz`` plays it).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from sim.learn import measure, training
from sim.stats.intervals import mean_interval
from strategies.learned.features import N_BASE_INPUTS
from strategies.learned.net import pack, read_layers, save_model

OUT = Path("results/probe")
HAND, TABLE, SCORES = slice(0, 28), slice(28, 56), slice(91, 95)
MOVE_END = N_BASE_INPUTS  # the record block, where a folder has one, follows


def decisions(x: np.ndarray) -> np.ndarray:
    """Each record's decision number (consecutive runs of the same decision key)."""
    key = np.concatenate([np.maximum(x[:, HAND], x[:, TABLE]), x[:, SCORES],
                          x[:, MOVE_END:]], axis=1)
    change = np.any(key[1:] != key[:-1], axis=1)
    return np.concatenate([[0], np.cumsum(change)])


def within(values: np.ndarray, group: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Each value minus its decision's mean."""
    return values - (np.bincount(group, values) / counts)[group]


def forward(coefs: list, intercepts: list, x: np.ndarray) -> np.ndarray:
    """The network's outputs for the rows of ``x``, in blocks (bounded memory)."""
    out = np.empty(x.shape[0])
    for start in range(0, x.shape[0], 200_000):
        h = x[start:start + 200_000].astype(np.float64)
        for layer, (weight, bias) in enumerate(zip(coefs, intercepts)):
            h = h @ weight + bias
            if layer < len(coefs) - 1:
                h = np.maximum(h, 0.0)
        out[start:start + h.shape[0]] = h[:, 0]
    return out


def argmax_agreement(a: np.ndarray, b: np.ndarray, counts: np.ndarray) -> float:
    """How often the best of ``a`` and of ``b`` is the same move, over decisions with a choice."""
    starts = np.concatenate([[0], np.cumsum(counts)])
    chosen = np.nonzero(counts > 1)[0]
    same = sum(int(np.argmax(a[starts[k]:starts[k + 1]]) == np.argmax(b[starts[k]:starts[k + 1]]))
               for k in chosen)
    return same / max(1, chosen.size)


def load_records(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        return data["x"], data["value"].astype(np.float64)


def noise(args) -> None:
    xa, ya = load_records(args.first_file)
    xb, yb = load_records(args.second_file)
    if not np.array_equal(xa, xb):
        raise SystemExit("the two files are not the same games (their inputs differ)")
    group = decisions(xa)
    counts = np.bincount(group)
    multi = counts[group] > 1
    wa, wb = within(ya, group, counts)[multi], within(yb, group, counts)[multi]
    row = {"records": int(ya.size), "decisions": int(counts.size),
           "candidates_per_decision": float(counts.mean()),
           "label_sd": float(ya.std()), "within_sd_first": float(wa.std()),
           "within_sd_second": float(wb.std()),
           "label_difference_sd": float((ya - yb).std()),
           "within_difference_sd": float((wa - wb).std()),
           "within_correlation": float(np.corrcoef(wa, wb)[0, 1]),
           "same_best_move": argmax_agreement(ya, yb, counts)}
    report("noise", row)


def explain(args) -> None:
    x, y = load_records(args.records)
    group = decisions(x)
    counts = np.bincount(group)
    multi = counts[group] > 1
    wy = within(y, group, counts)[multi]
    for model in args.models:
        f = forward(*read_layers(model, args.players), x)
        wf = within(f, group, counts)[multi]
        report("explain", {"model": str(model), "rmse": float(np.sqrt(((y - f) ** 2).mean())),
                           "within_r2": float(1.0 - (wy - wf).var() / wy.var()),
                           "same_best_move": argmax_agreement(y, f, counts)})


def folder_config(folder: Path) -> training.LearnConfig:
    """A ``sniff learn`` folder's settings, checked as ``sniff learn --resume`` checks them."""
    return training.recorded_config(folder, json.loads((folder / "settings.json").read_text()))


def fit(args) -> None:
    config = folder_config(args.folder)
    parts, groups, offset = [], [], 0
    for iteration in range(args.first, args.last + 1):
        x, y = load_records(args.folder / "records" / f"iter-{iteration:03d}.npz")
        group = decisions(x)
        parts.append((x, y))
        groups.append(group + offset)
        offset += int(group[-1]) + 1
    x = np.concatenate([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts]).astype(np.float32)
    group = np.concatenate(groups)
    del parts, groups
    started = time.perf_counter()
    layers = train(x, y, group, offset, args, config.players)
    coefs = [w.astype(np.float64) for w in layers[0]]
    intercepts = [b.astype(np.float64) for b in layers[1]]
    OUT.mkdir(parents=True, exist_ok=True)
    save_model(OUT / f"{args.tag}.npz", coefs, intercepts, config.players)
    weights, sizes = pack(coefs, intercepts)
    measured(config, weights, sizes, args, {
        "records": int(x.shape[0]), "iterations": f"{args.first}-{args.last}",
        "hidden": args.hidden, "contrast": args.contrast, "epochs": args.epochs,
        "learning_rate": args.rate, "init": str(args.init) if args.init else None,
        "fit_s": round(time.perf_counter() - started)})


def train(x, y, group, n_groups, args, players: int) -> tuple[list, list]:
    """Adam over minibatches of whole decisions; loss: squared error + contrast x the
    squared error of the within-decision differences (halved, as scikit-learn's)."""
    rng = np.random.default_rng(args.seed)
    widths = [x.shape[1]] + [int(w) for w in args.hidden.split(",")] + [1]
    bounds = [np.sqrt(6.0 / (widths[i] + widths[i + 1])) for i in range(len(widths) - 1)]
    w = [rng.uniform(-b, b, (widths[i], widths[i + 1])).astype(np.float32)
         for i, b in enumerate(bounds)]
    b = [rng.uniform(-bd, bd, widths[i + 1]).astype(np.float32) for i, bd in enumerate(bounds)]
    if args.init:
        coefs, intercepts = read_layers(args.init, players)
        if [c.shape for c in coefs] != [c.shape for c in w]:
            raise SystemExit(f"--init {args.init} has other layer widths")
        w = [c.astype(np.float32) for c in coefs]
        b = [c.astype(np.float32) for c in intercepts]
    params = w + b
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    counts = np.bincount(group, minlength=n_groups)
    first_record = np.concatenate([[0], np.cumsum(counts)])
    step = 0
    for epoch in range(args.epochs):
        order = rng.permutation(n_groups)
        sizes_in_order = counts[order]
        ends = np.cumsum(sizes_in_order)
        rank = np.repeat(np.arange(n_groups), sizes_in_order)
        rows_in_order = first_record[order][rank] + (
            np.arange(ends[-1]) - np.repeat(ends - sizes_in_order, sizes_in_order))
        batch_of_group = (ends - sizes_in_order) // args.batch
        cuts = np.concatenate([[0], ends])[np.searchsorted(
            batch_of_group, np.arange(batch_of_group[-1] + 2))]
        total, batches = 0.0, 0
        for s, e in zip(cuts[:-1], cuts[1:]):
            if e <= s:
                continue
            rows = rows_in_order[s:e]
            local = rank[s:e] - rank[s]
            activations = [x[rows]]
            h = activations[0]
            for i in range(len(w)):
                h = h @ w[i] + b[i]
                if i < len(w) - 1:
                    h = np.maximum(h, 0.0)
                activations.append(h)
            residual = h[:, 0] - y[rows]
            n_local = np.bincount(local)
            contrast = residual - (np.bincount(local, residual) / n_local)[local]
            total += float((residual ** 2).mean() + args.contrast * (contrast ** 2).mean()) / 2
            batches += 1
            delta = ((residual + args.contrast * contrast) / rows.size)[:, None].astype(
                np.float32)
            grads_w, grads_b = [None] * len(w), [None] * len(w)
            for i in range(len(w) - 1, -1, -1):
                grads_w[i] = activations[i].T @ delta + 1e-5 * w[i] / rows.size
                grads_b[i] = delta.sum(axis=0)
                if i > 0:
                    delta = (delta @ w[i].T) * (activations[i] > 0)
            step += 1
            rate = args.rate * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
            for p, g, m, v in zip(params, grads_w + grads_b, moments, squares):
                m *= 0.9
                m += 0.1 * g
                v *= 0.999
                v += 0.001 * g * g
                p -= (rate * m / (np.sqrt(v) + 1e-8)).astype(np.float32)
        print(f"epoch {epoch + 1}: loss {total / batches:.6f}", flush=True)
    return w, b


def measured(config, weights, sizes, args, extra: dict, kind: str = "fit") -> None:
    per_deal = measure.deal_wins(config.players, config.seed + measure.EVAL_SALT,
                                 args.eval_games, training.network_row(weights, sizes),
                                 training.selfplay.player_row(config.heuristic))
    OUT.mkdir(parents=True, exist_ok=True)
    np.save(OUT / f"{args.tag}-deals.npy", per_deal)
    rate, low, high = mean_interval(per_deal)
    row = {"tag": args.tag, "opponent": config.heuristic_name, "games": 2 * per_deal.size,
           "rate": rate, "low": low, "high": high, **extra}
    if args.ref:
        reference = np.load(OUT / f"{args.ref}-deals.npy")
        change, change_low, change_high = mean_interval(per_deal - reference)
        row.update(ref=args.ref, change=change, change_low=change_low,
                   change_high=change_high)
    report(kind, row)


def measure_model(args) -> None:
    config = folder_config(args.folder)
    weights, sizes = pack(*read_layers(args.model, config.players))
    measured(config, weights, sizes, args, {"model": str(args.model)}, "measure")


def report(kind: str, row: dict) -> None:
    row = {"probe": kind, **row}
    print(json.dumps(row), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "probe.jsonl").open("a") as handle:
        handle.write(json.dumps(row) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("noise")
    p.add_argument("first_file", type=Path)
    p.add_argument("second_file", type=Path)
    p = commands.add_parser("explain")
    p.add_argument("records", type=Path)
    p.add_argument("models", type=Path, nargs="+")
    p.add_argument("--players", type=int, default=2, help="the models' player count")
    for name in ("fit", "measure"):
        p = commands.add_parser(name)
        p.add_argument("folder", type=Path)
        p.add_argument("--tag", required=True)
        p.add_argument("--ref", default=None)
        p.add_argument("--eval-games", type=int, default=4000)
        if name == "measure":
            p.add_argument("--model", type=Path, required=True)
            continue
        p.add_argument("--first", type=int, default=9)
        p.add_argument("--last", type=int, default=16)
        p.add_argument("--hidden", default="128,128")
        p.add_argument("--epochs", type=int, default=3)
        p.add_argument("--rate", type=float, default=0.001)
        p.add_argument("--batch", type=int, default=256)
        p.add_argument("--contrast", type=float, default=0.0)
        p.add_argument("--init", type=Path, default=None)
        p.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    command = {"noise": noise, "explain": explain, "fit": fit, "measure": measure_model}
    try:
        command[args.command](args)
    except (OSError, KeyError, ValueError) as error:  # SniffError and ModelError included
        raise SystemExit(f"learned_fit_probe: {error}") from None


if __name__ == "__main__":
    main()
