"""Run batches of games in the compiled kernel and hand back plain arrays.

A batch is defined by game ids alone: each game's deal stream comes from its deal id and
its seat assignment from its rotation, both functions of the game id, so a run can be cut
into chunks anywhere, played on any number of threads, and give the same rows.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from types import ModuleType

import numba
import numpy as np

from sim.core import engine
from sim.core.buffers import Dispatch, Games, Tables
from sim.core.rng import seed_word
from sim.core.seating import side_of_team
from sim.errors import SniffError
from sim.kernels.batch import raised_message
from sim.kernels.decisions import BatchSettings
from sim.kernels.generate import code_digest
from sim.kernels.python_seats import play_python_batch
from sim.kernels.result import (
    ROUND_CAP,
    BatchResult,
    bad_choice_error,
    gather_rounds,
    strategy_errors,
)
from sim.kernels.shared import kernel_for
from strategies import MAX_PARAMS, Strategy, StrategySpec

__all__ = [
    "BLOCK_SIZE", "compile_lineup", "Lineup", "lineup_code", "lineup_of", "play_batch",
    "ROUND_CAP", "trace_events", "winning_side",
]

PILOT_GAMES = 256
BLOCK_SIZE = 64


@dataclass(frozen=True)
class Lineup:
    """Who plays which seat before rotation: one spec per seat.

    Attributes:
        players: the player count.
        seats: the spec of each lineup seat, before rotation.
    """

    players: int
    seats: tuple[StrategySpec, ...]

    def __post_init__(self) -> None:
        if len(self.seats) != self.players:
            raise SniffError(f"{self.players} players need {self.players} seat strategies")

    @property
    def specs(self) -> list[StrategySpec]:
        """Distinct specs in first-seat order: the index used in ``seat_specs``."""
        distinct: list[StrategySpec] = []
        for spec in self.seats:
            if spec not in distinct:
                distinct.append(spec)
        return distinct


_scratch = threading.local()
_slot_estimates: dict = {}


def _slots_for(lengths: np.ndarray, round_cap: int) -> int:
    return int(min(round_cap, max(8, np.quantile(lengths, 0.99) * 1.25 + 1)))


def _slot_buffer(count: int, slots: int) -> np.ndarray:
    """Per-thread reused round slots: fresh pages would each cost a fault and a clear, and
    the engine writes every slot that is read back, so old contents never show."""
    size = count * slots * engine.ROUND_FIELDS
    buffer = getattr(_scratch, "rounds", None)
    if buffer is None or buffer.size < size:
        buffer = np.empty(max(size, 1), dtype=np.int32)
        _scratch.rounds = buffer
    return buffer[:size].reshape(count, slots, engine.ROUND_FIELDS)


def lineup_of(players: int, specs: list[StrategySpec]) -> Lineup:
    """Seats from the names given: one per seat, or one per partnership with 4 players.
    ``players``: a checked count (``sim.core.checks.check_players``, where it entered); a
    count no strategy plays is refused here too, naming the strategy."""
    if players == 4 and len(specs) == 2:
        specs = [specs[0], specs[1], specs[0], specs[1]]
    for spec in specs:
        if players not in spec.strategy.players:
            raise SniffError(f"strategy {spec.label!r} plays only with "
                             f"{', '.join(map(str, spec.strategy.players))} players, not {players}")
    if len(specs) != players:
        allowed = "4 (one per seat) or 2 (one per partnership)" if players == 4 else players
        raise SniffError(
            f"{players} players need {allowed} strategy names, got {len(specs)}"
            + (" (3 players play alone: name one strategy per seat)" if players == 3 else "")
        )
    return Lineup(players, tuple(specs))


def compile_lineup(lineup: Lineup, uses: tuple[str, ...] = ("play_batch",)):
    """The game loop and the arrays that tell it who plays what.

    Every lineup plays in the one game loop, compiled once (``sim.kernels.shared``); each
    strategy is compiled on its own and called through its address. Returns
    ``(kernel, spec_functions, spec_params, seat_index)``: the address (``Chooser.OUTSIDE`` for a
    Python player) and parameter row of each distinct spec, and each seat's spec before
    rotation.
    """
    kernel, addresses = kernel_for([spec.strategy for spec in lineup.seats], uses)
    specs = lineup.specs
    spec_functions = np.array(
        [engine.Chooser.OUTSIDE if s.strategy.python else addresses[s.strategy.name]
         for s in specs],
        dtype=np.int64)
    spec_params = np.zeros((len(specs), MAX_PARAMS), dtype=np.float64)
    for index, spec in enumerate(specs):
        spec_params[index, : len(spec.values)] = spec.values
    seat_index = np.array([specs.index(spec) for spec in lineup.seats], dtype=np.int64)
    return kernel, spec_functions, spec_params, seat_index


def lineup_strategies(lineup: Lineup) -> list[Strategy]:
    """The strategies that play in a lineup, each once, by name."""
    by_name = {spec.strategy.name: spec.strategy for spec in lineup.seats}
    return [by_name[name] for name in sorted(by_name)]


def lineup_code(lineup: Lineup) -> str:
    """Load (the first time: compile) the lineup's code; the digest of the code its games
    run (:func:`sim.kernels.generate.code_digest`), which a run records to resume safely."""
    compile_lineup(lineup)
    return code_digest(lineup_strategies(lineup))


def play_batch(
    lineup: Lineup,
    seed: int,
    game_ids: np.ndarray,
    deal_ids: np.ndarray | None = None,
    rotations: np.ndarray | None = None,
    forced_leads: np.ndarray | None = None,
    round_cap: int = ROUND_CAP,
    round_slots: int | None = None,
) -> BatchResult:
    """Play the given games; ``rotations[i]`` shifts the lineup round the table for game i.

    Seat ``s`` of a game with rotation ``r`` is played by ``lineup.seats[(s + r) % players]``.
    Each game's rounds go into ``round_slots`` slots (sized by a pilot when None); games
    longer than that are replayed (same streams, same result) with room for every round, so
    no round is dropped. The result holds every round as flat rows. A lineup with a Python
    player (``strategies.register_python``) is played through ``sim.kernels.python_seats``
    (same games, same result).
    """
    game_ids = np.ascontiguousarray(game_ids, dtype=np.int64)
    n_games = game_ids.shape[0]
    deal_ids = game_ids if deal_ids is None else np.ascontiguousarray(deal_ids, dtype=np.int64)
    rotations = (
        np.zeros(n_games, dtype=np.int64)
        if rotations is None
        else np.ascontiguousarray(rotations, dtype=np.int64)
    )
    if forced_leads is None:
        forced_leads = np.full(n_games, -1, dtype=np.int64)
    forced_leads = np.ascontiguousarray(forced_leads, dtype=np.int64)
    if any(spec.strategy.python for spec in lineup.seats):
        return play_python_batch(lineup, seed, game_ids, deal_ids, rotations, forced_leads,
                                 round_cap)
    kernel, spec_functions, spec_params, seat_index = compile_lineup(lineup)
    seat_specs = seat_specs_of(seat_index, rotations, lineup.players)
    games = Games(seed_word(seed), deal_ids, game_ids, forced_leads, int(round_cap))
    dispatch = Dispatch(lineup.players, seat_specs, spec_functions, spec_params)
    batch = _Batch(kernel, games, dispatch, lineup)
    estimate_key = (
        lineup.players, tuple((s.strategy.name, s.values) for s in lineup.seats), round_cap
    )
    if round_slots is None:
        round_slots = _slot_estimates.get(estimate_key)
    if round_slots is None:
        # A pilot sizes the per-game round slots: greedy games last ~6 rounds, random ones
        # ~26, and slots sized for the longest would mostly be memory touched for nothing.
        pilot_games, _ = batch.play(slice(0, min(n_games, PILOT_GAMES)), 0)
        round_slots = _slots_for(pilot_games[:, engine.GAME_ROUNDS], round_cap)
    game_rows, rounds = batch.play(slice(None), round_slots)
    refuse_bad_choices(game_rows, seat_specs, lineup, seed, BatchSettings(
        round_cap=round_cap, game_ids=game_ids, deal_ids=deal_ids, rotations=rotations,
        forced_leads=forced_leads))
    counts = game_rows[:, engine.GAME_ROUNDS]
    # Later batches of the same lineup size their slots from this one (no pilot). Slots
    # only decide buffering, never results.
    _slot_estimates[estimate_key] = _slots_for(counts, round_cap)
    round_game, round_number, round_rows = batch.flat_rounds(rounds, counts, round_slots)
    return BatchResult(
        game_ids, deal_ids, rotations, seat_specs, game_rows, round_game, round_number,
        round_rows,
    )


def seat_specs_of(seat_index: np.ndarray, rotations: np.ndarray, players: int) -> np.ndarray:
    """Each game's seats' spec indexes: seat ``s`` of a game with rotation ``r`` gets the
    spec of lineup position ``(s + r) % players``."""
    seat_specs = np.zeros((rotations.shape[0], engine.MAX_PLAYERS), dtype=np.int64)
    for seat in range(players):
        seat_specs[:, seat] = seat_index[(seat + rotations) % players]
    return seat_specs


@dataclass(frozen=True)
class _Batch:
    """The games of one ``play_batch`` call in its kernel: played in parts, rounds packed."""

    kernel: ModuleType  # the engine's generated module (sim.kernels.generate)
    games: Games
    dispatch: Dispatch
    lineup: Lineup

    def play(self, select: np.ndarray | slice, slots: int) -> tuple[np.ndarray, np.ndarray]:
        """The game rows and round slots of the games ``select`` (``slots`` rounds each)."""
        games, dispatch = self.games, self.dispatch
        part = games._replace(deal_ids=games.deal_ids[select], game_ids=games.game_ids[select],
                              forced_leads=games.forced_leads[select])
        count = part.game_ids.shape[0]
        tables = Tables(np.zeros((count, engine.GAME_FIELDS), dtype=np.int64),
                        _slot_buffer(count, slots))
        # Blocks handed out one at a time: blocks of long games, or a thread that the
        # operating system pauses (a Parquet writer on the same cores), then hold nobody up.
        with numba.parallel_chunksize(1), strategy_errors(self.lineup):
            self.kernel.play_batch(
                part, dispatch._replace(seat_specs=dispatch.seat_specs[select]), tables,
                BLOCK_SIZE)
        return tables.games, tables.rounds

    def flat_rounds(self, rounds: np.ndarray, counts: np.ndarray, slots: int):
        """``(round_game, round_number, round_rows)`` of every round, in game order.

        Rounds go straight to their final rows (game order, then round): a game's rows start
        where the previous game's end. Games longer than their slots are replayed with room
        for every round: same streams, so the same games.
        """
        n_games = counts.shape[0]
        offsets = np.zeros(n_games, dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        columns = np.empty((engine.ROUND_FIELDS, int(counts.sum())), dtype=np.int32)
        long_games = np.flatnonzero(counts > slots)
        gather_rounds(rounds, np.where(counts > slots, 0, counts), offsets, columns)
        if long_games.size:
            _, long_rounds = self.play(long_games, int(counts[long_games].max()))
            gather_rounds(long_rounds, counts[long_games], offsets[long_games], columns)
        round_rows = columns.T  # rows of rounds, stored field by field
        round_game = np.repeat(np.arange(n_games, dtype=np.int64), counts)
        round_number = np.arange(round_rows.shape[0], dtype=np.int64) - offsets[round_game] + 1
        return round_game, round_number, round_rows


def trace_events(
    lineup: Lineup, seed: int, game_id: int, round_cap: int = ROUND_CAP,
    forced_lead: int = -1, *,
    deal_id: int | None = None, rotation: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Event rows and game row of one game, played by the same compiled engine as a batch.

    The game is the one ``play_batch`` plays for the same ids: its deal id (default: its game
    id), its rotation and its forced lead. The event buffer grows until the game fits.
    """
    python = [spec.label for spec in lineup.seats if spec.strategy.python]
    if python:
        raise SniffError(f"{python[0]} is a Python strategy: traces and sniff play take "
                         "compiled strategies only (simulate, compare, tournament and "
                         "openings take it)")
    kernel, spec_functions, spec_params, seat_index = compile_lineup(lineup, ("trace_game",))
    seat_specs = seat_specs_of(seat_index, np.array([rotation], dtype=np.int64),
                               lineup.players)
    ids = np.array([game_id], dtype=np.int64)
    deals = ids if deal_id is None else np.array([deal_id], dtype=np.int64)
    games = Games(seed_word(seed), deals, ids, np.array([forced_lead], dtype=np.int64),
                  int(round_cap))
    dispatch = Dispatch(lineup.players, seat_specs, spec_functions, spec_params)
    capacity = 4096
    while True:
        events = np.zeros((capacity, engine.EVENT_WIDTH), dtype=np.int64)
        tables = Tables(np.zeros((1, engine.GAME_FIELDS), dtype=np.int64),
                        np.zeros((1, 0, engine.ROUND_FIELDS), dtype=np.int32))
        with strategy_errors(lineup):
            kernel.trace_game(games, dispatch, tables, events)
        refuse_bad_choices(tables.games, seat_specs, lineup, seed, BatchSettings(
            round_cap=round_cap, game_ids=ids, deal_ids=deals,
            rotations=np.array([rotation], dtype=np.int64),
            forced_leads=np.array([forced_lead], dtype=np.int64)))
        written = _events_written(events)
        if written < capacity:
            return events[:written], tables.games[0]
        capacity *= 4


