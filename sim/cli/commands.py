"""What the ``sniff`` commands do around the library calls: progress, notices, hints.

``sim.cli`` declares the options; each function here runs one command with them: it calls
the feature's plain function (the one a notebook calls), shows progress and notices on
stderr, prints the result, and on a stop prints how to resume.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from sim.display.formatting import printable, shown_name
from sim.display.progress import ProgressBar
from sim.run.settings import RunControl

__all__ = ["ctrl_c_stops"]

MAX_POSITION = 2**20  # a position is a few lines; anything longer is not one


@contextmanager
def ctrl_c_stops() -> Iterator[None]:
    """Ctrl-C inside a library's C code (matplotlib drawing a chart) can come out as that
    library's own error ("Invalid bounding box"); any error after a Ctrl-C is the stop it
    was (``sim.errors.Stopped``: "sniff: interrupted", exit 130), never a traceback."""
    import signal
    import threading

    from sim.errors import Stopped

    received: list[int] = []

    def handle(signum, frame) -> None:
        received.append(signum)
        raise Stopped(signum)

    own = threading.current_thread() is threading.main_thread() and \
        signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    previous = signal.signal(signal.SIGINT, handle) if own else None
    try:
        yield
    except Exception as error:
        if received:
            raise Stopped(received[0]) from error
        raise
    finally:
        if own:
            signal.signal(signal.SIGINT, previous if previous is not None
                          else signal.default_int_handler)


def reading_bar(desc: str, unit: str) -> ProgressBar:
    """The progress bar of a read (``report``, ``verify``): shown only on a terminal, and
    only once the work has taken more than two seconds (quick reads stay silent); its
    callback ``(done, total)`` is ``bar.callback``."""
    return ProgressBar(printable(desc, one_line=True), unit, shown=sys.stderr.isatty(), delay=2,
                       leave=False)


def simulate_command(options: dict, out: Path | None, *, control: RunControl,
                     resume: bool, overwrite: bool, quiet: bool) -> None:
    """``sniff simulate``: options not given on the command line are None; ``control`` holds
    the flags of how to play (its mode, notices and progress are set here)."""
    from sim.run.chunks import RunInterrupted
    from sim.run.settings import quiet_notice, stderr_notice
    from sim.run.simulation import check_target, default_folder, execute, plan_and_mode

    folder = Path(out) if out is not None else None
    plan, mode = plan_and_mode(options, folder, resume, overwrite)
    control.check()
    if folder is None:
        folder = default_folder()
    check_target(plan, folder, mode)

    def announce() -> None:
        if not quiet:
            action = {"new": "writing", "overwrite": "replacing", "resume": "completing"}[mode]
            what = f"{plan.games:,} games in {plan.n_chunks:,} chunk(s) of {plan.chunk_size:,}"
            if plan.precision is not None:  # --precision
                what = (f"until every win rate is within +-{plan.precision:.2%} (at most "
                        f"{plan.games:,} games), in chunks of {plan.chunk_size:,}")
            click.echo(printable(f"sniff: {action} {folder}: {what}", one_line=True), err=True)

    try:
        run = execute(plan, folder, control.but(
            mode=mode, progress=not quiet and sys.stderr.isatty(), announce=announce,
            notice=quiet_notice if quiet else stderr_notice,
            alert=stderr_notice))  # a bad part set aside is said even with -q
    except RunInterrupted as stopped:
        click.echo(printable(f"sniff: {stopped.hint()}", one_line=True), err=True)
        raise
    click.echo(printable(str(run.summary)))  # labels may come from a resumed folder


def openings_command(options: dict, out: Path | None, *, control: RunControl,
                     quiet: bool) -> None:
    """``sniff openings``: play (part by part, each part written and recorded), write the
    folder, print the ranked table. Ctrl-C or SIGTERM stops between chunks, with a notice;
    ``--resume`` completes the study. Options not given are None."""
    from sim.errors import SettingError, Stopped
    from sim.openings.folder import GAMES_DIR
    from sim.openings.output import ranking_text
    from sim.openings.parts import finished_study
    from sim.openings.play import DEFAULT_DEALS, DEFAULT_STRATEGIES, PART_DEALS, make_config
    from sim.openings.study import check_folder, measure_openings, resume_config
    from sim.openings.study import default_folder as openings_folder
    from sim.run.chunks import StopOnInterrupt

    control.check()
    if control.mode == "resume":
        if out is None:
            raise SettingError("{resume} needs {out}, the folder of the study to complete")
        if finished_study(out):  # a resume of a finished study plays nothing
            from sim.openings.folder import load_openings

            sys.stdout.write(ranking_text(*load_openings(out)))
            return
        config = resume_config(out, options)
        folder = out
    else:
        config = make_config(4 if options["players"] is None else options["players"],
                             options["strategies"] or DEFAULT_STRATEGIES,
                             options["deals"] or DEFAULT_DEALS, options["seed"] or 0)
        folder = out if out is not None else openings_folder()
        check_folder(folder, control.mode == "overwrite")

    def say(text: str) -> None:
        click.echo(printable(f"sniff: {text}", one_line=True), err=True)

    bar = ProgressBar("sniff openings", "deal", shown=not quiet and sys.stderr.isatty(),
                      total=config.deals, leave=False)
    done = [0]

    def progress(deals_done: int) -> None:
        done[0] = deals_done
        bar.to(deals_done)

    try:
        with bar, StopOnInterrupt(say) as stop:
            table, summary = measure_openings(config, folder, progress, control.but(alert=say),
                                              between_chunks=stop.check)
    except Stopped:
        games = Path(folder) / GAMES_DIR
        kept = len(list(games.glob("part-*.parquet"))) if games.is_dir() else 0
        say(f"stopped after {done[0]:,} of {config.deals:,} deals: {folder} keeps "
            f"{kept:,} finished part{'' if kept == 1 else 's'} of {PART_DEALS:,} deals and no "
            "summary.json (not a result); complete the study "
            f"with: sniff openings --out {shlex.quote(str(folder))} --resume")
        raise
    sys.stdout.write(ranking_text(table, summary))
    parts = -(-config.deals // PART_DEALS)
    sys.stdout.write(printable(
        f"\n{summary['games']:,} games; wrote openings.parquet, games/ ({parts} part"
        f"{'s' if parts > 1 else ''}), heatmap.png, tile-pairs.csv, ranking.md and "
        f"summary.json to {shown_name(folder)}\n"
    ))


def report_command(paths: Sequence, out: Path | None, *, placement_sample: int | None,
                   title: str | None, openings: Sequence = (),
                   pairings: bool = False, analyses: Sequence = ()) -> dict[str, Path]:
    """``sniff report``: build, write, and print where the files went."""
    from sim.report.build import build
    from sim.report.build import default_folder as report_folder
    from sim.store.folders import check_writable_folder

    folder = Path(out) if out is not None else report_folder()
    check_writable_folder(folder)  # before the minutes of tracing that build may take
    with ctrl_c_stops(), reading_bar("sniff report: reading", "chunk") as bar:
        report = build(paths, placement_sample=placement_sample, title=title,
                       notice=lambda text: click.echo(printable(f"sniff: {text}", one_line=True),
                                                      err=True),
                       openings=openings, pairings=pairings, progress=bar.callback,
                       analyses=analyses)
    with ctrl_c_stops():  # charts drawn while it writes
        files = report.write(folder)
    charts = sorted(name for name in files if name.endswith(".png"))
    what = (f"{len(report.runs)} run(s)" if report.runs else
            "openings" if report.openings else "analysis")
    click.echo(printable(f"report of {what}: {folder / 'report.html'} (self-contained), "
                         f"report.md, report.json and {len(charts)} charts in {folder}/",
                         one_line=True))
    for run in report.runs:
        for note in run.notes:
            click.echo(printable(f"sniff: note: {run.name}: {note}", one_line=True), err=True)
    return files


def tournament_command(options: dict, *, control: RunControl, quiet: bool,
                       max_games: int | None) -> None:
    """``sniff tournament``: print the ranking and the matrix; notices on stderr.
    ``--max-games`` is the library's ``games_per_pair`` of a ``--precision`` tournament."""
    from sim.errors import SniffError
    from sim.run.settings import quiet_notice, stderr_notice
    from sim.tournament import TournamentInterrupted, run_tournament

    if control.mode == "resume":
        if options["games_per_pair"] is None:
            options["games_per_pair"] = max_games
    elif options["precision"] is not None:
        if options["games_per_pair"] is not None:
            raise SniffError("--games-per-pair and --precision exclude each other: "
                             "--precision plays until the win rates are precise enough; "
                             "give its cap as --max-games")
        options["games_per_pair"] = max_games
    elif max_games is not None:
        raise SniffError("--max-games is the cap of a --precision tournament; without "
                         "--precision give --games-per-pair")
    try:
        result = run_tournament(**options, control=control.but(
            progress=not quiet and sys.stderr.isatty(),
            notice=quiet_notice if quiet else stderr_notice))
    except TournamentInterrupted as stopped:
        click.echo(printable(f"sniff: {stopped.hint()}", one_line=True), err=True)
        raise
    click.echo(printable(str(result)))


