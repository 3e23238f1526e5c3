"""American Sniff as an OpenSpiel Python game (``pyspiel.load_game("python_sniff")``).

A state is a one-game ``GameBatch`` with ``external_chance=True`` and every seat outside, so
OpenSpiel's chance player makes every random choice the engine would otherwise make:

- the deal, one chance node per dealt tile (outcomes: the tile ids not yet dealt, uniform),
  hands seat by seat from seat 0; then, when the rules draw the leader (round 1, after a
  blocked round), one chance node for it (outcome ``LEADER_ACTION + seat``, uniform);
- each draw from the boneyard (outcomes: the tiles left in it, uniform).

A player node is a seat's choice among two or more legal moves (a single legal move, a pass
and the draw itself the engine plays), action ``tile * 4 + arm`` as everywhere in sim.env.
Returns at the end (``reward_model`` TERMINAL, zero sum): +1 to each seat of the team that
reached the target and -1 to the other seats with 2 and 4 players; with 3 players +1 to the
winner and -1/2 to each other seat; 0 to all when the round cap ends the game.

Observations (``pyspiel.IIGObservationType``): the observation tensor is the seat's public
view encoded by ``sim.env.encoding.encode``; the information-state tensor appends the
round's public record (``encode_record``: a round is dealt afresh, so within the game only
the scores carry over, and the view holds them). The information-state string is the
seat's perfect-recall history: every public event of the game, the tiles dealt to and drawn
by the seat itself, and ``?`` for a tile that went to another seat.

Parameters: ``players`` (2, 3, 4; default 2), ``round_cap`` (default ``ROUND_CAP``).
"""

from __future__ import annotations

import copy

import numpy as np
import pyspiel

from sim.core import observation as slots
from sim.core import record
from sim.core.checks import check_players
from sim.core.engine import HAND_SIZE_FOR_PLAYERS
from sim.core.seating import team_of
from sim.core.tiles import N_TILES
from sim.env.encoding import ENCODING_SIZE, RECORD_ENCODING_SIZE, encode, encode_record
from sim.env.lineups import ROUND_CAP, open_batch
from sim.kernels.decisions import KIND_DEAL, KIND_DRAW, N_ACTIONS

__all__ = ["GAME_NAME", "SniffGame", "SniffState", "StateTable"]

GAME_NAME = "python_sniff"
LEADER_ACTION = N_TILES  # chance outcome LEADER_ACTION + seat: the drawn leader
ROUND_LENGTH = 4 * 5 + 1 + 14 + 28  # deal, leader, draws, decisions: a bound per round
_KIND_CODES = "pfws"  # the record's kinds in the histories: place, forced, withdraw, skip
_RECORD = None  # the event log's code for a reading of the public record
_CHANCE, _TERMINAL = pyspiel.PlayerId.CHANCE, pyspiel.PlayerId.TERMINAL
# a chance node's outcomes: (tile, probability) when ``k`` tiles are left, _OUTCOMES[k][tile]
_OUTCOMES = [()] + [tuple((tile, 1.0 / k) for tile in range(N_TILES))
                    for k in range(1, N_TILES + 1)]

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="American Sniff (sniff's engine)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={"players": 2, "round_cap": ROUND_CAP},
)


class SniffGame(pyspiel.Game):
    """The game's rules for OpenSpiel: players and round cap from the parameters."""

    def __init__(self, params: dict | None = None) -> None:
        params = dict(params or {})
        self.players = check_players(params.get("players", 2))
        self.round_cap = int(params.get("round_cap", ROUND_CAP))
        info = pyspiel.GameInfo(
            num_distinct_actions=N_ACTIONS,
            max_chance_outcomes=LEADER_ACTION + 4,
            num_players=self.players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=self.round_cap * ROUND_LENGTH,
        )
        super().__init__(_GAME_TYPE, info, params)
        self._initial: StateTable | None = None

    def new_initial_state(self) -> SniffState:
        if self._initial is None:  # opened once: later states copy it (OpenSpiel clones a
            self._initial = StateTable(*open_batch(  # state from a new initial one)
                self.players, [None] * self.players, 1, 0, round_cap=self.round_cap,
                external_chance=True), self.players)
        return SniffState(self, copy.deepcopy(self._initial))

    def make_py_observer(self, iig_obs_type=None, params=None) -> SniffObserver:
        perfect_recall = iig_obs_type is not None and iig_obs_type.perfect_recall
        return SniffObserver(perfect_recall)


