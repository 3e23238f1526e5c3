"""A batch of resumable games: the engine plays the built-in seats, the caller the others.

``sniff simulate`` plays whole games inside one compiled call. A :class:`GameBatch` keeps
the progress of ``n`` games in arrays instead (each game's full state, its round row, its
results), and one compiled call (:meth:`GameBatch.advance`) plays every game on, in
parallel, until it needs the decision of an *outside* seat or ends. The caller decides for
the outside seats from Python (a NumPy or PyTorch policy, a person, a reinforcement-learning
library) and calls :meth:`advance` again with the moves.

The games are those of ``sniff simulate``: game ``i`` of a batch has game id
``first_game + i``, deal id = game id, the rotation ``game id % players`` (seat ``s`` is
played by lineup position ``(s + rotation) % players``), the same deal streams and each
seat's own strategy stream. Rules are not repeated here: the engine's one game loop runs
both (``advance_game``, built by ``sim.core.loop.make_game_player`` and compiled into the
generated engine module of ``sim.kernels.template``). A built-in strategy decided from
Python through its compiled ``choose`` and the stream it is handed
(:attr:`Decisions.streams`) plays the same games as ``sniff simulate``
(tests/sim/kernels/test_batch.py).

Actions: an action id is the engine's move encoding, ``tile * 4 + arm`` (``N_ACTIONS``
ids; the opening uses arm L). An outside seat is asked only when it has a choice (two or more
legal moves, as every strategy); a single legal move, drawing and passing are played for it.

Hidden information: a :class:`Decisions` row carries the deciding seat's public view only
(``sim.core.observation``), its legal moves and its own random stream. The full states are
private (``_state``). With ``external_chance=True`` the caller also plays chance: the game
waits at each deal (``KIND_DEAL``: supply the deck with :meth:`GameBatch.deal`) and before
each draw (``KIND_DRAW``: the move is the tile id drawn, one of :meth:`GameBatch.boneyard`);
those two accessors see hidden tiles and are meant for a chance player only.
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Callable, Sequence

import numba
import numpy as np

from sim.core import engine
from sim.core.buffers import (
    GAME_ROW,
    KIND_ROW,
    N_MOVES_ROW,
    POSITION_ROW,
    ROW_MOVES,
    SEAT_ROW,
    Dispatch,
    Games,
    Tables,
    new_rows,
)
from sim.core.checks import check_players, check_seed
from sim.core.observation import OBSERVATION_SIZE
from sim.core.rng import seed_word
from sim.errors import SniffError
from sim.kernels.chance import ExternalChance, Referee
from sim.kernels.decisions import (
    KIND_DEAL,
    KIND_DRAW,
    KIND_FORCED,
    KIND_MOVE,
    N_ACTIONS,
    BatchSettings,
    Decisions,
    IllegalMove,
    lineup_positions,
)
from sim.kernels.result import BatchReadings, bad_choice_error, strategy_errors
from sim.kernels.shared import kernel_for
from sim.kernels.sharing import BLOCK_SIZE, note_cost, shared_step
from strategies import MAX_PARAMS, StrategySpec

__all__ = ["GameBatch"]

_ASKING = (KIND_MOVE, KIND_FORCED, KIND_DRAW, KIND_DEAL)
POOL = 3  # sets of waiting rows' buffers a batch keeps to reuse (_free_rows)
# Round slots per game to start with (grown when a game needs more): a 4,096-game batch of
# OUTSIDE (random moves) and three greedy had games of up to 24 rounds, and grew 16 slots to
# 32 once per batch (copying every game's rounds); 32 from the start is the memory it ended
# with anyway (12.6 MB for 4,096 games).
FIRST_SLOTS = 32


def _entry(dispatcher, arguments: tuple) -> Callable:
    """The compiled code of ``dispatcher`` for the types of ``arguments``, to call directly.

    Numba's dispatcher types every argument at every call (for the advance's records, a
    large share of an environment's step: docs/speed.md). A batch passes arrays and records of the
    same types at every step (its own int64 index and answer arrays, its own buffers), so
    the code found for the first call's types is the code every later call would get.
    """
    types = tuple(numba.typeof(argument) for argument in arguments)
    return dispatcher.compile(types)


def _most_references(rows: tuple[np.ndarray, ...]) -> int:
    """The most references any array of ``rows`` has (a view taken from one is one)."""
    return max(sys.getrefcount(array) for array in rows)


# What an array of a set no one holds has, counted on this interpreter through the same
# code (the set's tuple, the loop's name, getrefcount's own argument), so that an
# interpreter that counts differently never hands out a set still held.
#
# What the reuse relies on: CPython's reference counts, and that every holder of a
# Decisions' data holds a Python reference to one of the set's arrays (a Decisions, a
# slice or view of one of its fields: numpy keeps the base array alive through ``.base``).
# What would break it, handing a set out while someone still reads it: a holder that keeps
# only a raw pointer or a buffer without a reference (``memoryview`` of a view holds one;
# a ctypes pointer, a DLPack capsule already consumed, or a tensor made by
# ``torch.from_numpy`` of a *copy* are fine, one made without a reference is not), an
# interpreter without reference counts (PyPy) or with deferred ones (free-threaded
# CPython counts differently: ``_UNUSED`` then only guards against a lower count, not a
# deferred one). tests/sim/kernels/test_batch.py checks that a kept Decisions and a kept view keep
# their values through later steps.
_UNUSED = _most_references(new_rows(1))


# what a batch holds of this process (compiled code, buffers), left out when it is pickled
_COMPILED = frozenset(("_kernel", "_serial", "_gather_rows", "_stepper", "_errors_of", "_pool",
                       "_dispatch", "_inputs"))


class GameBatch(ExternalChance, Referee, BatchReadings):
    """``n_games`` games of one lineup, played on by the engine until an outside seat decides.

    ``lineup``: one entry per lineup position (or two for the partnerships of 4 players),
    each a strategy spec or name, or ``OUTSIDE`` (``None``) for a position the caller plays.
    ``settings``: which games and how (:class:`BatchSettings`). ``events``: for a batch of
    one game, an ``(rows, engine.EVENT_WIDTH)`` int64 buffer that receives the game's trace
    rows (``sim.kernels.trace``) as it is played (``sniff play`` shows them).
    The first :class:`Decisions` is ready at once (:meth:`pending`).
    """

    _decisions: Decisions  # who waits now: set by every step, the first in __init__

    def __init__(
        self, players: int, lineup: Sequence, n_games: int, seed: int,
        settings: BatchSettings | None = None, *, events: np.ndarray | None = None,
    ) -> None:
        settings = settings if settings is not None else BatchSettings()
        self.players = check_players(players)
        self.seats = lineup_positions(self.players, lineup)
        self.seed = check_seed(seed)
        self.round_cap = int(settings.round_cap)
        self.external_chance = bool(settings.external_chance)
        first = settings.first_game
        self.game_ids = (np.arange(first, first + int(n_games), dtype=np.int64)
                         if settings.game_ids is None
                         else np.array(settings.game_ids, dtype=np.int64))
        self.deal_ids = (self.game_ids.copy() if settings.deal_ids is None
                         else np.array(settings.deal_ids, dtype=np.int64))
        self.rotations = (self.game_ids % players if settings.rotations is None
                          else np.array(settings.rotations, dtype=np.int64))
        forced_leads = settings.forced_leads
        if forced_leads is None:
            forced_leads = np.full(self.game_ids.shape[0], -1, dtype=np.int64)
        self._forced = np.ascontiguousarray(forced_leads, dtype=np.int64)
        for name, array in (("deal_ids", self.deal_ids), ("rotations", self.rotations),
                            ("forced_leads", self._forced)):
            if array.shape != self.game_ids.shape:
                raise SniffError(f"{name} must give one value per game "
                                 f"({self.game_ids.shape[0]}), got shape {array.shape}")
        if self.external_chance and np.any(self._forced >= 0):
            raise SniffError("forced leads and external chance do not mix: deal the lead tile")
        self._compile()
        n = self.game_ids.shape[0]
        if events is None:
            events = np.zeros((0, engine.EVENT_WIDTH), dtype=np.int64)
        elif n != 1:
            raise SniffError("an event buffer is for a batch of one game")
        self._events = events
        # ``start_batch`` writes every slot of a game's state and game row, and a round slot
        # is read only once its round wrote it (``results``): none is cleared here (that
        # would write all 12.6 MB of a 4,096-game batch's round slots, most never reached).
        self._state = np.empty((n, engine.STATE_SIZE), dtype=np.int64)
        self._round_rows = np.zeros((n, engine.ROUND_FIELDS), dtype=np.int64)
        self._games = np.empty((n, engine.GAME_FIELDS), dtype=np.int64)
        self._rounds = np.empty((n, FIRST_SLOTS, engine.ROUND_FIELDS), dtype=np.int32)
        self._dealt = np.zeros(n, dtype=bool)
        # compiled entry points, found at first use
        self._serial: Callable | None = None
        self._gather_rows: Callable | None = None
        self._stepper: Callable | None = None
        self._timed = False  # the first step (from the deal, longer per game) is not timed
        self._pool: list[tuple[np.ndarray, ...]] = []  # buffers of waiting rows (_free_rows)
        self._kernel.start_batch(seed_word(self.seed), self.game_ids, players,
                                 int(self.external_chance), self._state, self._games)
        self._run(np.arange(n, dtype=np.int64), np.full(n, -1, dtype=np.int64))

    def _compile(self) -> None:
        compiled = [spec for spec in self.seats if spec is not None]
        # The functions this batch will call, so that a cache holding them gives no compile
        # notice (a small batch, ``sniff play``'s one game, never shares a step's games).
        one = self.game_ids.shape[0] == 1
        uses = ("advance_serial", "gather_decisions") if one else ("step_batch", "first_illegal")
        self._kernel, addresses = kernel_for([s.strategy for s in compiled], uses)
        self.specs: list[StrategySpec | None] = []
        for spec in self.seats:
            if spec not in self.specs:
                self.specs.append(spec)
        self._spec_functions = np.array(
            [engine.Chooser.OUTSIDE if s is None else addresses[s.strategy.name]
             for s in self.specs],
            dtype=np.int64)
        self._spec_params = np.zeros((len(self.specs), MAX_PARAMS), dtype=np.float64)
        for index, spec in enumerate(self.specs):
            if spec is not None:
                self._spec_params[index, : len(spec.values)] = spec.values
        seat_index = np.array([self.specs.index(s) for s in self.seats], dtype=np.int64)
        self._seat_specs = np.zeros((self.game_ids.shape[0], engine.MAX_PLAYERS), dtype=np.int64)
        for seat in range(self.players):
            self._seat_specs[:, seat] = seat_index[(seat + self.rotations) % self.players]
        self._errors_of = type("Seats", (), {"seats": tuple(compiled)})()
        self._inputs = Games(seed_word(self.seed), self.deal_ids, self.game_ids, self._forced,
                             self.round_cap)
        self._dispatch = Dispatch(self.players, self._seat_specs, self._spec_functions,
                                  self._spec_params)

    # --- playing
    def _run(self, games: np.ndarray, answers: np.ndarray) -> None:
        """Advance these games (growing round slots as games ask), then gather who waits."""
        if self._state.shape[0] == 1:
            self._run_one(games, answers)
            return
        rows, timed = self._free_rows(), self._timed
        self._timed = True
        where = (games, self.rotations, *rows)  # the games asked, then where their rows go
        while True:
            bad, room, k = self._step(games, answers, where, timed)
            if not room.size:
                break
            self._grow_rounds()
            games, answers = room, np.full(room.size, -1, dtype=np.int64)
        if bad >= 0:
            self._refuse_bad_choice(bad)
        self._done = not k and bool(np.all(self._state[:, engine.WAITING] == engine.Wait.OVER))
        numbers, observations, moves, masks, streams = rows
        self._decisions = Decisions(
            numbers[GAME_ROW, :k], numbers[SEAT_ROW, :k], numbers[POSITION_ROW, :k],
            numbers[KIND_ROW, :k], observations[:k], moves[:k], numbers[N_MOVES_ROW, :k],
            masks[:k], streams[:k])

    def _free_rows(self) -> tuple[np.ndarray, ...]:
        """Buffers for the next waiting rows (``sim.core.buffers.new_rows``): a set this
        batch made before that no one uses any more, else a fresh one (the last ``POOL``
        are kept). A Decisions, or any array or view taken from it, holds a reference to
        its set's arrays, so a set whose arrays have no other reference is free: a caller
        that keeps a Decisions keeps it unchanged."""
        for rows in self._pool:
            if _most_references(rows) <= _UNUSED:
                return rows
        rows = new_rows(self._state.shape[0])
        self._pool = [*self._pool[1 - POOL:], rows]
        return rows

    def _step(self, games: np.ndarray, answers: np.ndarray, where: tuple, timed: bool) -> tuple:
        """One compiled call (``step_batch``): plays these games on, then fills the rows of
        the games asked (``where[0]``) that wait, from row 0 of the buffers of ``where``,
        on the threads when ``sim.kernels.sharing`` says so (``timed``: its time counts
        there; the first step, from the deal, is longer per game than the others); returns
        (the first game whose strategy chose out of range or -1, the games that wait for
        round slots, the number of rows filled)."""
        shared = shared_step(games.size)
        arguments = (games, answers, self._inputs, self._dispatch, self._state,
                     self._round_rows, Tables(self._games, self._rounds), where,
                     BLOCK_SIZE if shared else 0)
        try:
            self._stepper = self._stepper or _entry(self._kernel.step_batch, arguments)
            if not shared:
                started = time.perf_counter()
                step = self._stepper(*arguments)
            else:
                with numba.parallel_chunksize(1):
                    started = time.perf_counter()
                    step = self._stepper(*arguments)
        except Exception:
            with strategy_errors(self._errors_of):
                raise
        if timed:
            note_cost(shared, games.size, time.perf_counter() - started)
        return step

    def _run_one(self, games: np.ndarray, answers: np.ndarray) -> None:
        """``_run`` for a batch of one game (an environment's step, ``sniff play``): Python
        ints and no array searches, the game's trace rows written as it goes."""
        while True:
            self._advance_one(games, answers)
            if self._state[0, engine.WAITING] != engine.Wait.ROOM:
                break
            self._grow_rounds()
            answers = np.full(1, -1, dtype=np.int64)
        if self._state[0, engine.BAD_CHOICE]:
            self._refuse_bad_choice(0)
        self._decisions = self._gather()

    def _advance_one(self, games: np.ndarray, answers: np.ndarray) -> None:
        """One compiled call that plays the game on. An exception raised in it becomes
        ``strategy_errors``' one line (no context managers entered on the way in: an
        environment steps one game at a time, and entering them cost as much as the step)."""
        arguments = (games, answers, self._inputs, self._dispatch, self._state,
                     self._round_rows, Tables(self._games, self._rounds), self._events)
        try:
            self._serial = self._serial or _entry(self._kernel.advance_serial, arguments)
            self._serial(*arguments)
        except Exception:
            with strategy_errors(self._errors_of):
                raise

    def _grow_rounds(self) -> None:
        """Twice the round slots per game (a game waits for room when it has used them)."""
        grown = np.empty((self._rounds.shape[0], 2 * self._rounds.shape[1],
                          engine.ROUND_FIELDS), dtype=np.int32)
        grown[:, : self._rounds.shape[1]] = self._rounds
        self._rounds = grown

    def _gather(self) -> Decisions:
        """Who waits now (the games of the last Decisions that still wait, in game order)."""
        games, seats, positions, kinds = self._waiting()
        k = games.size
        observations = np.zeros((k, OBSERVATION_SIZE), dtype=np.int64)  # unused slots: 0
        moves = np.empty((k, ROW_MOVES), dtype=np.int64)
        n_moves = np.empty(k, dtype=np.int64)
        masks = np.empty((k, N_ACTIONS), dtype=np.bool_)
        streams = np.empty(k, dtype=np.uint64)
        if k:
            arguments = (self._state, games, observations, moves, n_moves, masks, streams)
            self._gather_rows = self._gather_rows or _entry(self._kernel.gather_decisions,
                                                            arguments)
            self._gather_rows(*arguments)
        return Decisions(games, seats, positions, kinds, observations, moves, n_moves, masks,
                         streams)

    def _waiting(self) -> tuple[np.ndarray, ...]:
        """The games that wait, their deciding seats, those seats' lineup positions and what
        they wait for (fresh arrays); notes whether every game is over."""
        if self._state.shape[0] == 1:  # one game (an environment's): Python ints, no searches
            kind = int(self._state[0, engine.WAITING])
            self._done = kind == engine.Wait.OVER
            if not engine.Wait.MOVE <= kind <= engine.Wait.DEAL:
                return (np.zeros(0, dtype=np.int64),) * 4
            seat = int(self._state[0, engine.TURN_SEAT])
            position = (seat + int(self.rotations[0])) % self.players if seat >= 0 else -1
            row = np.array([0, seat, position, kind], dtype=np.int64)  # one allocation
            return row[0:1], row[1:2], row[2:3], row[3:4]
        waiting = self._state[:, engine.WAITING]
        games = np.flatnonzero((waiting >= engine.Wait.MOVE) & (waiting <= engine.Wait.DEAL))
        self._done = games.size == 0 and bool(np.all(waiting == engine.Wait.OVER))
        seats = self._state[games, engine.TURN_SEAT]
        positions = np.where(seats >= 0, (seats + self.rotations[games]) % self.players, -1)
        return games, seats, positions, waiting[games]

    def _refuse_bad_choice(self, game: int) -> None:
        """Stop naming the strategy that chose a move index out of range in ``game``, or
        raised (and what it raised)."""
        settings = BatchSettings(
            round_cap=self.round_cap, game_ids=self.game_ids[game:game + 1],
            deal_ids=self.deal_ids[game:game + 1], rotations=self.rotations[game:game + 1],
            forced_leads=self._forced[game:game + 1])
        raise bad_choice_error(
            int(self._state[game, engine.BAD_CHOICE]), int(self.game_ids[game]),
            lambda seat: self.specs[int(self._seat_specs[game, seat])],
            lambda spec: raised_message(self.seats, self.players, spec, self.seed, settings))

    def pending(self) -> Decisions:
        """The games waiting now (empty when every game is over)."""
        return self._decisions

    def advance(self, moves, streams=None) -> Decisions:
        """Answer every row of :meth:`pending` (``moves[i]`` for row ``i``), play on; the
        games that wait next.

        ``moves``: action ids (``tile * 4 + arm``) for KIND_MOVE and KIND_FORCED rows, the
        tile id drawn for KIND_DRAW rows, anything for KIND_DEAL rows (:meth:`deal` first).
        ``streams`` (optional, uint64 per row): the seats' random streams after deciding,
        for a strategy that draws from its stream (as the compiled ones do); rows of chance
        are ignored. Raises :class:`IllegalMove` naming the game and move, changing nothing.
        """
        decisions = self._decisions
        moves = self._checked(moves, decisions)
        draws, deals = self._checked_chance(moves, decisions) if self.external_chance else ((), ())
        if streams is not None:
            streams = np.asarray(streams)
            if streams.shape != (len(decisions),):
                raise IllegalMove(f"streams must have shape ({len(decisions)},), "
                                  f"got {streams.shape}")
            rows = np.flatnonzero(decisions.n_moves > 0)
            self._state[decisions.games[rows], engine.STREAMS + decisions.seats[rows]] = (
                streams[rows].astype(np.uint64).view(np.int64))
        for row in draws:
            self._place_draw(int(decisions.games[row]), int(moves[row]))
        if len(deals):
            self._dealt[decisions.games[deals]] = False
        self._run(decisions.games, moves)
        return self._decisions

    def _checked(self, moves, decisions: Decisions) -> np.ndarray:
        """``moves`` as int64, or IllegalMove naming the first game whose move is wrong."""
        array = np.asarray(moves)
        k = len(decisions)
        if array.shape != (k,) or (k and array.dtype.kind not in "iu"):
            raise IllegalMove(f"moves must be {k} integer action ids (one per waiting game), "
                              f"got shape {array.shape} of {array.dtype}")
        # Always a copy: the compiled entry point (``_entry``) was found for a writable
        # contiguous int64 array, and the caller's array may be neither.
        array = array.astype(np.int64)
        if k == 1:  # one game (an environment's step): the same test on Python ints
            move = int(array[0])
            legal = decisions.n_moves[0] == 0 or (
                0 <= move < N_ACTIONS and bool(decisions.masks[0, move]))
            wrong = [] if legal else [0]
        else:  # compiled: NumPy's fancy indexing cost as much as the rest of a step
            first = self._kernel.first_illegal(array, decisions.n_moves, decisions.masks)
            wrong = [] if first < 0 else [first]
        if len(wrong):
            row = int(wrong[0])
            raise IllegalMove(
                f"game {int(decisions.games[row])} (id {int(self.game_ids[decisions.games[row]])}"
                f"), seat {int(decisions.seats[row])}: move {int(array[row])} is not legal "
                f"(legal: {decisions.moves[row, : decisions.n_moves[row]].tolist()})")
        return array

    def __getstate__(self) -> dict:
        """Pickled as its games (arrays, seats, settings), never its compiled kernel (a module
        of this process: ``pickle`` cannot take it); unpickling finds the kernel again."""
        return {name: value for name, value in self.__dict__.items() if name not in _COMPILED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._serial = self._gather_rows = self._stepper = None
        self._pool = []
        self._compile()  # the kernel (from the cache) and what is derived from the seats

    def copy(self) -> GameBatch:
        """An independent copy (same kernel), e.g. for a search that tries moves."""
        twin = object.__new__(GameBatch)
        twin.__dict__.update(self.__dict__)
        for name in ("_state", "_round_rows", "_games", "_rounds", "_dealt", "_events"):
            setattr(twin, name, getattr(self, name).copy())
        twin._decisions = self._decisions.copy()
        twin._pool = []
        return twin


def raised_message(seats: list[StrategySpec | None], players: int, culprit: StrategySpec,
                   seed: int, settings: BatchSettings) -> str | None:
    """What ``culprit`` raised: its one game (``settings`` names it) played again with every
    lineup position of ``culprit`` outside, answered by its ``choose`` run as Python
    (``py_func``) on the very views, moves and streams the compiled one was given. A
    compiled strategy's exception cannot cross the call into it (``sim.core.calls``), so
    this is how its message reaches the user; None when it does not raise again."""
    function = getattr(importlib.import_module(culprit.strategy.module),
                       culprit.strategy.attribute)
    choose = getattr(function, "py_func", function)
    params = np.zeros(MAX_PARAMS, dtype=np.float64)
    params[: len(culprit.values)] = culprit.values
    lineup = [None if spec == culprit else spec for spec in seats]
    batch = GameBatch(players, lineup, 1, seed, settings)
    while not batch.done:
        decisions = batch.pending()
        answers, streams = np.zeros(len(decisions), dtype=np.int64), decisions.streams.copy()
        for row in range(len(decisions)):
            n_moves = int(decisions.n_moves[row])
            moves = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
            moves[:n_moves] = decisions.moves[row, :n_moves]
            rng = np.array([decisions.streams[row]], dtype=np.uint64)
            try:
                index = int(choose(decisions.observations[row].copy(), moves, n_moves,
                                   params, rng))
            except Exception as error:  # what the compiled strategy raised
                return f"{type(error).__name__}: {' '.join(str(error).split())}".rstrip(": ")
            answers[row] = moves[index if 0 <= index < n_moves else 0]
            streams[row] = rng[0]
        batch.advance(answers, streams)
    return None