def tune_command(options: dict, *, out: Path | None, control: RunControl,
                 quiet: bool) -> None:
    """``sniff tune``: options not given on the command line are None."""
    from sim.run.settings import quiet_notice, stderr_notice
    from sim.tune.study import TuneInterrupted, tune

    given = {key: value for key, value in options.items() if value is not None}
    try:
        result = tune(out=out, control=control.but(
            progress=not quiet and sys.stderr.isatty(),
            notice=quiet_notice if quiet else stderr_notice), **given)
    except TuneInterrupted as stopped:
        click.echo(printable(f"sniff: {stopped.hint()}", one_line=True), err=True)
        raise
    click.echo(printable(str(result)))


def hint_command(position_file: Path | None, trace_file: Path | None, *, game: int,
                 round_number: int | None, turn: int | None, budget: int, policy: str,
                 seed: int, output: str, print_position: bool) -> None:
    """``sniff hint``: read the position (a file, stdin or a trace), analyse it, print it."""
    from sim.errors import SniffError
    from sim.hint.estimate import analyse, check_budget, check_policy, hint_json, hint_text
    from sim.hint.position import format_position, parse_position
    from sim.hint.tracker import position_from_trace
    from sim.store.folders import read_user_text

    check_budget(budget)  # the seed is --seed's, checked as it was read (options.seed_value)
    check_policy(policy)
    if position_file is not None and trace_file is not None:
        raise SniffError("give a POSITION file or --trace, not both")
    if position_file is None and trace_file is None:
        raise SniffError("give a POSITION file (- reads standard input), or --trace with "
                         "--round and --turn (docs/hint.md)")
    if trace_file is not None:
        if round_number is None or turn is None:
            raise SniffError("--trace needs --round and --turn (the placement's number in "
                             "its round, from 1)")
        from sim.hint.tracker import game_slice
        from sim.table.replay import check_trace_game, read_trace

        events = read_trace(trace_file)
        game_slice(events, game)  # --game out of range: one line
        check_trace_game(events, game, trace_file)  # an impossible (edited) game: refused
        position = position_from_trace(events, game, round_number, turn).position
    else:
        assert position_file is not None  # one of the two was given
        if round_number is not None or turn is not None:
            raise SniffError("--round and --turn choose a position of a --trace")
        if str(position_file) == "-":
            text, source = sys.stdin.read(MAX_POSITION + 1), "standard input"
            if len(text) > MAX_POSITION:
                raise SniffError("the position on standard input is longer than "
                                 f"{MAX_POSITION:,} characters: not a position")
        else:
            text = read_user_text(position_file, "position", "position", MAX_POSITION)
            source = str(position_file)
        position = parse_position(text, source)
    if print_position:
        click.echo(format_position(position), nl=False)
        return
    hint = analyse(position, budget, policy, seed)
    click.echo(hint_json(hint) if output == "json" else hint_text(hint), nl=False)