class StateTable:
    """What a state holds: the batch, its pending decision, the deal so far, and the game's
    event log, from which each seat's history string (the information-state string) is
    built when asked.

    OpenSpiel clones a Python state by a fresh initial state plus ``deepcopy`` of its
    attributes: a batch copies itself (arrays; the compiled kernel is shared), the log and
    the histories last built are immutable and shared, the rest is small.

    Why a log and not the strings: a random playout asks for no history, and growing a
    string per seat at every action cost more than the engine's step. The log is a chain of
    tuples, ``(earlier entry, code, value, seat)``: ``code`` a token's letter shown to
    ``seat`` (-1: to all) with ``value``, the others seeing ``code?``; or ``_RECORD`` with the
    round number and the public record's words as read at that moment. The record only
    grows within a round, so it is read (``flush``) only when something is added to the log
    after it or a history is asked, not after every step; its events are decoded to tokens
    then, once, in the order they happened.
    """

    def __init__(self, batch, decision, players: int, dealt=(), histories=None,
                 seen=(0, 0)) -> None:
        self.batch, self.players = batch, players
        self.dealt: list[int] = list(dealt)
        self.undealt = [tile for tile in range(N_TILES) if tile not in self.dealt]
        self.boneyard = batch.boneyard(0)  # kept here as tiles are drawn (no batch call)
        roots = tuple(histories or [f"p{p}" for p in range(players)])
        # ``seen``: (round, events) of the public record already in ``histories``
        self.log: tuple | None = None  # the newest entry; None: nothing yet
        self.built = (None, roots, tuple(seen))  # (entry, histories, seen) built last
        self.stale = False  # whether the batch advanced since the record was last read
        self.refresh(decision)

    def refresh(self, decision) -> None:
        """The new pending decision; whose turn it is and the legal moves, cached
        (OpenSpiel asks for them several times per action)."""
        self.decision = decision
        self.legal: tuple[int, ...] | None = None
        self.over = over = self.batch.done
        if decision.games.size:  # one game: one row, read as Python ints
            kind, seat = decision.kinds.item(), decision.seats.item()
        else:
            kind = seat = -1
        self.kind, self.seat = kind, seat
        self.chance = chance = not over and (kind == KIND_DEAL or kind == KIND_DRAW)
        self.player = _TERMINAL if over else _CHANCE if chance else seat

    def legal_moves(self) -> tuple[int, ...]:
        """The pending decision's legal actions, sorted (made once per decision)."""
        if self.legal is None:
            decision = self.decision
            self.legal = tuple(sorted(decision.moves[0, : decision.n_moves[0]].tolist()))
        return self.legal

    def advance(self, action: int) -> None:
        """Play ``action`` (a move, or the tile drawn; 0 after a deal) in the batch."""
        self.refresh(self.batch.advance(np.array([action], dtype=np.int64)))
        self.stale = True

    def note(self, code: str, value: int, seat: int = -1) -> None:
        """Log an event seen by all (``seat`` -1) or only by ``seat`` (the others see that
        it happened, not the tile: ``d?``, ``D?``), after the record's events before it."""
        if self.stale:
            self.flush()
        self.log = (self.log, code, value, seat)

    def flush(self) -> None:
        """Log the public record as it is now, if the batch advanced since it was read."""
        if self.stale:
            round_number, words = self.batch.public_record(0)
            self.log = (self.log, _RECORD, round_number, words)
            self.stale = False

    def histories(self) -> tuple[str, ...]:
        """Each seat's history string now, extending the ones built last."""
        self.flush()
        entry, strings, seen = self.built
        if entry is self.log:
            return strings
        entries, node = [], self.log
        while node is not None and node is not entry:
            entries.append(node)
            node = node[0]
        if node is not entry:  # not an ancestor (cannot happen: the log only grows)
            raise RuntimeError("the event log lost the entry its histories were built at")
        pieces: list[list[str]] = [[] for _ in range(self.players)]
        for node in reversed(entries):
            if node[1] is _RECORD:
                tokens, seen = _record_tokens(node[2], node[3], seen)
                if tokens:
                    text = " " + " ".join(tokens)
                    for piece in pieces:
                        piece.append(text)
                continue
            _, code, value, seat = node
            shown, hidden = f" {code}{value}", f" {code}?"
            for player, piece in enumerate(pieces):
                piece.append(shown if seat in (-1, player) else hidden)
        strings = tuple(text + "".join(piece) for text, piece in zip(strings, pieces))
        self.built = (self.log, strings, seen)
        return strings

    def __getstate__(self) -> dict:
        """Pickled (``pickle.dumps(state)``, OpenSpiel's ``serialize_game_and_state``) with
        its log as a list, oldest first: the chain of a long game is deeper than pickle's
        recursion (the batch pickles its games, not its kernel: ``GameBatch``)."""
        entries, node, built = [], self.log, None
        while node is not None:
            if node is self.built[0]:
                built = len(entries)
            entries.append(node[1:])
            node = node[0]
        entries.reverse()
        built = None if built is None else len(entries) - 1 - built
        return {**self.__dict__, "log": entries, "built": (built, *self.built[1:])}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        node, nodes = None, []
        for entry in state["log"]:
            node = (node, *entry)
            nodes.append(node)
        self.log = node
        built = state["built"]
        self.built = (None if built[0] is None else nodes[built[0]], *built[1:])

    def __deepcopy__(self, memo: dict) -> StateTable:
        twin = object.__new__(StateTable)
        twin.__dict__.update(self.__dict__)
        twin.batch = self.batch.copy()
        twin.dealt, twin.undealt = self.dealt.copy(), self.undealt.copy()
        twin.boneyard = self.boneyard.copy()
        return twin


