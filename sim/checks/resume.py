"""What ``--resume`` keeps of a run folder: every part hashed against the ledger, a bad one
set aside (never deleted) and its chunk played again, a chunk written but not recorded kept
once its parts check out.

Apart from ``sim.checks.integrity`` (the ledger and the checks every reader makes) because
it is the one check that changes the folder: it moves parts aside and records chunks.
"""

from __future__ import annotations

from pathlib import Path

from sim.checks.footers import decode_problem, identity_problem, read_footer
from sim.checks.integrity import (
    append_record,
    check_run,
    chunk_record,
    expected_chunks,
    part_name,
    part_record,
    set_aside,
    tables_of,
)
from sim.errors import SniffError

__all__ = ["resume_chunks"]


def resume_chunks(folder: Path, manifest: dict, notice, alert=None) -> set[int]:
    """The chunks a resume keeps, after every part is hashed against the ledger.

    A bad part (altered, truncated, from another chunk or run, not in the plan) is moved
    aside into ``NAME/set-aside/`` with its chunk's other part, never deleted, and its
    chunk is played again; ``alert`` (default ``notice``) gets one line each, naming the
    part, what is wrong and where it went. A chunk whose parts were renamed into place but
    not recorded (the process stopped between the two, or a Dask worker's chunk landed
    after a stop) is kept and recorded if its footers name this chunk of this run and every
    page decodes with its checksum.
    """
    folder = Path(folder)
    tables = tables_of(manifest["config"])
    n_chunks, size, total = expected_chunks(manifest)
    checked = check_run(folder, manifest, "hash")
    if checked.manifest_problem is not None:  # replaying would play what the edit says
        raise SniffError(f"cannot resume: {checked.manifest_problem}")
    for problem in checked.problems:
        moved = []
        paths = [problem.path] if problem.chunk is None else [
            folder / t / part_name(problem.chunk) for t in tables]
        for path in paths:
            if path.is_file():
                moved.append(str(set_aside(folder, path)))
        again = "; played again" if problem.chunk is not None else ""
        (alert or notice)(f"{problem.line()}{again}; set aside: "
                          f"{', '.join(moved) or 'nothing to move'}")
    done = set(checked.good)
    for chunk, have in sorted(checked.unrecorded.items()):
        if len(have) < len(tables):
            notice(f"chunk {chunk}: only its {have[0]} part was written; played again")
            continue
        lo, hi = chunk * size, min(total, (chunk + 1) * size)
        reason = next((r for t in tables for r in (
            identity_problem(folder / t / part_name(chunk), t, chunk, lo, hi,
                              manifest["run_id"], None, manifest["config"]),
            decode_problem(folder / t / part_name(chunk), t, lo, hi, manifest["config"]))
            if r), None)
        if reason is None:
            append_record(folder, _record_of(folder, tables, chunk, lo, hi, manifest["run_id"]))
            notice(f"chunk {chunk}: written but not recorded (the run stopped between the "
                   "two); its parts check out and are kept")
            done.add(chunk)
        else:
            moved = [str(set_aside(folder, folder / t / part_name(chunk))) for t in tables]
            (alert or notice)(f"chunk {chunk}: {reason}; played again; set aside: "
                              f"{', '.join(moved)}")
    return done


def _record_of(folder: Path, tables, chunk: int, lo: int, hi: int, run_id: str) -> dict:
    parts = {}
    for table in tables:
        path = folder / table / part_name(chunk)
        parts[table] = part_record(path, read_footer(path)[0])
    return chunk_record(chunk, lo, hi, run_id, parts)

