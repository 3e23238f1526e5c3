"""The resumable batch (sim.kernels.batch): outside seats, hidden information, bad moves,
chance from outside.

A built-in strategy decided from Python through the batch (its compiled ``choose`` called
on each Decisions row with the stream the row hands over) must give the tables that
``runner.play_batch`` (``sniff simulate``) gives for the same seed: the batch runs the same
game loop, streams and rotation. The compiled seats of every batch here are ``greedy`` and
``random`` (one kernel, the one ``sniff play`` and the Python players' tests use too); the
outside seats play any built-in, called from Python.
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

import strategies
from sim.core import engine
from sim.core import observation as view
from sim.core.rng import seed_word
from sim.core.tiles import N_TILES
from sim.errors import SniffError
from sim.kernels import batch as batch_module
from sim.kernels import generate as kernels
from sim.kernels.batch import GameBatch
from sim.kernels.decisions import (
    KIND_DEAL,
    KIND_DRAW,
    N_ACTIONS,
    OUTSIDE,
    BatchSettings,
    IllegalMove,
)
from sim.kernels.runner import lineup_of, play_batch
from strategies import MAX_PARAMS, parse_spec
from tests.helpers import TESTS
from tests.helpers.compiled_functions import cached

# the engine's deal, called from Python through a cached wrapper
# (tests/helpers/compiled_functions.py)
deal_round = cached("sim.core.engine.deal_round")

GAMES = 40
FIELDS = ("games", "seats", "positions", "kinds", "observations", "moves", "n_moves", "masks",
          "streams")


def _choose_function(spec):
    """The strategy's compiled choose, through its cached wrapper (its ``@njit`` function
    called from Python would be compiled again in every test process)."""
    return kernels.python_choose(spec.strategy)


def _play_outside(batch: GameBatch, spec) -> int:
    """Decide every outside row with ``spec``'s compiled choose; the number of decisions."""
    choose = _choose_function(spec)
    params = np.zeros(MAX_PARAMS, dtype=np.float64)
    params[: len(spec.values)] = spec.values
    rng = np.zeros(1, dtype=np.uint64)
    asked = 0
    while not batch.done:
        decisions = batch.pending()
        moves = np.empty(len(decisions), dtype=np.int64)
        streams = decisions.streams.copy()
        for row in range(len(decisions)):
            rng[0] = decisions.streams[row]
            index = choose(decisions.observations[row], decisions.moves[row],
                           decisions.n_moves[row], params, rng)
            moves[row] = decisions.moves[row, index]
            streams[row] = rng[0]
        asked += len(decisions)
        batch.advance(moves, streams)
    return asked


def _simulated(players, names, seed, first_game=0):
    lineup = lineup_of(players, [parse_spec(name) for name in names])
    ids = np.arange(first_game, first_game + GAMES, dtype=np.int64)
    return play_batch(lineup, seed, ids, rotations=ids % players)


@pytest.mark.parametrize(("players", "names", "outside", "seed"), [
    (2, ["greedy", "random"], 0, 3),
    (2, ["blocker:block=4,reply=1", "greedy"], 0, 11),
    (2, ["greedy", "blocker"], 1, 12),
    (3, ["random", "greedy", "blocker"], 2, 5),
    (3, ["greedy", "random", "greedy"], 0, 6),
    (4, ["greedy", "blocker", "random", "greedy"], 1, 8),
    (4, ["greedy", "random", "blocker:shed=0.5", "random"], 2, 2),
    (4, ["random", "greedy", "greedy", "greedy"], 0, 9),
])
def test_outside_builtin_plays_the_simulated_games(players, names, outside, seed):
    expected = _simulated(players, names, seed, first_game=seed)
    seats = [parse_spec(name) for name in names]
    seats[outside] = OUTSIDE
    batch = GameBatch(players, seats, GAMES, seed, BatchSettings(first_game=seed))
    asked = _play_outside(batch, parse_spec(names[outside]))
    result = batch.results()
    assert asked > GAMES  # the outside seat really decided, in every game more than once
    assert batch.done and batch.finished.all()
    np.testing.assert_array_equal(result.games, expected.games)
    np.testing.assert_array_equal(result.round_rows, expected.round_rows)
    np.testing.assert_array_equal(result.round_number, expected.round_number)
    np.testing.assert_array_equal(batch.winners, expected.games[:, engine.GAME_WINNER_TEAM])


