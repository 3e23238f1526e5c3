"""The engine's version: the one number a run records for the games the rules engine plays.

A run folder records ``ENGINE_VERSION`` and each strategy's behaviour signature
(``sim.run.signature``), never a hash of the source: a refactor that plays the same
games keeps both, so its runs resume; a change of the games moves one of them, and
``--resume`` refuses the folder in one line naming what wrote it.

``ENGINE_GAMES`` is the hash of fixed games traced move by move with built-in strategies
(``sim.run.signature.engine_games``). ``tests/sim/run/test_signature.py`` plays them again: when
they differ, the games changed, and the change bumps ``ENGINE_VERSION`` and records the new
hash here, both in the same commit.
"""

__all__ = ["ENGINE_GAMES", "ENGINE_VERSION"]

ENGINE_VERSION = 1
ENGINE_GAMES = "f0c0feb3878faf4b"
