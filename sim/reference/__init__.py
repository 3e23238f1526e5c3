"""The rules in plain Python, restated from docs/rules.md and sharing no code with the engine.

- ``rules``: the tiles, scoring and the layout, read by the two others;
- ``oracle``: replays a traced game and fails at the first event that breaks a rule (the
  tests replay every traced game of the engine through it);
- ``python_model``: a plain-Python player of whole games on those rules, which
  re-derives the engine's deals from the documented random streams: every game must end as
  the engine's does (tests/sim/reference/test_python_model.py), and ``sniff bench`` times it as the
  engine's baseline.

May import: nothing of ours (that is what makes it a second, independent reading).
"""

__all__ = ["oracle", "python_model", "rules"]
