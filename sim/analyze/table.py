"""The tables an analysis writes in parts: every analysed decision, and its budget curve.

One Arrow schema per table, each column with the sentence docs/analyze.md gives it (a test
holds the two together), so ``sniff query``, pandas, DuckDB or polars read the same
columns from the parts.
"""

from __future__ import annotations

import pyarrow as pa

KEYS = [
    ("source", pa.string(),
     "the run folder, tournament pairing (TOURNAMENT/PAIRING) or trace file the game comes "
     "from"),
    ("game_id", pa.int64(), "the game's id in its run, or its place in the trace file from 0"),
    ("decision", pa.int32(),
     "the decision's place among the game's decisions (placements with a choice, every seat), "
     "from 0"),
    ("strategy", pa.string(),
     "the strategy of the seat that decided (a trace's seat label: human for a person); search"
     " with --played search"),
    ("players", pa.int8(), "2, 3 or 4"),
]
DECISIONS = KEYS + [
    ("round", pa.int16(), "the round, from 1"),
    ("turn", pa.int16(), "the placement's number in its round, from 1 (sniff hint --trace --turn)"),
    ("seat", pa.int8(), "the seat that decided"),
    ("phase", pa.string(),
     "opening (the round's first placement), boneyard (tiles left to draw), empty (none left) "
     "or drawn (a tile just drawn must be placed)"),
    ("kind", pa.string(),
     "sniff, end, scoring, double or tile: what the choice is about (docs/analyze.md)"),
    ("moves", pa.int8(), "legal moves"),
    ("boneyard", pa.int8(), "tiles left in the boneyard"),
    ("hand", pa.int8(), "tiles in the mover's hand"),
    ("played", pa.string(), "the move played, as sniff hint names it (4-6 on L, open with 5-5)"),
    ("best", pa.string(), "the move with the highest estimated win chance"),
    ("win_played", pa.float64(),
     "estimated chance that the mover's side wins the game after the move played"),
    ("win_best", pa.float64(), "the same after the best move"),
    ("loss", pa.float64(),
     "win chance lost against the best move, cross-fitted (best picked on half the deals, "
     "measured on the other half): the headline figure"),
    ("loss_full", pa.float64(), "win_best - win_played on all the deals"),
    ("loss_low", pa.float64(), "low end of loss_full's paired 95% interval"),
    ("loss_high", pa.float64(), "high end of loss_full's paired 95% interval"),
    ("separated", pa.bool_(), "the move played differs from the best and loss_low > 0"),
    ("best_separated", pa.bool_(),
     "the best move's paired interval against the runner-up lies above 0"),
    ("mark", pa.string(),
     "inaccuracy, mistake, blunder or empty: loss_full at its threshold and separated"),
    ("budget", pa.int32(), "play-outs per move"),
    ("deals", pa.float64(),
     "consistent deals of the hidden tiles (the deals are drawn from these)"),
    ("exact", pa.bool_(),
     "every hand known and the round's rest solved exactly (--endgame exact): no play-out "
     "noise"),
    ("position", pa.string(), "the position in the text form of sniff hint (docs/hint.md)"),
]
CURVE = KEYS + [
    ("budget", pa.int32(), "play-outs per move: the first budget deals of the search"),
    ("loss", pa.float64(), "cross-fitted loss at this budget"),
    ("loss_full", pa.float64(), "loss_full at this budget"),
    ("separated", pa.bool_(), "separated at this budget"),
    ("best_is_played", pa.bool_(), "the best move at this budget is the one played"),
    ("mark", pa.string(), "the mark at this budget"),
]
TABLES = {"decisions": DECISIONS, "curve": CURVE}


def schema(name: str) -> pa.Schema:
    return pa.schema([(column, kind) for column, kind, _ in TABLES[name]])


def arrow_table(name: str, rows: list[dict]) -> pa.Table:
    """Rows (dicts of the table's columns) as an Arrow table of its schema."""
    return pa.Table.from_pylist(rows, schema=schema(name))


def column_text(name: str) -> dict[str, str]:
    """Each column of one analysis table with its description (docs/analyze.md)."""
    return {column: text for column, _, text in TABLES[name]}


__all__ = ["TABLES"]