def test_decisions_rows_describe_the_waiting_seat():
    batch = GameBatch(4, [OUTSIDE, "greedy", OUTSIDE, "random"], GAMES, 4)
    decisions = batch.pending()
    assert len(decisions) == GAMES  # every game waits for one of its two outside seats
    np.testing.assert_array_equal(decisions.positions % 2, 0)
    np.testing.assert_array_equal(decisions.positions,
                                  (decisions.seats + decisions.games % 4) % 4)
    for row in range(len(decisions)):
        n = decisions.n_moves[row]
        moves = decisions.moves[row]
        assert n >= 2 and np.all(moves[n:] == engine.NO_MOVE)
        assert sorted(np.flatnonzero(decisions.masks[row])) == sorted(moves[:n])
        observation = decisions.observations[row]
        np.testing.assert_array_equal(
            observation, batch.observe(int(decisions.games[row]), int(decisions.seats[row])))
        hand = observation[view.HAND]
        assert all(hand >> (move >> 2) & 1 for move in moves[:n])
    assert batch.to_move[decisions.games].tolist() == decisions.seats.tolist()


def test_a_one_game_batch_steps_as_its_row_of_a_larger_batch():
    """A batch of one game (the environments' path, read on Python ints) gives at every step
    the row its game gets in a batch of several, and its public record is every view's."""
    lineup = [OUTSIDE, "greedy", OUTSIDE, "random"]
    many = GameBatch(4, lineup, 4, 7)
    one = GameBatch(4, lineup, 1, 7, BatchSettings(first_game=2))
    rng = np.random.default_rng(1)
    steps = 0
    while not one.done:
        mine, theirs = one.pending(), many.pending()
        row = theirs.games.tolist().index(2)
        assert mine.games.tolist() == [0]
        for name in ("seats", "positions", "kinds", "observations", "moves", "n_moves",
                     "masks", "streams"):
            np.testing.assert_array_equal(getattr(mine, name)[0], getattr(theirs, name)[row])
        round_number, words = one.public_record(0)
        seen = one.observe(0, int(rng.integers(4)))
        assert round_number == seen[view.ROUND]
        assert words == seen[view.RECORD: view.RECORD + len(words)].tolist()
        pick = (rng.random(len(theirs)) * theirs.n_moves).astype(np.int64)
        moves = theirs.moves[np.arange(len(theirs)), pick]
        one.advance(moves[row: row + 1])
        many.advance(moves)
        steps += 1
    assert steps > 20 and many.finished[2] and len(one.pending()) == 0
    np.testing.assert_array_equal(one.scores[0], many.scores[2])
    assert one.winners[0] == many.winners[2]


def test_round_slots_grown_and_rows_reused_change_no_game(monkeypatch):
    """Games that outgrow their round slots wait while the batch grows them, and each step's
    rows go into buffers that no Decisions holds any more: neither changes a game, nor a
    Decisions a caller keeps (one slot to start with: every game grows them several times,
    in a batch of several games and in a batch of one)."""
    lineup = [OUTSIDE, "greedy", "random", "greedy"]
    roomy = GameBatch(4, lineup, GAMES, 9)
    monkeypatch.setattr(batch_module, "FIRST_SLOTS", 1)
    tight = GameBatch(4, lineup, GAMES, 9)
    one = GameBatch(4, lineup, 1, 9, BatchSettings(first_game=5))
    rng = np.random.default_rng(2)
    kept = []
    while not roomy.done:
        shown, grown = roomy.pending(), tight.pending()
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(grown, name), getattr(shown, name), name)
        if len(kept) % 2 == 0:  # every other Decisions kept, the others dropped (reused)
            kept.append((grown, {name: getattr(grown, name).copy() for name in FIELDS}))
        pick = (rng.random(len(shown)) * shown.n_moves).astype(np.int64)
        moves = shown.moves[np.arange(len(shown)), pick]
        if 5 in shown.games.tolist():
            assert not one.done
            one.advance(moves[shown.games.tolist().index(5)][None])
        roomy.advance(moves)
        tight.advance(moves)
    assert tight.done and one.done
    for decisions, copies in kept:
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(decisions, name), copies[name], name)
    wide, narrow = roomy.results(), tight.results()
    assert narrow.round_number.max() > 8  # 9 rounds or more: slots grown 1, 2, 4, 8, 16
    for name in ("games", "round_rows", "round_number"):
        np.testing.assert_array_equal(getattr(narrow, name), getattr(wide, name), name)
    np.testing.assert_array_equal(one.results().games[0], wide.games[5])
    rounds = wide.round_rows[wide.round_game == 5]
    np.testing.assert_array_equal(one.results().round_rows, rounds)


