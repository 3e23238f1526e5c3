"""Reading the others' hands from their choices: how likely a deal makes what they did.

A player who held the 6-4 on a table counting 5 and played something else probably did not
hold it. The public record (``sim.core.record``) says what every other seat placed this round
and in which public situation, so a search player can weigh each determinized deal by how
well a model player, given that deal's hand, reproduces those choices: a deal on which the
model makes every observed choice keeps weight 1, each disagreement multiplies it by
``1 - strength`` (``strength`` < 1 keeps deals alive when the real players differ from the
model).

The view of the seat at an earlier decision is rebuilt from the record alone (layout,
tiles played, scores, hand sizes, boneyard size and lacks as they were then; the record up
to then). Its hand then was its hand now plus the tiles it has chosen to place since,
provided it has kept no drawn tile since: a drawn tile that fits is placed at once (public,
and not in the hand then), but one that did not fit stays hidden in the hand, and which
tile of the hand it is is not known. So a decision is used when every tile the seat drew
after it was placed at once. Placements of a tile just drawn, or of an imposed opening
tile, were no choice of tile and are not used either.

Nothing here reads a hidden tile: the decisions come from the view, the hands from the
deal the search drew.

Only opponents are read: a partner (4 players) is most often the same player as the
searcher, whose choices a heuristic model does not describe.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from sim.core import engine, record
from sim.core import observation as view
from sim.core.layout import (
    EMPTY_LAYOUT,
    count_ends,
    legal_moves,
    open_values_mask,
    place_tile,
    points_for_count,
)
from sim.core.rng import random_unit
from sim.core.tiles import ALL_TILES, N_TILES
from strategies.heuristics.blocker import blocker_choice
from strategies.heuristics.features import fill_levels
from strategies.heuristics.partner import partner_choice
from strategies.search.determinize import sample_deal
from strategies.search.draw_history import draw_periods, hand_fits_draws
from strategies.search.playout import POLICY_PARAMS

__all__: list[str] = []  # nothing here is used outside its room

# Model players, by their index in strategies.search.playout.POLICIES.
MODEL_BLOCKER = 1
MODEL_PARTNER = 2


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def past_decisions(observation):
    """The opponents' usable choices this round.

    Returns ``(views, moves, placed_since, count)``: row ``d < count`` of ``views`` is the
    view of the deciding seat then, with ``HAND`` left 0 for a deal to fill; ``moves[d]``
    the move it chose; ``placed_since[d]`` the tiles it has chosen to place from then on
    (that move's tile included), which its hand then held beside its hand now.
    """
    players = observation[view.PLAYERS]
    own_team = view.team_of(observation[view.SEAT], players)
    n_events = observation[view.RECORD]
    last_kept = np.full(engine.MAX_PLAYERS, -1, dtype=np.int64)
    points_in_round = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
    chosen_later = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)  # from the replay point on
    layout = EMPTY_LAYOUT
    for index in range(n_events):
        kind, seat, move = record.event(observation, view.RECORD, index)
        if kind == record.DRAW:
            if record.draw_kept(observation, view.RECORD, index):
                last_kept[seat] = index
        elif kind != record.PASS:
            layout = place_tile(layout, move >> 2, move & 3)
            points_in_round[view.team_of(seat, players)] += points_for_count(count_ends(layout))
            if kind == record.PLACE_CHOSEN:
                chosen_later[seat] |= 1 << (move >> 2)
    views = np.zeros((n_events, view.OBSERVATION_SIZE), dtype=np.int64)
    moves = np.zeros(n_events, dtype=np.int64)
    placed_since = np.zeros(n_events, dtype=np.int64)
    count = 0
    # The public state as it was before each event, replayed from the round's start.
    scores = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
    sizes = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
    lacks = np.zeros(engine.MAX_PLAYERS, dtype=np.int64)
    for team in range(view.team_count(players)):
        scores[team] = observation[view.SCORE + team] - points_in_round[team]
    for seat in range(players):
        sizes[seat] = engine.HAND_SIZE_FOR_PLAYERS[players]
    boneyard = N_TILES - players * engine.HAND_SIZE_FOR_PLAYERS[players]
    layout = EMPTY_LAYOUT
    played = 0
    for index in range(n_events):
        kind, seat, move = record.event(observation, view.RECORD, index)
        if kind == record.DRAW:
            if record.starts_draw_run(observation, view.RECORD, index):
                lacks[seat] = open_values_mask(layout)
            sizes[seat] += 1
            boneyard -= 1
        elif kind == record.PASS:
            lacks[seat] |= open_values_mask(layout)
        else:
            if (kind == record.PLACE_CHOSEN and index > last_kept[seat]
                    and view.team_of(seat, players) != own_team):
                row = views[count]
                row[view.SEAT] = seat
                row[view.PLAYERS] = players
                row[view.LAYOUT] = layout
                row[view.BONEYARD_SIZE] = boneyard
                row[view.PLAYED] = played
                row[view.TARGET] = observation[view.TARGET]
                row[view.ROUND] = observation[view.ROUND]
                row[view.LEADER] = observation[view.LEADER]
                for slot in range(engine.MAX_PLAYERS):
                    row[view.SCORE + slot] = scores[slot]
                    row[view.HAND_SIZE + slot] = sizes[slot]
                    row[view.LACKS + slot] = lacks[slot]
                record.copy(observation, view.RECORD, row, view.RECORD)
                row[view.RECORD] = index
                moves[count] = move
                placed_since[count] = chosen_later[seat]
                count += 1
            if kind == record.PLACE_CHOSEN:
                chosen_later[seat] &= ~(1 << (move >> 2))
            layout = place_tile(layout, move >> 2, move & 3)
            played |= 1 << (move >> 2)
            sizes[seat] -= 1
            scores[view.team_of(seat, players)] += points_for_count(count_ends(layout))
    return views, moves, placed_since, count


@njit(inline="always")
def model_of(players: int) -> int:
    """The model player: the strongest one-ply heuristic at this player count (the ladder
    in docs/expert.md), ``partner`` with 4 players, else ``blocker``."""
    return MODEL_PARTNER if players == 4 else MODEL_BLOCKER


@njit
def model_choice(model: int, observation, moves, n_moves: int, levels=None) -> int:
    """The index of the move the model player picks (both models are deterministic;
    ``levels`` as in ``strategies.heuristics.features.move_value``, the same pick faster)."""
    if model == MODEL_PARTNER:
        return partner_choice(observation, moves, n_moves, POLICY_PARAMS[MODEL_PARTNER], levels)
    return blocker_choice(observation, moves, n_moves, POLICY_PARAMS[MODEL_BLOCKER], levels)


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def level_tables(views, count: int):
    """For each decision ``d < count``, ``strategies.heuristics.features.fill_levels``' table of the
    layout after every move that some hand could make then (``[d, move, tile]``).

    The model is asked about the same few tables for every deal drawn, and the best
    points of each tile on them are a large part of its work, so they are worked out once
    here (a third less time per decision with 4 players).
    """
    tables = np.zeros((count, 4 * N_TILES, N_TILES), dtype=np.int8)
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    for decision in range(count):
        layout = views[decision, view.LAYOUT]
        unplayed = ALL_TILES & ~views[decision, view.PLAYED]
        n_moves = legal_moves(layout, unplayed, buffer)
        for index in range(n_moves):
            move = buffer[index]
            tile = move >> 2
            fill_levels(place_tile(layout, tile, move & 3), unplayed & ~(1 << tile),
                        tables[decision, move])
            buffer[index] = engine.NO_MOVE
    return tables


@njit
def model_agrees(row, hand: int, move: int, model: int, moves, levels=None) -> bool:
    """Would the model player, holding ``hand`` in the view ``row``, have chosen ``move``?

    ``moves`` is a scratch buffer of ``NO_MOVE`` (left so), as the engine hands one;
    ``levels``, optional, the decision's table from :func:`level_tables` (same answer).
    """
    row[view.HAND] = hand
    n_moves = legal_moves(row[view.LAYOUT], hand, moves)
    if n_moves <= 1:
        moves[0] = engine.NO_MOVE
        return True
    agrees = moves[model_choice(model, row, moves, n_moves, levels)] == move
    for slot in range(n_moves):
        moves[slot] = engine.NO_MOVE
    return agrees


@njit
def explains_choices(deal, views, moves, placed_since, count: int, model: int,
                     strength: float, buffer, tables, rng) -> bool:
    """Accept ``deal`` with probability ``(1 - strength) ** disagreements``.

    Each observed choice the model, holding that deal's hand, would not have made rejects
    the deal with probability ``strength``; the first rejection ends the checks, which is
    what makes rejection cheaper than weighing every deal.
    """
    for decision in range(count):
        seat = views[decision, view.SEAT]
        hand = deal[engine.HANDS + seat] | placed_since[decision]
        if not model_agrees(views[decision], hand, moves[decision], model, buffer,
                            tables[decision]):
            if random_unit(rng) < strength:
                return False
    return True


@njit
def fits_draw_history(deal, observation, runs, forbidden, kept) -> bool:
    """Every other seat's hand in ``deal`` passes ``strategies.search.draw_history``'s check."""
    for seat in range(observation[view.PLAYERS]):
        if seat != observation[view.SEAT] and not hand_fits_draws(
                deal[engine.HANDS + seat], runs[seat], forbidden[seat], kept[seat]):
            return False
    return True


@njit(_nrt=True)  # type: ignore[call-overload]  # _nrt: numba's runtime switch, not in its stubs
def inferred_deals(observation, plan, counts, n_deals: int, tries: int, strength: float,
                   model: int, rng):
    """``n_deals`` deals drawn in proportion to how well they explain the others' choices.

    Rejection sampling: deals are drawn exactly uniformly over those the view's lacks
    allow (``strategies.search.determinize``); a deal whose hands the others' earlier draws and
    passes rule out (``strategies.search.draw_history``) is dropped, and any other is kept with
    probability ``(1 - strength) ** d``, d the number of observed choices the model would
    not have made with its hands (:func:`explains_choices`). The kept deals are then
    distributed exactly as the uniform distribution over the deals the draw history
    allows, weighted by that likelihood. When the choices are hard to explain (players
    unlike the model), at most ``tries * n_deals`` deals are drawn: after that every deal
    is kept, so the rest are uniform. ``strength`` 0 skips all of it. Returns the deals
    without play-out streams.
    """
    deals = np.zeros((n_deals, engine.STATE_SIZE), dtype=np.int64)
    inferring = strength > 0.0
    if inferring:
        views, moves, placed_since, count = past_decisions(observation)
        tables = level_tables(views, count)
        runs, forbidden, kept = draw_periods(observation)
    buffer = np.full(engine.MAX_MOVES, engine.NO_MOVE, dtype=np.int64)
    limit = tries * n_deals
    drawn = 0
    picked = 0
    while picked < n_deals:
        sample_deal(observation, plan, counts, deals[picked], rng)
        drawn += 1
        if not inferring or drawn > limit or (
                fits_draw_history(deals[picked], observation, runs, forbidden, kept)
                and explains_choices(deals[picked], views, moves, placed_since, count, model,
                                     strength, buffer, tables, rng)):
            picked += 1
    return deals
