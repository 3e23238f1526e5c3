"""The ``sniff analyze`` command line (``sim.cli.main`` adds it to the ``sniff`` group).

Options here; the work is ``sim.analyze.study`` (sampling, valuing part by part, the
results) and ``sim.analyze.output`` (what is printed).
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from sim.cli.options import TextPath, positive, scheduler_option, seed_value

__all__: list[str] = []  # nothing here is used outside sim.cli


def _thresholds(ctx, param, value):
    if value is None:
        return None
    try:
        points = tuple(float(item) for item in value.split(","))
    except ValueError:
        points = ()
    if len(points) != 3:
        raise click.BadParameter(f"must be three numbers of points separated by commas "
                                 f"(inaccuracy, mistake, blunder), got {value!r}")
    return tuple(point / 100 for point in points)


def _budgets(ctx, param, value):
    if value is None:
        return ()
    try:
        return tuple(sorted({int(item) for item in value.split(",") if item.strip()}))
    except ValueError:
        raise click.BadParameter(f"must be budgets separated by commas, got {value!r}") from None


@click.command()
@click.argument("sources", nargs=-1, type=TextPath(dir_okay=True, path_type=Path))
@click.option("--games", type=int, default=None, show_default="100",
              help="Games sampled from each source (a run, each tournament pairing, a trace "
                   "file): all when it holds fewer.")
@click.option("--budget", type=int, default=None, show_default="100",
              help="Play-outs per move, every move on the same deals (2..100,000).")
@click.option("--policy", default=None, show_default="greedy",
              help="Who plays the rounds out (as sniff hint's --policy).")
@click.option("--seed", callback=seed_value, type=int, default=None, show_default="0",
              help="Seed of the sampled games and of every decision's deals.")
@click.option("--strategy", "strategies", multiple=True,
              help="Analyse only the seats playing this strategy label (repeatable).")
@click.option("--budget-curve", "curve", callback=_budgets,
              help="Also the figures at these smaller budgets (e.g. 25,50,100): the first "
                   "deals of the same search.")
@click.option("--played", type=click.Choice(["game", "search"]), default=None,
              show_default="game",
              help="search: value the search's own choice (other deals, same budget) instead "
                   "of the move played: the noise floor.")
@click.option("--endgame", type=click.Choice(["exact", "playout"]), default=None,
              show_default="exact",
              help="exact: a decision whose every hand is known (2 players or two "
                   "partnerships, the boneyard empty) is solved to the round's end instead of "
                   "played out.")
@click.option("--thresholds", callback=_thresholds, show_default="1,3,10",
              help="Points of win chance a separated move must give up to be marked an "
                   "inaccuracy, a mistake, a blunder (rising, within 0..100).")
@click.option("--worst", type=int, default=None, show_default="20",
              help="Costliest positions written to positions/.")
@click.option("--part-games", type=int, callback=positive, default=None, show_default="10",
              help="Games per part (each part is written and recorded as it finishes).")
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Output folder [default: results/analysis-DATE-TIME].")
@click.option("--overwrite", is_flag=True, help="Replace the analysis in a non-empty --out.")
@click.option("--resume", is_flag=True,
              help="Complete the analysis stopped in --out (its own settings).")
@click.option("--threads", type=int, callback=positive,
              help="Compute threads [default: all cores].")
@scheduler_option("the parts")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def analyze(sources, games, budget, policy, seed, strategies, curve, played, endgame,
            thresholds, worst, part_games, out, overwrite, resume, threads, scheduler,
            quiet) -> None:
    """Value every decision of sampled games with the hint search: the win chance each
    move played gave up against the best move, per strategy, with 95% intervals over games.

    SOURCES are run folders, tournament folders (each pairing) or trace files (sniff trace,
    sniff play, the browser table). Writes the decisions as Parquet (sniff query reads
    them), strategies.csv, phases.csv, kinds.csv, players.csv, curve.csv, the costliest
    positions (sniff hint reads them) and summary.json; see docs/analyze.md.
    """
    from sim.analyze.settings import AnalyzeSettings, Endgame, Played
    from sim.errors import SettingError

    if resume:
        if out is None:
            raise SettingError("--resume needs --out, the folder of the analysis to complete")
        given = [name for name, value in (
            ("SOURCES", sources), ("--games", games), ("--budget", budget), ("--seed", seed),
            ("--policy", policy), ("--strategy", strategies), ("--budget-curve", curve),
            ("--played", played), ("--endgame", endgame), ("--thresholds", thresholds),
            ("--worst", worst), ("--part-games", part_games)) if value not in (None, ())]
        if given:
            raise SettingError(f"--resume takes the settings recorded in {out}: leave out "
                               f"{', '.join(given)}")
        settings = None
    else:
        defaults = AnalyzeSettings()
        settings = AnalyzeSettings(
            budget=defaults.budget if budget is None else budget,
            policy=policy or defaults.policy, seed=seed or 0,
            games=defaults.games if games is None else games,
            part_games=part_games or defaults.part_games, strategies=tuple(strategies),
            played=Played(played or "game"), endgame=Endgame(endgame or "exact"), curve=curve,
            thresholds=thresholds or defaults.thresholds,
            worst=defaults.worst if worst is None else worst)
    analyze_command(sources, settings, out, overwrite=overwrite, resume=resume,
                    threads=threads, scheduler=scheduler, quiet=quiet)


def analyze_command(sources, settings, out: Path | None, *, overwrite: bool, resume: bool,
                    threads: int | None, scheduler: str | None, quiet: bool) -> None:
    """Plan (or read the plan to resume), value the parts with a progress bar, print the
    table; a stop keeps the finished parts and says how to complete them."""
    from sim.analyze import folder as disk
    from sim.analyze.output import summary_text
    from sim.analyze.study import Hooks, plan_analysis, run_analysis
    from sim.cli.options import command_line
    from sim.cluster.dask import check_scheduler
    from sim.display.formatting import printable, shown_name
    from sim.display.progress import ProgressBar
    from sim.errors import Stopped
    from sim.run.chunks import StopOnInterrupt
    from sim.run.settings import numba_threads
    from sim.store.folders import new_folder

    def say(text: str) -> None:
        click.echo(printable(f"sniff: {text}", one_line=True), err=True)

    if scheduler is not None:
        check_scheduler(scheduler)
    plan = None
    if not resume:
        plan = plan_analysis(list(sources), settings)
        folder = out if out is not None else new_folder("analysis", Path("results"))
        disk.check_folder(folder, overwrite)
    else:
        assert out is not None, "analyze() refuses --resume without --out"
        folder = out
    bar = ProgressBar("sniff analyze", "game", shown=not quiet and sys.stderr.isatty(),
                      leave=False)
    try:
        with bar, StopOnInterrupt(say) as stop, numba_threads(threads):
            tables = run_analysis(plan, folder, resume=resume, command=command_line(),
                                  scheduler=scheduler,
                                  hooks=Hooks(bar.to, stop.check, say))
    except Stopped:
        say(f"stopped: {folder} keeps its finished parts; complete the analysis with: "
            f"sniff analyze --out {shlex.quote(str(folder))} --resume")
        raise
    settings = plan.settings if plan is not None else None
    if settings is None:
        from sim.analyze.study import AnalysisPlan

        settings = AnalysisPlan.of(disk.read_record(folder)).settings
    sys.stdout.write(printable(summary_text(tables, settings)))
    sys.stdout.write(printable(f"wrote decisions/ (Parquet), strategies.csv, phases.csv, "
                               f"kinds.csv, players.csv, curve.csv, costliest.md, positions/ "
                               f"and summary.json to {shown_name(folder)}\n"))
