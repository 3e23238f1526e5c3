"""``sniff verify --replay N``: a run proven by playing some of its games again.

Every game is a function of the run seed, its game id (which gives its deal and rotation),
the lineup and the code. So N games chosen at random among the run's sound chunks are
played again here, with the run's recorded seed, lineup, round cap and kernel, through the
same path ``sniff simulate`` takes (``sim.kernels.runner.play_batch``, then
``sim.store.tables``' rows), and their game and round rows are compared with the parts,
field by field. A table forged consistently (winners flipped in every part, the ledger
recomputed to match) passes every hash, and fails here.

What it cannot prove: that the code is what the run recorded. The replay refuses when the
installed code's digest differs from the run's; a forger who ships other code *and*
records its digest makes a different simulator agree with its own forgery, so the proof
is as good as the code you run it with (your own install, not one sent with the folder).
A sample of N games finds a forgery that touches a fraction f of the games with
probability 1 - (1 - f)^N (N = 100 finds one of every 20 games altered 99.4% of the time).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sim.errors import SettingError, SniffError
from sim.run.plan import Plan, rotation_for
from sim.store import io
from sim.store.scan import read_part

__all__ = ["first_difference", "lineup_problem", "replay_problems", "sample_ids"]

DEFAULT_REPLAY = 100
MAX_REPLAY = 100_000  # a verify, not a second run
# what a manifest's configuration says of its lineup besides its strategies and that
# follows from them in every version (a report names the seats by ``labels``), so an edit
# shows up against them; not ``modules`` nor ``strategy_params``, which a later version
# may name or fill differently for the same games
DERIVED = ("labels", "strategy_names", "deal_group")


def lineup_problem(folder: Path, manifest: dict) -> str | None:
    """What in the manifest's configuration does not follow from its strategies and
    players (labels reversed: a report would credit one strategy's wins to another), or
    None; None too when a plugin the run needs is not loaded (``--replay`` says so)."""
    config = manifest["config"]
    try:
        derived = Plan.from_config(config).config()
    except SniffError:
        return None
    for key in DERIVED:
        if key in config and config[key] != derived[key]:
            return (f"{Path(folder) / io.MANIFEST}: config.{key} is {config[key]!r}, but "
                    f"its strategies {','.join(config['strategies'])} give "
                    f"{derived[key]!r}: the manifest (and the parts' footers) were edited")
    return None


def sample_ids(good: dict[int, dict], count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` game ids drawn at random (without repeats) from the sound chunks' games."""
    ranges = [(r["first_game"], r["end_game"]) for _, r in sorted(good.items())]
    sizes = np.array([hi - lo for lo, hi in ranges], dtype=np.int64)
    total = int(sizes.sum())
    picks = np.sort(rng.choice(total, size=min(count, total), replace=False))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    where = np.searchsorted(np.cumsum(sizes), picks, side="right")
    firsts = np.array([lo for lo, _ in ranges], dtype=np.int64)
    return firsts[where] + picks - starts[where]


def _played(plan: Plan, manifest: dict, ids: np.ndarray) -> dict:
    """The rows ``sniff simulate`` writes for these games, played again here."""
    from sim.kernels.runner import play_batch, winning_side

    labels = [spec.label for spec in plan.lineup.specs]
    result = play_batch(plan.lineup, plan.seed, ids, deal_ids=ids // plan.group,
                        rotations=rotation_for(ids, plan.players), round_cap=plan.round_cap)
    side = winning_side(result, plan.players)
    tables = {"games": io.games_table(result, plan.players, labels, manifest["run_id"],
                                      plan.seed, side, round_points=not plan.rounds)}
    if plan.rounds:
        tables["rounds"] = io.rounds_table(result, plan.players, manifest["run_id"])
    return tables


def _recorded(folder: Path, good: dict[int, dict], ids: np.ndarray, table: str) -> pa.Table:
    """The parts' rows of these games (only the chunks that hold them are read)."""
    pieces = []
    for _, record in sorted(good.items()):
        inside = ids[(ids >= record["first_game"]) & (ids < record["end_game"])]
        if inside.size:
            part = read_part(Path(folder) / table / record["parts"][table]["file"])
            pieces.append(part.filter(pc.is_in(part["game_id"], pa.array(inside))))
    return pa.concat_tables(pieces) if pieces else None


def first_difference(expected: pa.Table, found: pa.Table | None, table: str,
                     command: str = "sniff simulate") -> str | None:
    """The first field that differs between the rows played again and those of the parts
    (``game 123: games.winner_side is 1 in the part, 0 played again``), or None; ``command``
    names the writer of ``table`` (a run's, or an openings folder's games)."""
    if found is None or set(found.column_names) != set(expected.column_names):
        return f"the {table} rows do not have the columns {command} writes"
    keys = [("game_id", "ascending")] + ([("round_number", "ascending")]
                                         if table == "rounds" else [])
    expected, found = expected.sort_by(keys), found.sort_by(keys)
    if expected.num_rows != found.num_rows:
        return (f"the sampled games have {found.num_rows:,} {table} rows in the parts, "
                f"{expected.num_rows:,} played again")
    for name in expected.column_names:
        want, have = expected[name].to_pylist(), found[name].to_pylist()
        if want != have:
            row = next(i for i, (a, b) in enumerate(zip(want, have)) if a != b)
            game = expected["game_id"][row].as_py()
            where = f"game {game}" + (f", round {expected['round_number'][row].as_py()}"
                                      if table == "rounds" else "")
            return (f"{where}: {table}.{name} is {have[row]!r} in the part, {want[row]!r} "
                    "played again")
    return None


def replay_problems(folder: Path, manifest: dict, good: dict[int, dict], count: int,
                    rng: np.random.Generator | None = None) -> tuple[int, str | None]:
    """Play ``count`` random games of the run's sound chunks ``good`` again and compare
    their rows with the parts: ``(games replayed, the first difference or None)``."""
    from sim.run.signature import identity_problem, lineup_identity

    if not 0 <= count <= MAX_REPLAY:
        raise SettingError(f"{{replay}} must be from 0 to {MAX_REPLAY:,} games, got {count}")
    if count == 0 or not good:
        return 0, None
    plan = Plan.from_config(manifest["config"])  # an unloaded plugin is one line
    if problem := identity_problem(manifest, lineup_identity(plan.lineup)):
        raise SniffError(f"cannot replay {folder}: {problem}, so its games would differ "
                         "whatever the folder holds; verify it with the release that played it")
    rng = rng or np.random.default_rng(secrets.randbits(64))  # a forger cannot know which
    ids = sample_ids(good, count, rng)
    played = _played(plan, manifest, ids)
    for table, expected in played.items():
        found = _recorded(folder, good, ids, table)
        if (difference := first_difference(expected, found, table)) is not None:
            return ids.size, difference
    return ids.size, None