def _shuffle_hidden(batch: GameBatch, rng: np.random.Generator) -> None:
    """Deal the tiles the waiting seats cannot see (other hands, boneyard) afresh, keeping
    every hand's size and every public fact (the batch's referee tools: ``hand``,
    ``boneyard``, ``redeal``)."""
    for game, seat in zip(batch.pending().games, batch.pending().seats, strict=True):
        game = int(game)
        players = batch.players
        others = [s for s in range(players) if s != seat]
        hands = [batch.hand(game, s) for s in range(players)]
        hidden = [t for s in others for t in range(N_TILES) if hands[s] >> t & 1]
        hidden += batch.boneyard(game)
        shuffled = rng.permutation(hidden)
        start = 0
        for other in others:
            size = hands[other].bit_count()
            hands[other] = sum(1 << int(t) for t in shuffled[start:start + size])
            start += size
        batch.redeal(game, hands, [int(t) for t in shuffled[start:]])


def test_no_decision_field_carries_a_hidden_tile():
    """Re-dealing what the deciding seat cannot see changes nothing it is shown."""
    batch = GameBatch(3, ["random", OUTSIDE, "greedy"], GAMES, 21)
    rng = np.random.default_rng(0)
    for _ in range(12):
        shown = batch.pending()
        twin = batch.copy()
        _shuffle_hidden(twin, rng)
        seen = twin.pending()  # gathered afresh by the redeal
        for name in ("games", "seats", "positions", "kinds", "observations", "moves",
                     "n_moves", "masks", "streams"):
            np.testing.assert_array_equal(getattr(seen, name), getattr(shown, name), name)
        pick = (rng.random(len(shown)) * shown.n_moves).astype(np.int64)
        batch.advance(shown.moves[np.arange(len(shown)), pick])


def test_bad_moves_are_refused_naming_game_and_move():
    batch = GameBatch(2, [OUTSIDE, "greedy"], 8, 1)
    decisions = batch.pending()
    good = decisions.moves[:, 0].copy()
    with pytest.raises(IllegalMove, match="shape"):
        batch.advance(good[:-1])
    with pytest.raises(IllegalMove, match="integer"):
        batch.advance(good.astype(np.float64))
    illegal = good.copy()
    illegal[3] = next(a for a in range(N_ACTIONS) if not decisions.masks[3, a])
    with pytest.raises(IllegalMove, match=rf"game {decisions.games[3]} .*move {illegal[3]} "):
        batch.advance(illegal)
    illegal[3] = N_ACTIONS + 5
    with pytest.raises(IllegalMove, match=f"move {N_ACTIONS + 5} is not legal"):
        batch.advance(illegal)
    assert batch.pending() is decisions  # nothing was played
    after = batch.advance(good)
    assert after is batch.pending() and after is not decisions


def _engine_deal(batch: GameBatch, game: int) -> tuple[np.ndarray, int]:
    """The deck and leader the engine itself deals game ``game``'s next round."""
    scratch = np.zeros(engine.STATE_SIZE, dtype=np.int64)
    scratch[engine.PLAYERS] = batch.players
    leader = -1 if batch.needs_leader(game) else 0  # the deck is the same whoever leads
    leader = deal_round(
        scratch, seed_word(batch.seed), int(batch.deal_ids[game]),
        int(batch.round_numbers[game]) + 1, -1, leader, np.zeros(1, dtype=np.uint64))
    return scratch[engine.DECK: engine.DECK + N_TILES].copy(), leader


def _play_chance(batch: GameBatch, choose) -> None:
    """Answer every chance row with ``choose(game, kind)`` until all games end."""
    while not batch.done:
        decisions = batch.pending()
        assert set(decisions.kinds.tolist()) <= {KIND_DEAL, KIND_DRAW}
        moves = np.zeros(len(decisions), dtype=np.int64)
        for row, (game, kind) in enumerate(zip(decisions.games, decisions.kinds, strict=True)):
            moves[row] = choose(int(game), int(kind))
        batch.advance(moves)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_external_chance_fed_the_engines_own_chance_plays_the_same_games(players):
    names = ["greedy", "random", "random", "greedy"][:players]
    expected = _simulated(players, names, 31)
    batch = GameBatch(players, names, GAMES, 31, BatchSettings(external_chance=True))
    decks = {}

    def engine_chance(game: int, kind: int) -> int:
        if kind == KIND_DEAL:
            decks[game], leader = _engine_deal(batch, game)
            batch.deal(game, decks[game], leader if batch.needs_leader(game) else -1)
            return 0
        return int(decks[game][N_TILES - len(batch.boneyard(game))])

    _play_chance(batch, engine_chance)
    np.testing.assert_array_equal(batch.results().games, expected.games)
    np.testing.assert_array_equal(batch.results().round_rows, expected.round_rows)


