"""The ``sniff`` command line: thin wrappers over library functions a notebook can call."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sim.cli.analyze import analyze as analyze_command
from sim.cli.compare import compare as compare_command
from sim.cli.hint import hint as hint_command
from sim.cli.learn import learn as learn_command
from sim.cli.options import (
    ReaderGone,
    SniffGroup,
    TextPath,
    WholeRange,
    at_most,
    players_given,
    players_option,
    positive,
    scheduler_option,
    seed_value,
)
from sim.cli.query import query as query_command
from sim.cli.serve import serve as serve_command
from sim.cli.tune import tune as tune_command
from sim.errors import SniffError

__all__ = ["cli", "main"]


@click.group(cls=SniffGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sniff")
@click.option("--plugin", "plugins", multiple=True, metavar="MODULE",
              help="Import MODULE to register its strategies (repeatable). It must be "
                   "importable, e.g. on PYTHONPATH. SNIFF_PLUGINS=mod1,mod2 does the same.")
def cli(plugins: tuple[str, ...]) -> None:
    """sniff: a compiled Monte Carlo simulator for the domino game American Sniff."""
    if plugins:
        from strategies import load_plugins

        load_plugins(plugins)


@cli.command("strategies")
def list_strategies() -> None:
    """List every registered strategy: name, one-line idea, parameters with defaults.

    Give parameters as NAME:KEY=VALUE,KEY=VALUE (e.g. rollout:samples=64,base=random).
    """
    from strategies import available

    registered = available()
    width = max(len(name) for name in registered)
    for strategy in registered.values():
        click.echo(f"{strategy.name:<{width}}  {strategy.description}")
        if strategy.python:
            click.echo(f"{'':<{width}}  Python player (module {strategy.module}, no params)")
        else:
            click.echo(f"{'':<{width}}  params: {strategy.describe_params()}")


@cli.command()
@click.option("--players", default=4, show_default=True, type=int, callback=players_option,
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--seed", callback=seed_value, default=0, show_default=True, type=int,
              help="Run seed.")
@click.option("--strategies", required=True,
              help="One strategy per seat, or with 4 players one per partnership "
                   "(A,B = seats 0,2 play A and seats 1,3 play B).")
@click.option("--games", default=1, show_default=True, type=int,
              callback=at_most(1_000_000), help="Number of games (game ids 0..K-1).")
@click.option("-o", "--out", "output", type=TextPath(dir_okay=False, path_type=Path),
              help="Write the JSON Lines here instead of standard output.")
def trace(players: int, seed: int, strategies: str, games: int, output: Path | None) -> None:
    """Write whole games as JSON Lines events (the trace format of docs/rules.md)."""
    from sim.cli.commands import trace_command

    trace_command(players, seed, strategies, games, output)


# Options that decide the games default to None here: a new run fills them from
# sim.run.plan.DEFAULTS, a resumed run from its manifest (the help shows the defaults).
@cli.command()
@click.option("--players", type=int, callback=players_given, show_default="4",
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--strategies", show_default="greedy,random",
              help="One strategy per seat, or with 4 players one per partnership.")
@click.option("--games", type=int, callback=positive, show_default="100000",
              help="Games to play (game ids 0..games-1).")
@click.option("--seed", callback=seed_value, type=int, show_default="0",
              help="Run seed (0 .. 2**63-1).")
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Run folder to write [default: results/run-DATE-TIME].")
@click.option("--chunk-size", type=int, callback=positive, show_default="50000",
              help="Games per Parquet part (a resumed run keeps its own).")
@click.option("--duplicate/--no-duplicate", default=None, show_default="no",
              help="Play every deal with the sides swapped (3 players: in all 3 seatings).")
@click.option("--threads", type=int, callback=positive,
              help="Compute threads [default: all cores; with --scheduler: numba threads "
                   "per Dask task, default cores / Dask threads of each machine].")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or notices.")
@click.option("--resume", is_flag=True, help="Complete the interrupted run in --out.")
@click.option("--overwrite", is_flag=True, help="Replace the run already in --out.")
@click.option("--precision", type=float,
              help="Play until every win rate's 95% interval half-width is at most this "
                   "(e.g. 0.005), checked every 600 games; replaces --games.")
@click.option("--max-games", type=int, callback=positive, show_default="1000000",
              help="The cap on games of a --precision run.")
@click.option("--scheduler", metavar="ADDRESS",
              help="Play the chunks on a Dask cluster: tcp://HOST:PORT (a running "
                   "scheduler) or local:N (N local worker processes); same tables. Needs "
                   "pip install 'sniff[dask]'.")
@click.option("--ignore-disk-space", is_flag=True,
              help="Start even if the run's estimated size exceeds the free disk space.")
@click.option("--rounds/--no-rounds", default=None, show_default="rounds",
              help="--no-rounds: write the games table only (faster; no per-round data).")
def simulate(players, strategies, games, seed, out, chunk_size, duplicate, threads, quiet,
             resume, overwrite, precision, max_games, scheduler, ignore_disk_space,
             rounds) -> None:
    """Play many games into a Parquet run folder (games/, rounds/) and print a summary.

    Seats rotate game by game; Ctrl-C stops cleanly and --resume completes the run.
    """
    from sim.cli.commands import simulate_command
    from sim.cli.options import run_control

    options = {"players": players, "strategies": strategies, "games": games, "seed": seed,
               "duplicate": duplicate, "chunk_size": chunk_size, "precision": precision,
               "max_games": max_games, "rounds": rounds}
    control = run_control(threads=threads, scheduler=scheduler,
                          check_space=not ignore_disk_space)
    simulate_command(options, out, control=control, resume=resume, overwrite=overwrite,
                     quiet=quiet)


@cli.command()
@click.option("--players", type=int, callback=players_given, show_default="4",
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--strategies", show_default="greedy",
              help="S (every seat), S,T (the leader's side plays S, everyone else T), or one "
                   "name per seat counted from the leader.")
@click.option("--deals", type=int, callback=at_most(10**8), show_default="10000",
              help="Deals per tile: every deal is played with each of the 28 tiles forced "
                   "as the lead, and once unforced.")
@click.option("--seed", callback=seed_value, type=int, show_default="0",
              help="Run seed (0 .. 2**63-1).")
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Output folder [default: results/openings-DATE-TIME].")
@click.option("--overwrite", is_flag=True, help="Replace the output files in a non-empty --out.")
@click.option("--resume", is_flag=True,
              help="Complete the study stopped in --out (its own settings).")
@click.option("--threads", type=int, callback=positive,
              help="Compute threads [default: all cores; with --scheduler: numba threads "
                   "per Dask task].")
@scheduler_option("the parts (10,000 deals each)")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def openings(players, strategies, deals, seed, out, overwrite, resume, threads, scheduler,
             quiet) -> None:
    """The value of every opening tile: lead each tile by force on the same deals (common
    random numbers) and measure round 1 and the game that follows, with 95% intervals.

    Writes openings.parquet, the games in parts (games/part-NNNNNN.parquet), heatmap.png,
    tile-pairs.csv, ranking.md and summary.json, and prints the ranked table. Memory stays
    bounded whatever --deals; Ctrl-C or SIGTERM stops between chunks, keeping the finished
    parts, and --resume completes the study.
    """
    from sim.cli.commands import openings_command
    from sim.cli.options import run_control

    options = {"players": players, "strategies": strategies, "deals": deals, "seed": seed}
    control = run_control(resume, overwrite, threads=threads, scheduler=scheduler)
    openings_command(options, out, control=control, quiet=quiet)


TALLY_LIMIT = 100_000  # 20,000 strokes: far past any game's score, still a printable tally
MAX_INPUT_LINE = 64 * 2**10  # a typed answer is a few characters


def _read_line() -> str:
    """One line of standard input ('' at end of input), for replay --step and play; a line
    longer than ``MAX_INPUT_LINE`` (``< /dev/zero``, a binary file) is one line of error,
    read no further: the read is bounded whatever the input is."""
    line = sys.stdin.readline(MAX_INPUT_LINE + 1)
    if len(line) > MAX_INPUT_LINE:
        raise SniffError(f"a line of standard input is longer than {MAX_INPUT_LINE:,} "
                         "characters: not an answer typed at the table (is the input a file "
                         "or a device?)")
    return line


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


@cli.command()
@click.argument("trace_file", metavar="TRACE.jsonl",
                type=TextPath(dir_okay=False, path_type=Path))
@click.option("--game", default=0, show_default=True, type=int,
              help="Which game of the file (0 = the first game_start in it).")
@click.option("--step", is_flag=True,
              help="Wait for Enter after each event (q stops; end of input stops quietly).")
@click.option("--ascii", is_flag=True, help="ASCII art only (no box-drawing characters).")
@click.option("--analyze", is_flag=True,
              help="Instead of the events: every decision's move played against the best "
                   "move by estimated win probability, costly ones marked ? and ?? "
                   "(docs/hint.md).")
@click.option("--seat", type=int, help="With --analyze: only this seat's decisions.")
@click.option("--budget", type=int, default=None, show_default="500",
              help="With --analyze: play-outs per move at each decision (2..100,000).")
@click.option("--policy", default="greedy", show_default=True,
              help="With --analyze: who plays the rounds out (as expert's policy).")
@click.option("--seed", callback=seed_value, default=0, show_default=True, type=int,
              help="With --analyze: seed of the sampled deals.")
def replay(trace_file: Path, game: int, step: bool, ascii: bool, analyze: bool,
           seat: int | None, budget: int | None, policy: str, seed: int) -> None:
    """Show one traced game event by event: the layout as a picture, the open ends and the
    count, points, every hand, boneyard size, draws, passes, settlement (each hand's pips
    and their rounding) and the scores, as raw points and as the paper tally.

    With --analyze, mark the placements that cost the most win probability instead.
    """
    if analyze:
        from sim.cli.commands import analyze_command
        from sim.hint.analyze import DEFAULT_ANALYZE_BUDGET

        analyze_command(trace_file, game=game, seat=seat, seed=seed, policy=policy,
                        budget=DEFAULT_ANALYZE_BUDGET if budget is None else budget)
        return
    if seat is not None or budget is not None:
        raise SniffError("--seat and --budget go with --analyze")
    from sim.table.replay import replay as replay_trace

    replay_trace(trace_file, game, _write, step=step, read_line=_read_line, ascii=ascii,
                 echo_input=not sys.stdin.isatty())


@cli.command()
@click.option("--players", default=2, show_default=True, type=int, callback=players_option,
              help="2, 3 or 4 (4 = partnerships 0+2 vs 1+3).")
@click.option("--seat", default=0, show_default=True, type=int,
              help="Your seat, 0..players-1.")
@click.option("--opponents", default="greedy", show_default=True,
              help="One strategy for every other seat, or one per other seat in seat order "
                   "(with 4 players this includes your partner, seat+2).")
@click.option("--seed", callback=seed_value, type=int,
              help="Deal seed [default: a fresh random one, printed].")
@click.option("--trace", "trace_file", type=TextPath(dir_okay=False, path_type=Path),
              help="Save the game's trace here [default: results/play-seed<SEED>.jsonl].")
@click.option("--ascii", is_flag=True, help="ASCII art only (no box-drawing characters).")
@click.option("--hint", "hints", is_flag=True,
              help="Offer hints: type h at your turn for every legal move's estimated chance "
                   "to win (sniff hint, from your public view).")
@click.option("--hint-budget", default=1000, show_default=True, type=int,
              help="With --hint: play-outs per move (2..100,000).")
def play(players: int, seat: int, opponents: str, seed: int | None, trace_file: Path | None,
         ascii: bool, hints: bool, hint_budget: int) -> None:
    """Play one seat yourself against built-in strategies, in the same compiled engine.

    Each turn shows your hand, the layout and your legal placements, numbered: type a
    number and Enter (q quits). Draws and a single legal placement are made for you and
    reported. Input may be piped (one answer per line). The game is saved as a trace for
    `sniff replay`.
    """
    from sim.table.play import PlayQuit, play_game
    from strategies import parse_lineup_text

    if hints:
        from sim.hint.estimate import check_budget

        check_budget(hint_budget, "--hint-budget")
    try:
        play_game(players, seat, parse_lineup_text(opponents), seed, trace_file, _read_line,
                  _write, echo_input=not sys.stdin.isatty(), ascii=ascii,
                  hint_budget=hint_budget if hints else None)
    except PlayQuit:  # what the person asked for: no error, and exit 0
        _write("you quit the game; nothing was saved\n")


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("points", type=WholeRange(-TALLY_LIMIT, TALLY_LIMIT))
@click.option("--ascii", is_flag=True, help="ASCII art instead of Unicode.")
@click.option("--inline", is_flag=True, help="The one-line form replays use beside scores.")
def tally(points: int, ascii: bool, inline: bool) -> None:
    """Print POINTS in the rule text's paper tally: one stroke per 5 points, and a 50-point
    symbol (a big X with a small x in each of its four spaces) built stroke by stroke.

    \b
    Negative scores: a minus sign in front of the tally of the absolute value.
    Not a multiple of 5: the tally of the whole 5s, then the rest in digits (13 -> X +3).
    Under 5 in absolute value (0, 3, -3): just the digits, there is no stroke to draw.
    """
    from sim.table.tally import tally as tally_art
    from sim.table.tally import tally_inline

    click.echo(tally_inline(points, ascii=ascii) if inline else tally_art(points, ascii=ascii))


# --- sniff report and sniff tournament (sim/report/build.py, sim/tournament.py)


@cli.command()
@click.argument("runs", nargs=-1, required=True, metavar="RUN [RUN ...]",
                type=TextPath(path_type=Path))
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Folder for the report [default: results/report-DATE-TIME].")
@click.option("--placement-sample", type=int,
              help="Games per run traced again for the placement-score frequencies (0: none) "
                   "[default: 300 per simulate run; a tournament's pairings only when given, "
                   "with --pairings].")
@click.option("--pairings", is_flag=True,
              help="A tournament: add a section per pairing (by default the report shows the "
                   "tournament in the aggregate).")
@click.option("--title", help="Title of the report [default: from the run names].")
@click.option("--openings", "openings", multiple=True, type=TextPath(path_type=Path),
              help="A `sniff openings` folder whose per-tile section to add (repeatable).")
@click.option("--analysis", "analyses", multiple=True, type=TextPath(path_type=Path),
              help="A `sniff analyze` folder whose section to add (repeatable).")
def report(runs: tuple[Path, ...], out: Path | None, placement_sample: int | None,
           pairings: bool, title: str | None, openings: tuple[Path, ...],
           analyses: tuple[Path, ...]) -> None:
    """Charts and a statistical report (HTML, Markdown, JSON) of simulate runs.

    RUN is a run folder of `sniff simulate`, a `sniff tournament` folder (its pairings, in
    the aggregate: each strategy against the field, matrix, ratings; --pairings adds each
    pairing's section), a `sniff openings` folder (its per-tile section) or a `sniff
    analyze` folder (error rates by phase, the win chance lost per decision). Win rates with
    95% Wilson intervals (overall, by seat, by first leader), differences between
    strategies with intervals and p-values (paired by deal for --duplicate runs), the
    value of leading and of each seat, scoring distributions and, for three or more
    strategies, a pairwise matrix and Bradley-Terry ratings. Runs must have the same
    number of players.
    """
    from sim.cli.commands import report_command

    report_command(list(runs), out, placement_sample=placement_sample, title=title,
                   openings=list(openings), pairings=pairings, analyses=list(analyses))


@cli.command()
@click.option("--players", type=int, callback=players_given, show_default="4",
              help="2, 3 or 4 (4: partnership A against partnership B; 3: triples).")
@click.option("--strategies",
              help="The strategies, comma-separated (name:key=value sets parameters); every "
                   "pairing of them plays (3 players: every triple).")
@click.option("--games-per-pair", type=int, callback=positive, show_default="10000",
              help="Games of each pairing.")
@click.option("--seed", callback=seed_value, type=int, show_default="0",
              help="Tournament seed (each pairing's seed is derived from it).")
@click.option("--duplicate/--no-duplicate", default=None, show_default="no",
              help="Play every deal with the sides swapped (3 players: in all 3 seatings).")
@click.option("-o", "--out", type=TextPath(path_type=Path),
              help="Tournament folder [default: results/tournament-DATE-TIME].")
@click.option("--precision", type=float,
              help="Play each pairing until every win rate's 95% half-width is at most "
                   "this; replaces --games-per-pair.")
@click.option("--max-games", type=int, callback=positive, show_default="1000000",
              help="The cap on games per pairing with --precision.")
@click.option("--chunk-size", type=int, callback=positive,
              help="Games per Parquet part [default: 50000, or the pairing's games].")
@click.option("--threads", type=int, callback=positive,
              help="Compute threads [default: all cores; with --scheduler: numba threads "
                   "per Dask task].")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar or notices.")
@click.option("--resume", is_flag=True, help="Complete the interrupted tournament in --out.")
@click.option("--overwrite", is_flag=True, help="Replace the tournament already in --out.")
@scheduler_option("every pairing's chunks")
def tournament(players, strategies, games_per_pair, seed, duplicate, out, precision,
               max_games, chunk_size, threads, quiet, resume, overwrite, scheduler) -> None:
    """Play every pairing of some strategies; print a ranking with ratings and a matrix.

    Writes each pairing as a simulate run (OUT/pairs/NN-A-vs-B/), a pairwise win-rate heat
    map (matrix.png, matrix.csv) and Bradley-Terry ratings fitted to all games with 95%
    intervals (ratings.png, ranking.csv). `sniff report OUT` gives the full report.
    """
    from sim.cli.commands import tournament_command
    from sim.cli.options import run_control

    options = {"players": players, "strategies": strategies, "games_per_pair": games_per_pair,
               "seed": seed, "duplicate": duplicate, "out": out, "precision": precision,
               "chunk_size": chunk_size}
    control = run_control(resume, overwrite, threads=threads, scheduler=scheduler)
    tournament_command(options, control=control, quiet=quiet, max_games=max_games)


@cli.command()
@click.option("--quick", is_flag=True, help="Small sizes: a smoke run, not figures to publish.")
@click.option("--memory-games", default=10_000_000, show_default=True, type=int,
              callback=positive, help="Games of the peak-memory simulate run.")
@click.option("-o", "--out", "output", default=Path("results/bench.json"), show_default=True,
              type=TextPath(dir_okay=False, path_type=Path), help="Where the JSON goes.")
def bench(quick: bool, memory_games: int, output: Path) -> None:
    """Measure engine, strategy, Python-model and simulate throughput (medians of repeats)."""
    from sim.run.bench import run, table

    report = run(quick=quick, memory_games=memory_games, out=output)
    click.echo(table(report))
    click.echo(f"\nwrote {output}", err=True)


@cli.command()
@click.option("--difference", required=True, type=float,
              help="Win-rate difference to detect, e.g. 0.02 for two points.")
@click.option("--paired", is_flag=True, help="Duplicate deals: count deals, using --sd.")
@click.option("--sd", type=float,
              help="SD of the per-deal differences (from a pilot duplicate run).")
@click.option("--power", default=0.8, show_default=True, type=float, help="Chance of detecting it.")
@click.option("--confidence", default=0.95, show_default=True, type=float,
              help="Two-sided confidence level of the test.")
def plan(difference: float, paired: bool, sd: float | None, power: float,
         confidence: float) -> None:
    """Games (or duplicate deals) needed to detect a win-rate difference (docs/simulate.md)."""
    from sim.stats.planning import plan_text

    click.echo("\n".join(plan_text(difference, paired=paired, sd=sd, power=power,
                                   confidence=confidence)))


# sniff hint lives in its own module (sim/cli/hint.py) to keep this one short.
cli.add_command(hint_command)
cli.add_command(analyze_command)  # sniff analyze: sim/cli/analyze.py, the work in sim/analyze
cli.add_command(learn_command)  # sniff learn: sim/cli/learn.py
cli.add_command(compare_command)  # sniff compare: sim/cli/compare.py
cli.add_command(tune_command)  # sniff tune: sim/cli/tune.py
cli.add_command(query_command)  # sniff query: sim/cli/query.py
cli.add_command(serve_command)  # sniff serve: sim/cli/serve.py, the app in sim/serve


EXIT_ERROR = 2  # bad input, or a failure (a write error): one line on stderr


@cli.command()
@click.argument("folders", nargs=-1, required=True, metavar="FOLDER [FOLDER ...]",
                type=TextPath(path_type=Path))
@click.option("--replay", type=click.IntRange(0, 100_000), default=0, show_default=True,
              metavar="N", help="Also play N games of each run, chosen at random, again and "
                                "compare their game and round rows field by field.")
def verify(folders: tuple[Path, ...], replay: int) -> None:
    """Check run folders (or tournaments) in full: every part against the run's record of
    it (sha256, rows, chunk, games) and its plan, every page decoded, what readers show
    (a stop, compare.json) recomputed. Exit 2 on a problem."""
    from sim.cli.verify import verify_command

    verify_command(folders, replay=replay)


def main(args: list[str] | None = None, prog_name: str | None = None) -> None:
    """Entry point: every error becomes one line on stderr and a non-zero exit. ``args``
    (default: the process's arguments) lets a caller, such as the tests, run a command.

    Exit status: 0 done; 2 an error (bad input, or a failure such as a write error); 130
    stopped by Ctrl-C and 143 by SIGTERM (128 + the signal, the shell's convention).
    """
    from sim.cli.commands import check_environment, plain_environment
    from sim.display.formatting import printable

    plain_environment()
    try:
        check_environment()
        given = list(args) if args is not None else sys.argv[1:]
        cli.main(args=given, prog_name=prog_name, standalone_mode=False, obj={"argv": given})
    except (click.exceptions.Abort, KeyboardInterrupt) as stopped:
        # click turns a KeyboardInterrupt (sim.errors.Stopped: SIGINT or SIGTERM) into Abort
        cause = stopped.__cause__ if isinstance(stopped, click.exceptions.Abort) else stopped
        status = getattr(cause, "exit_status", 130)
        click.echo("sniff: " + ("terminated" if status == 143 else "interrupted"), err=True)
        sys.exit(status)
    except click.exceptions.NoArgsIsHelpError as error:
        click.echo(error.ctx.get_help() if error.ctx else str(error))
        sys.exit(EXIT_ERROR)
    except click.ClickException as error:
        click.echo(f"sniff: error: {printable(error.format_message(), one_line=True)}", err=True)
        sys.exit(EXIT_ERROR)
    except SniffError as error:  # may quote a name from a folder or trace: escaped
        from sim.cli.options import error_text

        click.echo(f"sniff: error: {printable(error_text(error), one_line=True)}", err=True)
        sys.exit(EXIT_ERROR)
    except (BrokenPipeError, ReaderGone):  # our output's reader went away (| head): normal, so
        # end quietly with exit 0, as head expects, and write nothing more to the closed pipe
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # no file descriptor (a test's captured output)
            pass
        sys.exit(0)
    except OSError as error:
        from sim.files import UnsafeFile

        line = str(error) if isinstance(error, UnsafeFile) else \
            f"{error.strerror or error}: {error.filename or ''}".rstrip(": ")
        click.echo(f"sniff: error: {printable(line, one_line=True)}", err=True)
        sys.exit(EXIT_ERROR)


if __name__ == "__main__":
    main()
