"""What the end of a round is worth to one side.

- ``score_table``: the generated win-probability model (the chance to win the game from the
  scores and the next leader; ``scripts/score_table.py`` makes it);
- ``round_value``: a round's end valued as that chance, or as points (``expert``'s play-outs,
  ``sniff hint``).

May import: ``sim.core``.
"""

__all__ = ["round_value", "score_table"]