def refuse_bad_choices(games: np.ndarray, seat_specs: np.ndarray, lineup: Lineup, seed: int,
                       settings: BatchSettings) -> None:
    """Stop the run when a strategy chose a move index out of range or raised
    (``GAME_BAD_CHOICE``), naming it (and what it raised).

    The engine plays the first move instead so the game ends normally, but such a game is
    not the strategy's play: silently replacing the choice would hide the bug in every table.
    ``settings``: the games' ids, deals, rotations, forced leads and round cap.
    """
    bad = np.flatnonzero(games[:, engine.GAME_BAD_CHOICE])
    if bad.size:
        assert settings.game_ids is not None and settings.deal_ids is not None
        assert settings.rotations is not None and settings.forced_leads is not None
        game = int(bad[0])
        one = slice(game, game + 1)
        that_game = BatchSettings(
            round_cap=settings.round_cap, game_ids=settings.game_ids[one],
            deal_ids=settings.deal_ids[one], rotations=settings.rotations[one],
            forced_leads=settings.forced_leads[one])
        raise bad_choice_error(
            int(games[game, engine.GAME_BAD_CHOICE]), int(settings.game_ids[game]),
            lambda seat: lineup.specs[int(seat_specs[game, seat])],
            lambda spec: raised_message(list(lineup.seats), lineup.players, spec, seed,
                                        that_game))


def _events_written(events: np.ndarray) -> int:
    kinds = events[:, engine.EVENT_KIND]
    empty = np.flatnonzero(kinds == 0)
    return int(empty[0]) if empty.size else events.shape[0]


def winning_side(result: BatchResult, players: int) -> np.ndarray:
    """Lineup side of each game's winner (-1 for unfinished games).

    A side is a lineup position (``sim.core.seating``): rotation is undone, so wins count for
    the strategy whichever seat it sat in.
    """
    team = result.games[:, engine.GAME_WINNER_TEAM]
    return np.where(team >= 0, side_of_team(team, result.rotations, players), -1)