def _record_tokens(round_number: int, words: list[int], seen: tuple[int, int]
                   ) -> tuple[list[str], tuple[int, int]]:
    """The history tokens of the record's events not yet seen (``r<round>`` first when the
    round is new), and what is seen after them."""
    events = words[0]
    start = seen[1] if round_number == seen[0] else 0
    tokens = [] if round_number == seen[0] else [f"r{round_number}"]
    # Decoded in Python from the record's words (Python ints): the compiled ``event``
    # called from Python once per event cost more than the step itself.
    for index in range(start, events):
        kind, seat, move = record.event.py_func(words, 0, index)
        tokens.append(f"{_KIND_CODES[kind]}{seat}:{move}")
    return tokens, (round_number, events)


class SniffState(pyspiel.State):
    """One game in progress: the batch holds the rules' state, this class the chance.

    ``is_chance_node`` and ``legal_actions`` answer in Python from the cached turn (the
    same answers as pyspiel's own, which call back into Python up to five times each)."""

    def __init__(self, game: SniffGame, table: StateTable) -> None:
        super().__init__(game)
        self._players = game.players
        self._hand = int(HAND_SIZE_FOR_PLAYERS[game.players])
        self._table = table

    @property
    def table(self) -> StateTable:
        """What the state holds: its batch (the true position), the deal so far, the log of
        its events (a referee reads it: examples/openspiel_ismcts.py)."""
        return self._table

    # --- whose turn
    def current_player(self) -> int:
        return self._table.player

    def is_chance_node(self) -> bool:
        return self._table.chance

    def is_terminal(self) -> bool:
        return self._table.over

    def legal_actions(self, *player: int) -> list[int]:
        table = self._table
        if table.over or table.chance or (player and player[0] != table.seat):
            return pyspiel.State.legal_actions(self, *player)  # pyspiel's rules for these
        return list(table.legal_moves())

    def _legal_actions(self, player: int) -> list[int]:
        return list(self._table.legal_moves())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        table = self._table
        if table.kind == KIND_DRAW:
            tiles = table.boneyard
        elif len(table.dealt) < self._players * self._hand:
            tiles = table.undealt
        else:
            return [(LEADER_ACTION + seat, 1.0 / self._players) for seat in range(self._players)]
        return list(map(_OUTCOMES[len(tiles)].__getitem__, tiles))

    # --- moves
    def _apply_action(self, action: int) -> None:
        table = self._table
        if table.kind == KIND_DEAL:
            self._deal(int(action))
            return
        if table.kind != KIND_DRAW:
            table.advance(action)
            return
        table.note("D", action, table.seat)
        table.advance(action)  # refuses a tile not in the boneyard
        table.boneyard.remove(action)

    def _deal(self, action: int) -> None:
        table = self._table
        if action < LEADER_ACTION:
            table.note("d", action, len(table.dealt) // self._hand)
            table.dealt.append(action)
            table.undealt.remove(action)
            if len(table.dealt) < self._players * self._hand or table.batch.needs_leader(0):
                return
            leader = -1
        else:
            leader = action - LEADER_ACTION
            table.note("L", leader)
        table.batch.deal(0, table.dealt + table.undealt, leader)
        # every hand is dealt: the tiles left are the boneyard
        table.boneyard, table.dealt, table.undealt = table.undealt, [], list(range(N_TILES))
        table.advance(0)

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if action >= LEADER_ACTION:
                return f"leader {action - LEADER_ACTION}"
            return f"tile {action}"
        return f"tile {action // 4} arm {'LRUD'[action % 4]}"

    # --- outcome
    def returns(self) -> list[float]:
        if not self._table.over:
            return [0.0] * self._players
        winner = int(self._table.batch.winners[0])
        if winner < 0:
            return [0.0] * self._players
        loss = -1.0 if self._players != 3 else -0.5
        return [1.0 if team_of(seat, self._players) == winner else loss
                for seat in range(self._players)]

    # --- what a seat knows
    def view(self, player: int) -> np.ndarray:
        """The public view of ``player`` now (``sim.core.observation`` slots)."""
        return self._table.batch.observe(0, player)

    def history_string(self, player: int) -> str:
        """``player``'s perfect-recall history: public events, its own tiles, ``?`` others."""
        return self._table.histories()[player]

    def __str__(self) -> str:
        scores = self._table.batch.scores[0].tolist()
        return f"round {int(self._table.batch.round_numbers[0])} scores {scores}: " + \
            self._table.histories()[0][-200:]


class SniffObserver:
    """OpenSpiel's observer: the encoded view, plus the round's record for the info state."""

    def __init__(self, perfect_recall: bool) -> None:
        self.perfect_recall = perfect_recall
        size = ENCODING_SIZE + (RECORD_ENCODING_SIZE if perfect_recall else 0)
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor[:ENCODING_SIZE]}
        if perfect_recall:
            self.dict["record"] = self.tensor[ENCODING_SIZE:]

    def set_from(self, state: SniffState, player: int) -> None:
        view = state.view(player)
        self.tensor[:ENCODING_SIZE] = encode(view)
        if self.perfect_recall:
            self.tensor[ENCODING_SIZE:] = encode_record(view)

    def string_from(self, state: SniffState, player: int) -> str:
        if self.perfect_recall:
            return state.history_string(player)
        view = state.view(player)
        return (f"p{player} round {view[slots.ROUND]} hand {view[slots.HAND]:x} layout "
                f"{view[slots.LAYOUT]:x} scores {view[slots.SCORE:slots.SCORE + 4].tolist()} "
                f"sizes {view[slots.HAND_SIZE:slots.HAND_SIZE + 4].tolist()} "
                f"boneyard {view[slots.BONEYARD_SIZE]} record {view[slots.RECORD]}")


def register_openspiel() -> None:
    """Register ``python_sniff`` with pyspiel (once; importing this module does it)."""
    if GAME_NAME not in pyspiel.registered_names():
        pyspiel.register_game(_GAME_TYPE, SniffGame)


register_openspiel()
