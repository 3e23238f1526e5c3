"""The compiled batch kernels that bind the engine to a set of strategies, and the two ways
to run them: many games as arrays (``runner``) and one game as trace events (``trace``).

May import: ``sim.errors``, ``sim.core``, ``sim.stats``, ``sim.display``, ``strategies``.
"""

__all__ = [
    "batch", "chance", "decisions", "gather", "generate", "python_seats",
    "result", "runner", "shared", "sharing", "template", "trace",
]