def analyze_command(trace_file: Path, *, game: int, seat: int | None, budget: int,
                    policy: str, seed: int) -> None:
    """``sniff replay --analyze``: the decisions of a traced game, the costly ones marked."""
    from sim.hint.analyze import analysis_text, analyze_game
    from sim.hint.tracker import game_slice
    from sim.table.replay import check_trace_game, read_trace

    events = read_trace(trace_file)
    game_slice(events, game)  # --game out of range: one line
    check_trace_game(events, game, trace_file)
    with ProgressBar("sniff replay --analyze", "decision", shown=sys.stderr.isatty(),
                     leave=False) as bar:
        annotated = analyze_game(events, game, seat, budget, policy, seed, bar.to)
    click.echo(analysis_text(annotated, budget, policy, seed), nl=False)


def trace_command(players: int, seed: int, strategies: str, games: int,
                  output: Path | None) -> None:
    """``sniff trace``: the games' events on standard output, or into ``output``."""
    from sim.kernels.runner import lineup_of
    from sim.kernels.trace import iter_trace, write_trace
    from strategies import parse_lineup_text

    lineup = lineup_of(players, parse_lineup_text(strategies))
    events = iter_trace(lineup, seed, games)
    if output is None:
        write_trace(events, sys.stdout)
        return
    from sim.files import write_atomic
    from sim.store.folders import check_output_file

    # A new file or a trace, never a link, device or FIFO, never inside a sniff folder;
    # written beside it under a hidden unique name and renamed into place (sim.files).
    check_output_file(output, "-o", "trace")
    lines = 0

    def write(temporary: Path) -> None:
        nonlocal lines
        lines = write_trace(events, temporary)

    write_atomic(output, write)
    click.echo(printable(f"wrote {lines} events of {games} game(s) to {output}", one_line=True),
               err=True)


