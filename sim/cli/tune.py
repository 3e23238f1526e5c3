"""``sniff tune``'s options (in their own module to keep ``sim.cli.main`` short); the work is
``sim.tune.study.tune``, run by ``sim.cli.commands.tune_command``."""

from __future__ import annotations

from pathlib import Path

import click

from sim.cli.options import (
    TextPath,
    players_given,
    positive,
    run_control,
    scheduler_option,
    seed_value,
    sprt_options,
)

__all__: list[str] = []  # nothing here is used outside sim.cli


@click.command()
@click.argument("strategy", required=False)
@click.option("--against", help="The field: opponents, comma-separated (name:key=value sets "
                                "parameters); the objective is the win rate averaged over them.")
@click.option("--players", type=int, callback=players_given, show_default="4",
              help="2, 3 or 4 (4: the tuned partnership against each opponent's).")
@click.option("--games", type=int, callback=positive, show_default="200000",
              help="Budget: games of all trials together (validation not included).")
@click.option("--seed", callback=seed_value, type=int, show_default="0",
              help="Run seed (0 .. 2**63-1).")
@click.option("--params", help="Parameters to tune, comma-separated [default: every numeric one].")
@click.option("--games-per-trial", type=int, callback=positive, show_default="4000",
              help="Games of one candidate, split evenly over the field (whole deals).")
@click.option("--popsize", type=int, callback=positive,
              help="Candidates per generation [default: CMA-ES's, 4 + 3 ln(parameters)].")
@click.option("--sigma", type=float, show_default="0.5",
              help="Initial CMA-ES step, in units of each parameter's scale.")
@click.option("--validate-games", type=int, show_default="20000",
              help="Games of each validation match on fresh deals (0: none); with "
                   "--accept sprt the cap of the test.")
@click.option("--accept", type=click.Choice(["fixed", "sprt"]), show_default="fixed",
              help="Accept against the defaults by a fixed match, or by sniff compare's "
                   "sequential test (stops when decided; --h0/--h1/--alpha/--beta, A the "
                   "tuned values, B the defaults).")
@sprt_options(show=False)
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Tuning folder [default: results/tune-DATE-TIME].")
@click.option("--resume", is_flag=True, help="Complete the interrupted tuning run in --out.")
@click.option("-q", "--quiet", is_flag=True, help="No progress or notices.")
@scheduler_option("every match (each candidate against each opponent)")
def tune(strategy, against, players, games, seed, params, games_per_trial, popsize, sigma,
         validate_games, accept, h0, h1, alpha, beta, out, resume, quiet, scheduler) -> None:
    """Tune STRATEGY's numeric parameters with CMA-ES against a field of opponents.

    Candidates play duplicate deals, every candidate of a generation the same ones (common
    random numbers). Writes trials.parquet, best.json, learning-curve.png and manifest.json,
    then validates the result on fresh deals against the defaults and each opponent.
    Use it as the printed NAME:KEY=VALUE,... or as NAME:@FOLDER/best.json.
    """
    from sim.cli.commands import tune_command

    options = {"strategy": strategy, "against": against, "players": players, "games": games,
               "seed": seed, "params": params.split(",") if params else None,
               "games_per_trial": games_per_trial, "popsize": popsize, "sigma": sigma,
               "validate_games": validate_games, "accept": accept, "h0": h0, "h1": h1,
               "alpha": alpha, "beta": beta}
    control = run_control(resume, scheduler=scheduler)
    tune_command(options, out=out, control=control, quiet=quiet)
