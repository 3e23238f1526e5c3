"""The stop a run's own parts imply, recomputed for ``sniff verify``.

A ``--precision`` run and a run stopped by a sequential test (``sniff compare``) record why
and where they stopped in the manifest's ``stopped``, which every reader shows (the report's
"decided H1", the games played). The manifest may have been edited, so verify plays the
stopping rule again over the parts' games in id order, as the run did
(``sim.run.precision.precision_stop``, ``sim.stats.sprt``), and compares: a decision turned
from H1 to H0, a stop moved to fewer games (parts and ledger lines deleted to match), or a
stop given to a run that has no stopping rule is one line naming the field.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from sim.core.seating import team_count
from sim.run.precision import precision_stop
from sim.stats.sprt import DealOutcomes, Sprt
from sim.store.arrow import to_numpy
from sim.store.scan import read_part

__all__ = ["require_recorded_stop", "stop_problem"]


def _replayed(folder: Path, config: dict, chunks: list[dict]) -> tuple[dict | None, int]:
    """The stop the rule reaches over these chunks' games (in order), or None; and the games
    it saw."""
    sides = team_count(config["players"])
    wins, games = np.zeros(sides, dtype=np.int64), 0
    sequential = config.get("sequential")
    if sequential is not None:
        sprt, outcomes = Sprt(*sequential), DealOutcomes(sides, config["deal_group"])
    for record in chunks:
        part = read_part(folder / "games" / record["parts"]["games"]["file"],
                         ["winner_side", "deal_id"])
        winner = to_numpy(part["winner_side"])
        if sequential is not None:
            outcomes.add(winner, to_numpy(part["deal_id"]))
            games += winner.size
            llr = sprt.llr(outcomes.deals, outcomes.mean, outcomes.variance)
            if (decision := sprt.decision(llr)) is not None:
                return {"reason": "sprt", "games": games, "decision": decision, "llr": llr}, games
            continue
        if (stop := precision_stop(wins, games, winner, config["precision"])) is not None:
            return {"reason": "precision", "games": stop[0], "half_width": stop[1]}, stop[0]
        decided = winner[winner >= 0]
        wins += np.bincount(decided, minlength=sides)[:sides]
        games += winner.size
    return None, games


def _close(a, b) -> bool:
    return isinstance(a, int | float) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def stop_problem(folder: Path, manifest: dict, good: dict[int, dict]) -> str | None:
    """What is wrong with the manifest's ``stopped`` against the stop the parts imply (the
    run's sound chunks ``good``, chunk -> ledger record), or None. Only the chunks from 0
    without a gap are replayed: a stop is a prefix of the game-id sequence."""
    config, stopped = manifest["config"], manifest.get("stopped")
    where = f"{Path(folder) / 'manifest.json'}: stopped"
    if config.get("precision") is None and config.get("sequential") is None:
        return None if stopped is None else (
            f"{where} records a stop, but the run has no --precision or sequential test")
    prefix: list[dict] = []  # ledger records of chunks 0, 1, ... without a gap
    for chunk in sorted(good):
        if chunk != len(prefix):
            break
        prefix.append(good[chunk])
    expected, games = _replayed(Path(folder), config, prefix)
    complete = manifest.get("status") == "complete" and len(prefix) == len(good)
    if expected is not None:
        same = isinstance(stopped, dict) and stopped.get("reason") == expected["reason"] \
            and stopped.get("games") == expected["games"] and (
                stopped.get("decision") == expected["decision"]
                and _close(stopped.get("llr"), expected["llr"])
                if expected["reason"] == "sprt"
                else _close(stopped.get("half_width"), expected["half_width"]))
        if not same:
            shown = (f"the test decides {expected['decision']} (LLR {expected['llr']:+.3f})"
                     if expected["reason"] == "sprt" else "every win rate is precise enough")
            return (f"{where} does not match the parts: they stop at {expected['games']:,} "
                    f"games ({shown}); the manifest was edited")
        return None
    if stopped is None:
        return (f"{where} is missing: a complete run records its stop" if complete else None)
    if stopped.get("reason") != "max_games":
        return (f"{where} records a stop at {stopped.get('games')} games "
                f"({stopped.get('reason')}), but the parts' {games:,} games reach none; the "
                "manifest was edited or parts were removed")
    if complete and (stopped.get("games") != games or games != config["games"]
                     or stopped.get("decision", "undecided") != "undecided"):
        return (f"{where} records the --max-games cap at {stopped.get('games')} games, but the "
                f"parts hold {games:,} of the {config['games']:,} planned; the manifest was "
                "edited")
    return None


def require_recorded_stop(run) -> None:
    """For readers (``sniff report``, ``sniff query``): a run stopped by a sequential test
    (``sniff compare``) has the test replayed over its parts before its decision is shown,
    and a stop that does not match them is refused in verify's line. It reads two columns
    of the games, and a compare run is short; a ``--precision`` stop, which may end a run
    of millions of games, is left to ``sniff verify``. ``run``: a ``sim.store.io.Run``."""
    from sim.errors import SniffError

    if run.path is None or run.config.get("sequential") is None:
        return
    if (problem := stop_problem(run.path, run.manifest, run.checked.good)) is not None:
        raise SniffError(problem)
