"""Python players that break the rules, one way each (tests/test_python_players.py)."""

import numpy as np

from strategies import register_python


@register_python("py_raiser", "raises")
def raiser(observations, masks):
    raise RuntimeError("the model file is missing")


@register_python("py_illegal", "plays an action that is never legal")
def illegal(observations, masks):
    return np.full(observations.shape[0], 111 + 1, dtype=np.int64)


@register_python("py_short", "returns one action too few")
def short(observations, masks):
    return masks.argmax(axis=1)[1:]
