"""``sniff compare``'s options (in their own module to keep ``sim.cli.main`` short); the work
is ``sim.compare.play.compare``."""

from __future__ import annotations

from pathlib import Path

import click

from sim.cli.options import scheduler_option, seed_value, sprt_options
from sim.compare import CHUNK_DEALS, DEFAULT_MAX_GAMES, RESULT
from sim.display.formatting import printable, shown_name

__all__: list[str] = []  # nothing here is used outside sim.cli


@click.command()
@click.argument("a", required=False)
@click.argument("b", required=False)
@click.option("--players", type=click.IntRange(2, 4), default=4, show_default=True,
              help="2, 3 (A against B in both other seats) or 4 (partnerships).")
@click.option("--seed", callback=seed_value, type=int, default=0, show_default=True,
              help="Run seed.")
@click.option("-o", "--out", type=click.Path(path_type=Path),
              help="Run folder to write [default: results/compare-DATE-TIME].")
@sprt_options()
@click.option("--max-games", type=int,
              help=f"Stop undecided after this many games [default: {DEFAULT_MAX_GAMES:,}; "
                   "with --resume, the run's own].")
@click.option("--chunk-size", type=int,
              help=f"Games between checks, whole deals [default: {CHUNK_DEALS} deals: "
                   f"{2 * CHUNK_DEALS} games, {3 * CHUNK_DEALS} with 3 players].")
@click.option("--threads", type=click.IntRange(1, 1024),
              help="Compute threads [with --scheduler: numba threads per Dask task].")
@click.option("-q", "--quiet", is_flag=True, help="Only the decision.")
@click.option("--resume", is_flag=True, help="Complete the interrupted comparison in --out.")
@click.option("--overwrite", is_flag=True, help="Replace the run already in --out.")
@scheduler_option()
def compare(a, b, players, seed, out, h0, h1, alpha, beta, max_games, chunk_size, threads,
            quiet, resume, overwrite, scheduler) -> None:
    """Is strategy A better than B? Play duplicate deals until a sequential test decides.

    After each chunk the log-likelihood ratio of H1 (A's advantage >= --h1) against H0
    (<= --h0) is checked against the bounds of --alpha and --beta; the games are a normal run
    folder, with compare.json. --resume takes the settings of the run in --out.
    """
    from sim.cli.options import run_control
    from sim.compare.play import compare as run_compare
    from sim.errors import SniffError
    from sim.run.chunks import RunInterrupted
    from sim.run.settings import quiet_notice, stderr_notice
    from sim.stats.sprt import Sprt
    from sim.store.folders import new_folder

    if resume:
        if a is not None or b is not None:
            raise SniffError("--resume takes the strategies of the run in --out: give no A B")
        if out is None:
            raise SniffError("--resume needs --out, the folder of the comparison to complete")
    elif a is None or b is None:
        raise SniffError("give two strategies, A and B (e.g. sniff compare partner greedy)")
    folder = out if out is not None else new_folder("compare", Path("results"))

    def announce() -> None:  # once the run is ready: a resumed one's own test, recorded
        if not quiet:
            from sim.store.io import read_manifest

            test = read_manifest(folder)["config"]["sequential"] if resume else (
                h0, h1, alpha, beta)
            click.echo(printable(f"sniff: comparing in {folder}: H0 difference <= "
                                 f"{test[0]:+.1%} against H1 >= {test[1]:+.1%}, alpha "
                                 f"{test[2]:g}, beta {test[3]:g}", one_line=True), err=True)

    control = run_control(resume, overwrite, threads=threads, announce=announce,
                          scheduler=scheduler, notice=quiet_notice if quiet else stderr_notice)
    try:
        result = run_compare(a, b, players=players, seed=seed, out=folder,
                             test=Sprt(h0, h1, alpha, beta), max_games=max_games,
                             chunk_size=chunk_size, control=control,
                             on_line=None if quiet else shown)
    except RunInterrupted as stopped:
        click.echo(printable(f"sniff: {stopped.hint('sniff compare')}", one_line=True),
                   err=True)
        raise
    shown(result.decision_text())
    shown(f"  data: {shown_name(folder)}/ ({RESULT}, games/, rounds/, manifest.json)")


def shown(text: str) -> None:
    """A line on standard output, its control characters escaped (a folder's name, a
    label, are data: never commands to the terminal)."""
    click.echo(printable(text))