def test_external_chance_plays_legal_games_from_any_deal_and_draws():
    batch = GameBatch(4, ["greedy", "random"], GAMES, 2, BatchSettings(external_chance=True))
    rng = np.random.default_rng(5)
    assert all(batch.pending().kinds == KIND_DEAL)
    with pytest.raises(IllegalMove, match="deal"):
        batch.advance(np.zeros(GAMES, dtype=np.int64))
    with pytest.raises(IllegalMove, match="deck"):
        batch.deal(0, np.zeros(N_TILES, dtype=np.int64), 0)

    def random_chance(game: int, kind: int) -> int:
        if kind == KIND_DEAL:
            batch.deal(game, rng.permutation(N_TILES), int(rng.integers(4)))
            return 0
        return int(rng.choice(batch.boneyard(game)))

    _play_chance(batch, random_chance)
    result = batch.results()
    games = result.games
    assert np.all((games[:, engine.GAME_WINNER_TEAM] >= 0) | (games[:, engine.GAME_CAP_HIT] == 1))
    winners = games[:, engine.GAME_WINNER_TEAM]
    won = winners >= 0
    assert np.all(games[won, engine.GAME_SCORES + winners[won]] >= 200)
    assert result.round_rows.shape[0] == games[:, engine.GAME_ROUNDS].sum()
    assert games[:, engine.GAME_DRAWS].sum() > 0  # the draws went through the chance rows


def test_a_strategy_that_raises_in_a_batch_is_one_sniff_error(monkeypatch):
    """The batch's advance (called through its compiled entry point) still turns an
    exception raised by a strategy inside the engine into one SniffError naming it."""
    monkeypatch.syspath_prepend(str(TESTS / "plugins"))
    monkeypatch.delitem(sys.modules, "raiser", raising=False)  # registers again on import
    with strategies.kept_registry():
        importlib.import_module("raiser")
        with pytest.raises(SniffError, match=r"^strategy 'raiser' \(module raiser\) raised "
                                             "ValueError: no idea what to play"):
            batch = GameBatch(2, [OUTSIDE, "raiser"], 1, 0)  # raiser may be asked at once
            while not batch.done:
                decisions = batch.pending()
                batch.advance(decisions.moves[:, 0])


def test_a_position_goes_on_in_another_batch_with_that_batchs_chance():
    """#61: ``load_position``, a referee's public tool (the IS-MCTS example's root and
    play-outs): the game's every view and pending choice come over; chance stays the
    batch's own."""
    source = GameBatch(2, [OUTSIDE, OUTSIDE], 3, 5)
    for _ in range(3):
        source.advance(source.pending().moves[:, 0].copy())
    for external in (False, True):
        target = GameBatch(2, [OUTSIDE, OUTSIDE], 1, 9,
                           BatchSettings(external_chance=external))
        target.load_position(0, source, 2)
        for seat in range(2):
            assert np.array_equal(target.observe(0, seat), source.observe(2, seat))
        row = int(np.flatnonzero(source.pending().games == 2)[0])
        assert np.array_equal(target.pending().moves[0], source.pending().moves[row])
        assert target.external_chance is external
    with pytest.raises(SniffError, match="of 2 players"):
        GameBatch(3, [OUTSIDE] * 3, 1, 9).load_position(0, source, 0)


def test_a_redeal_moves_the_unseen_tiles_and_refuses_any_other_tiles():
    """#61: ``redeal``, a resampler's public tool: the hands and the boneyard dealt anew
    from the tiles they hold, each hand its size; anything else refused, nothing changed."""
    batch = GameBatch(2, [OUTSIDE, OUTSIDE], 1, 3)
    mine = batch.observe(0, 0)
    hand = int(mine[view.HAND])
    unseen = [t for t in range(N_TILES) if not (hand | int(mine[view.PLAYED])) >> t & 1]
    size = int(mine[view.HAND_SIZE + 1])
    other = sum(1 << t for t in unseen[:size])
    with pytest.raises(IllegalMove, match="as many tiles"):
        batch.redeal(0, [hand, other & (other - 1)], unseen[size - 1:])  # a tile short
    with pytest.raises(IllegalMove, match="each once"):
        batch.redeal(0, [hand, other], unseen[size - 1:-1])
    assert np.array_equal(batch.observe(0, 0), mine)
    batch.redeal(0, [hand, other], unseen[size:][::-1])
    assert np.array_equal(batch.observe(0, 0), mine)  # what seat 0 sees stays
    assert int(batch.observe(0, 1)[view.HAND]) == other
    assert batch.boneyard(0) == sorted(unseen[size:])
    while not batch.done:
        batch.advance(batch.pending().moves[:, 0].copy())


