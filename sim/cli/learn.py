"""``sniff learn``'s options (in their own module to keep ``sim.cli`` short); the work is
``sim.learn.training``."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import click

from sim.cli.options import scheduler_option, seed_value

__all__: list[str] = []  # nothing here is used outside sim.cli

OPTIONS = {  # option name: (type, help)
    "players": (int, "2, 3 or 4 (one model per player count)  [default: 4]"),
    "seed": (int, "Seed of every game and of the network's initialisation  [default: 1]"),
    "iterations": (int, "Iterations of play, fit and measure  [default: 12]"),
    "games": (int, "Self-play games per iteration  [default: 4000]"),
    "epsilon": (float, "Exploration: chance of a random legal move at a decision "
                       "[default: 0.05]"),
    "hidden": (str, "Hidden layer widths, comma-separated  [default: 64,64]"),
    "epochs": (int, "Passes over the window's records per iteration  [default: 3]"),
    "batch": (int, "Minibatch size  [default: 256]"),
    "rate": (float, "Adam's learning rate  [default: 0.001]"),
    "window": (int, "Iterations whose records are fitted  [default: 3]"),
    "target": (str, "Return: value (chance to win at the round's end), outcome (game won), "
                    "mix  [default: value]"),
    "eval_games": (int, "Duplicate games against the heuristic per iteration (0: none)  "
                        "[default: 2000]"),
    "teacher": (str, "none (Monte-Carlo returns) or expert (each candidate valued by "
                     "expert's search, distilled)  [default: none]"),
    "label_rate": (float, "With --teacher: share of decisions labelled  [default: 0.3]"),
    "teacher_budget": (int, "With --teacher: expert's play-outs per labelled decision  "
                            "[default: 256]"),
    "feature_version": (int, "Inputs: 1 the move's afterstate, 3 that and the round's record "
                             "(who placed what, the lacks the others' choices imply)  "
                             "[default: 3]"),
}


def _options(function):
    for name, (kind, text) in reversed(OPTIONS.items()):
        function = click.option(f"--{name.replace('_', '-')}", name, type=kind, help=text,
                                callback=seed_value if name == "seed" else None)(function)
    return function


@click.command()
@_options
@click.option("-o", "--out", type=click.Path(path_type=Path), required=True,
              help="Training folder (model.npz, settings.json, log.jsonl, curve.csv/png).")
@click.option("--resume", is_flag=True, help="Continue the interrupted training in --out.")
@click.option("-q", "--quiet", is_flag=True, help="No progress.")
@click.option("-t", "--threads", type=click.IntRange(1, 256), default=1, show_default=True,
              help="Threads playing an iteration's games (the model does not depend on it).")
@scheduler_option("each iteration's self-play games")
def learn(out, resume, quiet, threads, scheduler, **given) -> None:
    """Train learned's value network by self-play (docs/learned.md): Monte-Carlo
    returns, or expert's values of every candidate (--teacher expert).

    Needs the optional extra: pip install 'sniff[learn]'. Play the result with
    --strategies learned:model=OUT/model.npz.
    """
    from sim.display.formatting import printable
    from sim.learn.config import LearnConfig
    from sim.learn.training import learn, main_progress

    chosen = {name: value for name, value in given.items() if value is not None}
    names = {f.name for f in fields(LearnConfig)}
    config = LearnConfig(**{k: v for k, v in chosen.items() if k in names})
    row = learn(config, out, resume=resume, given=set(chosen),
                progress=None if quiet else main_progress, threads=threads,
                scheduler=scheduler)
    if row and not quiet:
        model = Path(out) / "model.npz"  # a folder's name is data: escaped on the terminal
        click.echo(printable(f"model: {model}  (learned:model={model})", one_line=True))
