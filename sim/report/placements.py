"""Placement scores of a run: a sample of its games traced again by the compiled engine.

The batch kernel (and so a run's tables) keeps per-round totals only; each placement's
points are in the engine's event rows, written when a game is traced. A game depends only
on the seed, its deal id, its id and its rotation, so tracing the same ids with the same
compiled strategies gives the same games, and each traced game is checked against the
run's final scores before its placements count.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from sim.core import engine
from sim.core.seating import side_of_team, team_of
from sim.errors import SniffError
from sim.report.tables import value_counts
from sim.store.rundata import RunData

__all__: list[str] = []  # nothing here is used outside sim.report

DEFAULT_PLACEMENT_SAMPLE = 300


def sample_ids(run: RunData, size: int) -> np.ndarray:
    """The first ``size`` games, cut to whole rotation cycles and deals when there is room
    (the run's first games' rows, kept while its figures were added up)."""
    ids = run.figures.sample_rows().get("game_id", np.zeros(0, dtype=np.int64))
    size = min(size, run.n_games, ids.size)
    block = run.players * run.group
    if size >= block:
        size -= size % block
    return ids[:size]


def sample_placements(run: RunData, size: int = DEFAULT_PLACEMENT_SAMPLE) -> dict:
    """Points of every placement in a sample of the run's games, traced again.

    The sample is dropped (with a note) if any traced game differs from the run, e.g. when
    the simulator's code changed since the run was played. Returns ``{"table", "games",
    "placements", "note"}``.
    """
    from sim.kernels.runner import compile_lineup, trace_events
    from sim.run.plan import Plan

    empty = {"table": pd.DataFrame(columns=["side", "points", "placements", "share"]),
             "games": 0, "placements": 0, "note": None}
    ids = sample_ids(run, size)
    if size <= 0 or ids.size == 0:
        return {**empty, "note": "placement scores not sampled (--placement-sample 0)"}
    try:
        plan = Plan.from_config(run.config)
        compile_lineup(plan.lineup, ("trace_game",))
    except SniffError as error:
        return {**empty, "note": f"placement scores not sampled: {error}"}
    players = run.players
    seed = int(run.config["seed"])
    rows = run.figures.sample_rows()  # the sampled games' columns, by the game's place
    place = {int(game_id): index for index, game_id in enumerate(rows["game_id"])}
    seats, points = [], []
    mismatched = 0
    for game_id in ids:
        at = place[int(game_id)]
        rotation = int(rows["rotation"][at])
        events, game_row = trace_events(
            plan.lineup, seed, int(game_id), int(run.config["round_cap"]),
            deal_id=int(rows["deal_id"][at]),
            rotation=rotation)
        # The final scores and the winner: a table whose winners were rewritten (with the
        # ledger recomputed to match) is caught here too.
        expected = [int(rows[f"team{t}_score"][at]) for t in range(run.n_sides)]
        expected.append(int(rows["winner_side"][at]))
        got = [int(v) for v in game_row[engine.GAME_SCORES:engine.GAME_SCORES + run.n_sides]]
        team = int(game_row[engine.GAME_WINNER_TEAM])
        got.append(int(side_of_team(team, rotation, players)) if team >= 0 else -1)
        if got != expected:
            mismatched += 1
            continue
        plays = events[events[:, engine.EVENT_KIND] == engine.EVENT_PLAY]
        team = team_of(plays[:, engine.EVENT_SEAT], players)
        seats.append(side_of_team(team, rotation, players))
        points.append(plays[:, engine.EVENT_POINTS])
    if mismatched:
        return {**empty, "note": (
            f"placement scores not shown: {mismatched} of {ids.size} traced games differ from "
            "the run: the simulator's code changed since it was played, or the table was "
            "edited (sniff verify --replay N checks games field by field)")}
    side = np.concatenate(seats)
    value = np.concatenate(points)
    frames = []
    for k in range(run.n_sides):
        frame = value_counts(value[side == k], "points", "placements")
        frame.insert(0, "side", run.sides[k])
        frames.append(frame)
    return {"table": pd.concat(frames, ignore_index=True), "games": int(ids.size),
            "placements": int(value.size), "first_game": int(ids[0]),
            "last_game": int(ids[-1]),
            "note": f"games {int(ids[0])}..{int(ids[-1])} of the run ({ids.size} games, "
                    f"{value.size:,} placements) traced again; every one matched its final "
                    "scores in the run"}
