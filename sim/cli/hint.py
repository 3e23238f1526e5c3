"""The ``sniff hint`` command line (``sim.cli.main`` adds it to the ``sniff`` group).

Its own module only to keep ``sim.cli.main`` short; the work is in
``sim.cli.commands.hint_command``,
``sim.hint.position`` and ``sim.hint.estimate``.
"""

from __future__ import annotations

from pathlib import Path

import click

from sim.cli.options import TextPath, seed_value

__all__: list[str] = []  # nothing here is used outside sim.cli


@click.command()
@click.argument("position_file", metavar="[POSITION]", required=False,
                type=TextPath(dir_okay=True, allow_dash=True, path_type=Path))
@click.option("--trace", "trace_file", type=TextPath(dir_okay=False, path_type=Path),
              help="Take the position from this trace (with --round and --turn).")
@click.option("--game", default=0, show_default=True, type=int,
              help="With --trace: which game of the file (0 = the first).")
@click.option("--round", "round_number", type=int, help="With --trace: the round, from 1.")
@click.option("--turn", type=int,
              help="With --trace: the placement's number in its round, from 1; the position "
                   "is the one just before it, seen by the seat that made it.")
@click.option("--budget", default=2000, show_default=True, type=int,
              help="Play-outs per move, every move on the same deals (2..100,000).")
@click.option("--policy", default="greedy", show_default=True,
              help="Who plays the rounds out: greedy, blocker, partner, weighted, random, "
                   "heavy (as expert's policy).")
@click.option("--seed", callback=seed_value, default=0, show_default=True, type=int,
              help="Seed of the sampled deals: the same seed gives the same numbers.")
@click.option("--format", "output", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="A table, or one JSON object.")
@click.option("--print-position", is_flag=True,
              help="Print the position in the text form of docs/hint.md and stop.")
def hint(position_file: Path | None, trace_file: Path | None, game: int,
         round_number: int | None, turn: int | None, budget: int, policy: str, seed: int,
         output: str, print_position: bool) -> None:
    """Every legal move of one position with its estimated chance to win the game and
    points in the round (95% intervals), best first, and what each one-ply heuristic
    would play.

    POSITION is a file in the text form of docs/hint.md (- reads standard input). The
    search sees only the public view of the seat to move.
    """
    from sim.cli.commands import hint_command

    hint_command(position_file, trace_file, game=game, round_number=round_number, turn=turn,
                 budget=budget, policy=policy, seed=seed, output=output,
                 print_position=print_position)
