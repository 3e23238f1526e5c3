"""The learned player: ``learned``, its inputs, its network and its model files.

- ``player``: the strategy (one ply, each afterstate valued by the network) and the shipped
  models (``models/learned-Np.npz``, plain arrays);
- ``features``: the afterstate inputs, read from the mover's public view only;
- ``net``: the compiled forward pass and the model file format (read and written);
- ``model_files``: ``learned:model=PATH``, a generated module per model file.

May import: ``sim.errors``, ``sim.files``, ``sim.core``, ``strategies`` (the registry),
``strategies.heuristics`` (the move features) and ``strategies.value`` (the score table).

The previous release's module ``strategies.learned`` is this room's name now: its names
(``choose_learned``, ``learned_choice``, ``shipped_path``, ``MODELS``) are still served here,
from ``player``, with a DeprecationWarning, for one release.
"""

import importlib
import warnings

_PLAYER_NAMES = ("choose_learned", "learned_choice", "shipped_path", "MODELS")


def __getattr__(name: str):
    if name in _PLAYER_NAMES:
        warnings.warn(f"strategies.learned.{name} is now strategies.learned.player.{name}; "
                      "the old name goes in the next release", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("strategies.learned.player"), name)
    raise AttributeError(f"module 'strategies.learned' has no attribute {name!r}")