def test_a_position_goes_on_and_is_dealt_anew_as_an_ismcts_referee_uses_it():
    """#63 (with #61's ``load_position`` and ``redeal``): the tools IS-MCTS's referee uses
    instead of the private arrays: a game goes on in another batch (other seats, other
    chance) exactly where it stands, the tiles hidden from the deciding seat are dealt anew
    without changing what it sees, and a position waiting for chance is refused by a batch
    whose chance is its own."""
    source = GameBatch(2, [OUTSIDE, "greedy"], 4, 3)
    rng = np.random.default_rng(1)
    for _ in range(3):
        d = source.pending()
        source.advance(d.moves[np.arange(len(d)), (rng.random(len(d)) * d.n_moves).astype(int)])
    game = int(source.pending().games[0])
    outside = GameBatch(2, [OUTSIDE, OUTSIDE], 1, 3, BatchSettings(external_chance=True))
    outside.load_position(0, source, game)
    taken = outside.pending()
    row = list(source.pending().games).index(game)
    np.testing.assert_array_equal(taken.observations[0], source.pending().observations[row])
    for seat in range(2):
        np.testing.assert_array_equal(outside.observe(0, seat), source.observe(game, seat))
    np.testing.assert_array_equal(outside.scores[0], source.scores[game])

    seat, other = int(taken.seats[0]), 1 - int(taken.seats[0])
    mine = int(outside.observe(0, seat)[view.HAND])
    hand = [t for t in range(N_TILES) if outside.observe(0, other)[view.HAND] >> t & 1]
    pool = sorted(hand + outside.boneyard(0))
    dealt = rng.permutation(pool).tolist()

    def masks(tiles):
        return [mine if s == seat else sum(1 << t for t in set(tiles)) for s in range(2)]

    before = outside.observe(0, seat)
    for bad in ([dealt[0]] * len(hand), dealt[: len(hand) - 1], [99] + dealt[1: len(hand)]):
        with pytest.raises(IllegalMove):
            outside.redeal(0, masks(bad), dealt[len(hand):])
    with pytest.raises(IllegalMove, match="each once"):
        outside.redeal(0, masks(dealt[: len(hand)]), dealt[len(hand):-1] + [dealt[0]])
    np.testing.assert_array_equal(outside.observe(0, seat), before)  # nothing changed
    outside.redeal(0, masks(dealt[: len(hand)]), dealt[len(hand):])
    after = outside.pending()
    np.testing.assert_array_equal(after.observations[0], taken.observations[0])
    assert outside.observe(0, other)[view.HAND] == sum(1 << t for t in dealt[: len(hand)])
    assert outside.boneyard(0) == sorted(dealt[len(hand):])

    playout = GameBatch(2, ["random", "random"], 1, 3)
    playout.load_position(0, outside, 0)
    playout.advance(playout.pending().moves[:, 0])
    assert playout.done and playout.winners[0] in (0, 1)
    outside.advance(after.moves[:, 0])
    while outside.pending().kinds[0] not in (KIND_DRAW, KIND_DEAL):
        outside.advance(outside.pending().moves[:, 0])
    assert outside.pending().kinds[0] == KIND_DRAW  # this game draws before its round ends
    with pytest.raises(IllegalMove, match="waits for chance"):
        GameBatch(2, ["random", "random"], 1, 3).load_position(0, outside, 0)


def test_a_kept_view_of_a_dropped_decisions_keeps_its_values() -> None:
    """A caller that keeps only views of a Decisions' fields (not the Decisions) holds the
    buffers through them: later steps never write into what it reads."""
    batch = GameBatch(2, [OUTSIDE, "greedy"], 200, 3)
    rng = np.random.default_rng(1)
    kept = []
    steps = 0
    while not batch.done and steps < 12:
        shown = batch.pending()
        kept_rows = shown.observations[: min(3, len(shown))]
        kept.append((kept_rows, kept_rows.copy()))
        pick = (rng.random(len(shown)) * shown.n_moves).astype(np.int64)
        moves = shown.moves[np.arange(len(shown)), pick]
        del shown
        batch.advance(moves)
        steps += 1
    assert steps >= 6
    for kept_rows, copy in kept:
        np.testing.assert_array_equal(kept_rows, copy)
