"""What a run records as the code that played it: the engine's version and each strategy's
behaviour signature, both blind to the source text.

A strategy's identity is its behaviour, not its source (Stockfish's ``bench``): its
signature is a hash of the games it plays against itself, in every seat, on
``SIGNATURE_GAMES`` fixed deals (seed ``SIGNATURE_SEED``, their first ``SIGNATURE_ROUNDS``
rounds), played by the same compiled engine as a run (``sim.kernels.runner.play_batch``:
a Python player through ``sim.kernels.python_seats``). Every game row and round row goes
into the hash: who led, the opening tile, every round's points, penalties, pips left,
draws, placements, passes and decisions. A refactor that plays the same games (a module
moved or renamed, docstrings, locals) keeps it; a changed constant or parameter that
changes one move moves it. The games are the same for any thread count, so the signature
is. It is computed once per process for each spec and player count (and each version of
its source on disk: ``code_digest``, the key of the compiled code, which a run compares
chunk by chunk but never records).

The rules engine is named by ``sim.core.identity.ENGINE_VERSION``, bumped by hand when its
games change; ``engine_games`` is the hash of the fixed traced games the version's test
compares (``tests/sim/run/test_signature.py``).
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from sim.core.identity import ENGINE_VERSION
from sim.kernels.generate import code_digest
from sim.kernels.runner import Lineup, play_batch, trace_events
from strategies import StrategySpec, parse_spec

__all__ = ["identity_problem", "lineup_identity", "strategy_signature"]

SIGNATURE_SEED = 20_240_611
SIGNATURE_GAMES = 4
SIGNATURE_ROUNDS = 2
# The engine's fixed games: full games of the two simplest built-ins, traced move by move.
ENGINE_LINEUPS = ((2, ("random", "greedy")), (3, ("greedy", "random", "random")),
                  (4, ("random", "greedy", "random", "greedy")))
ENGINE_SEED = 61
ENGINE_GAMES_EACH = 4

_signatures: dict[tuple, str] = {}
_lock = threading.Lock()  # sniff serve's threads may ask at once: each signature played once


def _hashed(arrays: list[np.ndarray]) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        digest.update(np.ascontiguousarray(array, dtype=np.int64).tobytes())
    return digest.hexdigest()[:16]


def play_signature(spec: StrategySpec, players: int) -> str:
    """The hash of the fixed games ``spec`` plays in every seat of a ``players``-player
    table (16 hex digits), played now; ``players`` must be a count the strategy plays."""
    result = play_batch(Lineup(players, (spec,) * players), SIGNATURE_SEED,
                        np.arange(SIGNATURE_GAMES, dtype=np.int64), round_cap=SIGNATURE_ROUNDS)
    return _hashed([result.games, result.round_number, result.round_rows])


def strategy_signature(spec: StrategySpec, players: int) -> str:
    """``play_signature``, played once per process for each spec, player count and version
    of the strategy's source."""
    strategy = spec.strategy
    # Keyed by the code key of its compiled code too: a process that compiles an edited
    # strategy again (``sim.kernels.generate`` names modules by their sources) plays it again.
    key = (strategy.name, strategy.module, strategy.attribute, spec.values, players,
           code_digest([strategy]))
    with _lock:
        if key not in _signatures:
            _signatures[key] = play_signature(spec, players)
        return _signatures[key]


def lineup_identity(lineup: Lineup) -> dict:
    """What a run of ``lineup`` records: ``{"engine": ENGINE_VERSION, "strategies":
    {label: signature}}``, one signature per distinct spec at the lineup's player count."""
    return {"engine": ENGINE_VERSION,
            "strategies": {spec.label: strategy_signature(spec, lineup.players)
                           for spec in lineup.specs}}


def _short(value: object) -> str:
    """A recorded value as one short line (it comes from a folder: any JSON)."""
    text = " ".join(str(value).split())
    return text if len(text) <= 40 else text[:37] + "..."


def identity_problem(recorded: dict, identity: dict) -> str | None:
    """None when ``recorded`` (a folder's record) was written by code that plays the games
    ``identity`` names; else the clause that says what wrote it and what this code has, as
    ``it was written by engine 1 with expert=3f2a...; this code plays expert as 9c1d...``.
    A record from before identities (a ``kernel`` code digest only) names that digest."""
    written = recorded.get("identity")
    if written == identity:
        return None
    if not isinstance(written, dict) or not isinstance(written.get("strategies"), dict):
        return (f"it was written by sniff {_short(recorded.get('version'))}, code "
                f"{_short(recorded.get('kernel'))}, which recorded no behaviour signatures; "
                f"this code plays engine {ENGINE_VERSION}")
    if written.get("engine") != identity["engine"]:
        return (f"it was written by engine {_short(written.get('engine'))}; this code plays "
                f"engine {identity['engine']}")
    strategies = written["strategies"]
    for label, signature in identity["strategies"].items():
        if strategies.get(label) != signature:
            return (f"it was written by engine {identity['engine']} with {_short(label)}="
                    f"{_short(strategies.get(label))}; this code plays {_short(label)} as "
                    f"{signature}")
    extra = next(iter(set(strategies) - set(identity["strategies"])))
    return f"it records {_short(extra)}, which its lineup does not play here"


def engine_games() -> str:
    """The hash of the engine's fixed games (``ENGINE_LINEUPS``, ``ENGINE_GAMES_EACH`` full
    games each, every event row and game row): what ``sim.core.identity.ENGINE_GAMES``
    records for ``ENGINE_VERSION``."""
    arrays: list[np.ndarray] = []
    for players, names in ENGINE_LINEUPS:
        lineup = Lineup(players, tuple(parse_spec(name) for name in names))
        for game in range(ENGINE_GAMES_EACH):
            events, row = trace_events(lineup, ENGINE_SEED, game, rotation=game % players)
            arrays += [events, row]
    return _hashed(arrays)
