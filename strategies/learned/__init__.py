"""The learned player: ``learned``, its inputs, its network and its model files.

- ``player``: the strategy (one ply, each afterstate valued by the network) and the shipped
  models (``models/learned-Np.npz``, plain arrays);
- ``features``: the afterstate inputs, read from the mover's public view only;
- ``record_inputs``: the round's public record as inputs;
- ``net``: the compiled forward pass and the model file format (read and written);
- ``model_files``: ``learned:model=PATH``, a generated module per model file.

May import: ``sim.errors``, ``sim.files``, ``sim.core``, ``strategies`` (the registry),
``strategies.heuristics`` (the move features) and ``strategies.value`` (the score table).
"""

__all__ = ["features", "model_files", "net", "player", "record_inputs"]
