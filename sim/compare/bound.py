"""``compare.json`` recomputed from the run's parts, for ``sniff verify``.

A compare run's ``compare.json`` (the decision, the LLR, the hypotheses, the estimate) is
what ``sniff compare`` printed and what a reader of the folder shows; the folder may have
been edited, so verify rebuilds the :class:`~sim.compare.play.Comparison` from the games
parts (the run's own test settings, its chunks in order) and compares every field: an
edited decision, LLR, estimate or hypothesis is one line naming the field.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from sim.compare import RESULT
from sim.compare.play import Comparison, _finite
from sim.core.seating import team_count
from sim.errors import SniffError
from sim.files import read_regular
from sim.stats.sprt import DealOutcomes, Sprt
from sim.store.arrow import to_numpy
from sim.store.scan import read_part

__all__ = ["result_problem"]

MAX_RESULT = 16 * 2**20  # compare.json is kilobytes (a line per chunk)


def replayed(folder: Path, manifest: dict, good: dict[int, dict]) -> dict:
    """The ``compare.json`` the run's sound chunks (chunk -> ledger record) give."""
    config = manifest["config"]
    sprt = Sprt(*config["sequential"])
    outcomes = DealOutcomes(team_count(config["players"]), config["deal_group"])
    games, history = 0, []
    for chunk in sorted(good):
        part = read_part(Path(folder) / "games" / good[chunk]["parts"]["games"]["file"],
                         ["winner_side", "deal_id"])
        outcomes.add(to_numpy(part["winner_side"]), to_numpy(part["deal_id"]))
        games += part.num_rows
        llr = sprt.llr(outcomes.deals, outcomes.mean, outcomes.variance)
        history.append({"games": games, "llr": llr, "estimate": outcomes.mean})
    llr = sprt.llr(outcomes.deals, outcomes.mean, outcomes.variance)
    labels = config["labels"]
    comparison = Comparison(
        a=labels[0], b=labels[1], players=config["players"], seed=config["seed"], sprt=sprt,
        decision=sprt.decision(llr) or "undecided", games=games, deals=outcomes.deals,
        llr=llr, estimate=outcomes.interval(), history=history)
    return _finite(comparison.to_dict())


def _difference(expected, recorded, where: str = "") -> str | None:
    """The first field (``estimate.difference``) where the two differ, or None."""
    if isinstance(expected, dict):
        if not isinstance(recorded, dict) or set(recorded) != set(expected):
            return where or "the file"
        return next((found for key in expected if (found := _difference(
            expected[key], recorded[key], f"{where}.{key}" if where else key))), None)
    if isinstance(expected, list):
        if not isinstance(recorded, list) or len(recorded) != len(expected):
            return where
        return next((found for i, (e, r) in enumerate(zip(expected, recorded))
                     if (found := _difference(e, r, f"{where}[{i}]"))), None)
    if isinstance(expected, float) and isinstance(recorded, int | float) \
            and not isinstance(recorded, bool):
        return None if math.isclose(expected, recorded, rel_tol=1e-9, abs_tol=1e-12) else where
    same = type(expected) is type(recorded) and expected == recorded
    return None if same else where


def result_problem(folder: Path, manifest: dict, good: dict[int, dict]) -> str | None:
    """What is wrong with a compare run's ``compare.json`` against its parts, or None (a
    run that is not a compare run, or has not written one yet)."""
    path = Path(folder) / RESULT
    if manifest["config"].get("sequential") is None or not os.path.lexists(path):
        return None
    try:
        recorded = json.loads(read_regular(path, MAX_RESULT, RESULT))
    except (OSError, ValueError, RecursionError) as error:
        return f"{path}: cannot be read ({error})"
    try:
        expected = replayed(folder, manifest, good)
    except ValueError as error:  # chunks that do not hold whole deals
        raise SniffError(f"{folder}: its parts are not a compare run's ({error})") from None
    field = _difference(expected, recorded)
    if field is None:
        return None
    return (f"{path}: {field} does not match the run's parts (recomputed from its games); "
            "the file was edited")