MAX_NUMBA_THREADS = 4096  # numba's pool of 100,000 threads ends in a segmentation fault
THREADING_LAYERS = ("default", "safe", "forksafe", "threadsafe", "tbb", "omp", "workqueue")


def check_environment() -> None:
    """Settings of the environment that a library would fail on with a traceback, as one
    line: ``NUMBA_NUM_THREADS`` (read by numba at its import: 0 raises, text prints a
    warning with a traceback in it, 100,000 crashes it) and ``NUMBA_THREADING_LAYER`` (a
    name numba does not know raises at the first parallel kernel)."""
    import os

    from sim.errors import SniffError

    value = os.environ.get("NUMBA_NUM_THREADS", "").strip()
    if value and not (value.isascii() and value.isdigit()
                      and 1 <= int(value) <= MAX_NUMBA_THREADS):  # 100,000 crashes numba
        raise SniffError(f"NUMBA_NUM_THREADS={value!r} in the environment is not a number of "
                         f"threads numba can use: give an integer from 1 to "
                         f"{MAX_NUMBA_THREADS:,} (e.g. 4), or unset it")
    layer = os.environ.get("NUMBA_THREADING_LAYER", "").strip()
    if layer and layer not in THREADING_LAYERS:
        raise SniffError(f"NUMBA_THREADING_LAYER={layer!r} in the environment is not one of "
                         f"numba's threading layers: give one of {', '.join(THREADING_LAYERS)}, "
                         "or unset it")


def plain_environment() -> None:
    """What the command line needs of its process whatever the environment says: text that
    the terminal's encoding cannot show is escaped (``PYTHONIOENCODING=ascii`` prints ``\\u2013``,
    never a traceback), and charts are drawn off screen (an ``MPLBACKEND`` that does not
    exist, or a GUI one, is not used: sniff only writes PNG files). A standard output or
    error that is closed (``>&-``: Python has no stream for it) drops what would go there,
    as a write to a closed pipe does, instead of failing on the first write; a closed
    standard input reads as an empty one."""
    import os

    if sys.stdin is None:  # (<&-) read as an empty input: its end, said by each command
        sys.stdin = open(os.devnull)  # noqa: SIM115 (the process's own, never closed)
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    os.environ["MPLBACKEND"] = "agg"
