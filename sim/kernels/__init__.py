"""The compiled code of the game: the game loop compiled once and each strategy compiled on
its own (``generate``, ``shared``), and the ways to run them: many games as arrays
(``runner``), games that wait for outside seats (``batch``) and one game as trace events
(``trace``).

May import: ``sim.errors``, ``sim.core``, ``sim.stats``, ``sim.display``, ``strategies``.
"""

__all__ = [
    "batch", "cachefiles", "chance", "decisions", "generate", "python_seats",
    "result", "runner", "shared", "sharing", "template", "trace",
]
