"""What the tests of ``learned`` share: the placements of a traced game and a tiny
``sniff learn`` configuration (``tests/strategies/learned/``)."""

from __future__ import annotations

from sim.kernels.runner import lineup_of, trace_events
from sim.kernels.trace import placements_from_events
from strategies import parse_lineup_text


def decisions(players: int, text: str, game_id: int):
    lineup = lineup_of(players, parse_lineup_text(text))
    rows, _ = trace_events(lineup, 5, game_id)
    yield from placements_from_events(rows, players)


def tiny(players: int = 2, **changes):
    from sim.learn.config import LearnConfig

    settings = dict(players=players, seed=7, iterations=2, games=24, eval_games=12, epochs=1,
                    hidden="8", window=2, batch=64)
    settings.update(changes)
    return LearnConfig(**settings)
