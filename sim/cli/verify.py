"""``sniff verify``: every part of each run, tournament or openings folder checked in full,
what readers show recomputed from the parts, and (``--replay N``) games played again; one
line per folder, one ``bad:`` line per problem, every line escaped for the terminal.

Its own module to keep ``sim.cli.commands`` short; the checks are the library's
(``sim.checks.integrity``, ``sim.audit.reproduce``, ``sim.openings.bound``, ...).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

import click

from sim.cli.commands import reading_bar
from sim.display.formatting import printable

__all__: list[str] = []  # nothing here is used outside sim.cli


def say(text: str) -> None:
    """A line of ``sniff verify`` on standard output, escaped for the terminal: folder and
    file names are data (an escape sequence in a folder's name must not reach it)."""
    click.echo(printable(text, one_line=True))


def verify_command(folders: Sequence[Path], replay: int = 0) -> None:
    """``sniff verify``: every part of each run (a tournament: of each pairing) hashed
    against the run's ledger, decoded page by page and its game ids checked; one line per
    run, one per problem; a problem ends in an error (exit 2)."""
    from sim.audit.reproduce import lineup_problem, replay_problems
    from sim.audit.stops import stop_problem
    from sim.checks import integrity
    from sim.checks.verified import mark_verified
    from sim.compare.bound import result_problem
    from sim.errors import SniffError
    from sim.files import link_problems
    from sim.openings.bound import derived_problems
    from sim.openings.folder import STUDY, folder_problems, is_openings_folder
    from sim.openings.play import SLOTS_PER_DEAL
    from sim.openings.reproduce import replay_problem as replay_openings
    from sim.store import io
    from sim.store.folders import size_text
    from sim.store.rundata import (
        TOURNAMENT_MANIFEST,
        pairing_runs,
        read_tournament_manifest,
        stray_pairs,
    )

    runs: list[Path] = []
    results: list[Path] = []  # complete tournaments
    bad = replayable = 0  # problems, and those a resume can mend (bad chunks of a run)
    for folder in map(Path, folders):
        if is_openings_folder(folder):  # its files against the record in its summary.json
            recorded, sound, problems = folder_problems(folder)
            if not problems:  # what readers show beside the tables, recomputed from them
                problems = derived_problems(folder)
            if replay and not problems:  # the games played again, field by field
                played, drawn, found = replay_openings(folder, replay)
                if found is not None:
                    problems.append(f"{folder}: {found}: the games table does not hold the "
                                    "games its deals play (forged, or played by other code)")
                else:  # whole deals: those of the games drawn (a deal may hold several)
                    say(f"{folder}: {played // SLOTS_PER_DEAL:,} deal(s), {played:,} games, "
                        f"played again (the deals of {drawn:,} games drawn at random, "
                        "without repeats): every game row identical")
            for line in problems:
                say(f"bad: {line}")
            bad += len(problems)
            say(f"{folder}: openings folder, {sound} of {recorded} recorded files "
                "sound" + ("" if problems else ", openings.parquet, the summary's figures, "
                           "tile-pairs.csv and ranking.md recomputed from the tables"
                           + heatmap_words(folder)))
        elif os.path.lexists(folder / TOURNAMENT_MANIFEST):  # a FIFO there is one line
            complete = read_tournament_manifest(folder).get("status") == "complete"
            for line in link_problems(folder, {TOURNAMENT_MANIFEST: "manifest",
                                              "pairs": "pairs folder"}):
                say(f"bad: {line}")
                bad += 1
            for line in stray_pairs(folder):  # written by another command, not a pairing
                say(f"bad: {line}")
                bad += 1
            for entry, path in pairing_runs(folder):
                if (path / io.MANIFEST).is_file():
                    runs.append(path)
                elif complete:  # a finished tournament played every pairing
                    say(f"bad: {path}: missing (pairing {entry['name']} of a complete "
                               "tournament)")
                    bad += 1
                else:
                    say(f"{path}: not played yet (the tournament is not complete)")
            if complete:  # its result files, once its pairings are verified below
                results.append(folder)
        elif not folder.is_dir():
            raise SniffError(f"no such run folder: {folder}")
        elif not os.path.lexists(folder / io.MANIFEST) and os.path.lexists(folder / STUDY):
            raise SniffError(f"{folder} holds an openings study stopped before its end (its "
                             f"{STUDY}, no summary.json yet): nothing to verify until it is "
                             f"complete: sniff openings --out {shlex.quote(str(folder))} "
                             "--resume")
        else:
            runs.append(folder)
    for folder in runs:
        manifest = io.read_manifest(folder)
        with reading_bar(f"sniff verify: {folder.name}", "chunk") as bar:
            checked = integrity.check_run(folder, manifest, "full", bar.callback)
        n_chunks = integrity.expected_chunks(manifest)[0]
        status = manifest.get("status")
        links = integrity.run_link_problems(folder, manifest)  # never made by sniff
        replayable -= len(links)  # a resume refuses them: not bad chunks
        problems = links + [p.line() for p in checked.problems]
        if checked.manifest_problem is not None:
            problems.insert(0, checked.manifest_problem)
        elif status == "complete" and (  # what every reader refuses
                missing := integrity.first_missing(checked, n_chunks)) is not None:
            why = ("is not recorded as written by this run" if missing in checked.unrecorded
                   else "missing")
            problems.append(f"{folder / 'games' / io.part_name(missing)}: {why}: the run is "
                            f"complete but chunk {missing} is not there")
        if checked.manifest_problem is None and not problems:  # what readers show, recomputed
            for found in (lineup_problem(folder, manifest),
                          stop_problem(folder, manifest, checked.good),
                          result_problem(folder, manifest, checked.good)):
                if found is not None:
                    problems.insert(0, found)
                    replayable -= 1  # not a bad chunk: --resume cannot mend it
        for chunk, tables in sorted(checked.unrecorded.items()):
            say(f"{folder}: chunk {chunk}: its {' and '.join(tables)} part(s) are not "
                       "recorded (the run stopped after writing them); --resume checks them")
        if replay and not problems:  # the games played again, field by field
            played, found = replay_problems(folder, manifest, checked.good, replay)
            if found is not None:
                problems.append(f"{folder}: {found}: the table does not hold the games its "
                                "seed and lineup play (forged, or played by other code)")
                replayable -= 1
            else:
                say(f"{folder}: {played:,} games chosen at random played again: every "
                           "game and round row identical")
        for line in problems:
            say(f"bad: {line}")
        if not problems and not checked.unrecorded and manifest.get("ledger"):
            mark_verified(folder, checked)  # readers stop saying "not verified" (until it changes)
        bad += len(problems)
        replayable += len(problems) - (checked.manifest_problem is not None)
        live = " (still being written)" if status == "running" else ""
        say(f"{folder}: {len(checked.good)} of {n_chunks} chunks sound, "
                   f"{checked.games:,} games, {size_text(checked.checked_bytes)} hashed and "
                   f"decoded; status {status}{live}" + (f"; {len(problems)} problem(s)"
                                                       if problems else ""))
    bad += sum(tournament_result(folder) for folder in results)
    if bad:
        raise SniffError(f"{bad} problem(s) found" + (
            "; `sniff simulate --out FOLDER --resume` replays the bad chunks (and sets the "
            "bad parts aside)" if replayable else ""))


def heatmap_words(folder: Path) -> str:
    """How verify vouches for an openings folder's ``heatmap.png``: by its record's hash
    (``summary.json`` records it, as every output file; a summary without it is refused
    when the folder is read)."""
    from sim.openings.folder import HEATMAP

    return f", {HEATMAP} matches its record"


def tournament_result(folder: Path) -> int:
    """Verify's lines about a complete tournament's result files (``sim.tournament
    .output_problems``); the number of problems. A pairing a reader refuses is left to
    its own lines below."""
    from sim.errors import SniffError
    from sim.tournament import output_problems

    try:
        problems = output_problems(folder)
    except SniffError:
        return 0
    for line in problems:
        say(f"bad: {line}")
    if not problems:
        charts = "the charts match their record"
        say(f"{folder}: ratings, ranking.csv and matrix.csv recomputed from the "
                   f"pairings; {charts}")
    return len(problems)
