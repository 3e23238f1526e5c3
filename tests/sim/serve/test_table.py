"""A served game runs on a resumable one-game ``GameBatch`` (no replay from the seed, no
engine lock) and is told as the very events ``sniff trace`` writes for the same seed."""

from __future__ import annotations

import pytest

from sim.kernels.batch import GameBatch
from sim.kernels.decisions import BatchSettings
from sim.kernels.runner import lineup_of
from sim.kernels.trace import start_event, trace_games
from sim.serve.table import BatchTable
from strategies import parse_spec


@pytest.mark.parametrize("players,names,seed", [  # one kernel (greedy, random) for all
    (2, ["greedy", "random"], 3), (3, ["greedy", "random", "random"], 5),
    (4, ["greedy", "random"], 8)])
def test_the_tables_events_are_sniff_traces(players, names, seed):
    """All seats built in: the batch pauses only at chance, which the table answers with the
    engine's own deal and draws; every event equals the trace's."""
    expected = trace_games(players, seed, names, 1)
    specs = [parse_spec(n) for n in names]
    batch = GameBatch(players, specs, 1, seed, BatchSettings(external_chance=True))
    table = BatchTable(batch, start_event(lineup_of(players, specs), seed, 0, batch.round_cap))
    assert table.decision() is None and batch.done
    assert table.events == expected
