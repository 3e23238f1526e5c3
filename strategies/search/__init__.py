"""The search players, ``rollout`` and ``expert``, and what their searches are made of.

- ``determinize``: deals of the hidden tiles drawn uniformly over those consistent with the
  public record; ``draw_history``: what each seat's draws say about its hand;
- ``inference``: reading the opponents' hands from their choices (rejection sampling);
- ``playout``: a round played out on a sampled deal, by any play-out policy;
- ``paired``: every move played out on the same deals (the search of ``sniff hint`` and
  ``sniff analyze``, compiled inside expert's search);
- ``rollout``, ``expert``: the strategies.

May import: ``sim.core``, ``strategies`` (the registry) and the rooms below it:
``strategies.heuristics``, ``strategies.value``, ``strategies.learned``.
"""

__all__ = ["determinize", "draw_history", "expert", "inference", "paired", "playout", "rollout"]
