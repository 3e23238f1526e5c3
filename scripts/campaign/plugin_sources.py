"""The plugins the cases load, as sources the campaign writes into its work folder:
``register_python`` players and compiled strategies that raise, loop, allocate or answer
the wrong type, and one good one of each."""

from __future__ import annotations

# ------------------------------------------------------------------ plugins the cases load

PLUGINS = {
    "cp_raise_import": "raise RuntimeError('broken at import')\n",
    "cp_exit_import": "import sys\nsys.exit(3)\n",
    "cp_syntax": "def choose(:\n",
    "cp_baseexc_import": "raise KeyboardInterrupt\n",
    "cp_registers_nothing": "X = 1\n",
    "cp_hang_import": "import time\ntime.sleep(10**6)\n",
    "cp_players": '''"""Python players that misbehave, one way each (the campaign's)."""
import time

import numpy as np

from strategies import register_python


class _Bad:
    def __array__(self, *args, **kwargs):
        raise ValueError("no array here")


class _Len:
    def __len__(self):
        raise RuntimeError("no length")


@register_python("cp_value_error", "raises ValueError")
def value_error(observations, masks):
    raise ValueError("bad model")


@register_python("cp_recursion", "recurses without end")
def recursion(observations, masks):
    return recursion(observations, masks)


@register_python("cp_alloc", "allocates without bound")
def alloc(observations, masks):
    return np.ones(10**11)


@register_python("cp_grow", "grows a list without bound")
def grow(observations, masks):
    items = []
    while True:
        items.append(bytearray(2**24))


@register_python("cp_sleep", "sleeps forever")
def sleep(observations, masks):
    time.sleep(10**6)


@register_python("cp_spin", "loops forever")
def spin(observations, masks):
    while True:
        pass


@register_python("cp_none", "returns None")
def none(observations, masks):
    return None


@register_python("cp_floats", "returns floats")
def floats(observations, masks):
    return masks.argmax(axis=1).astype(float)


@register_python("cp_bool", "returns booleans")
def booleans(observations, masks):
    return masks.any(axis=1)


@register_python("cp_2d", "returns a 2-D array")
def two_d(observations, masks):
    return masks.argmax(axis=1)[:, None]


@register_python("cp_huge_int", "returns Python ints beyond int64")
def huge_int(observations, masks):
    return [2**70] * observations.shape[0]


@register_python("cp_uint", "returns uint64 words that wrap to negative")
def uint(observations, masks):
    return np.full(observations.shape[0], 2**64 - 1, dtype=np.uint64)


@register_python("cp_bad_array", "returns an object whose __array__ raises")
def bad_array(observations, masks):
    return _Bad()


@register_python("cp_bad_len", "returns an object whose __len__ raises")
def bad_len(observations, masks):
    return _Len()


@register_python("cp_string", "returns a string")
def string(observations, masks):
    return "0" * observations.shape[0]


@register_python("cp_generator", "returns a generator")
def generator(observations, masks):
    return (int(a) for a in masks.argmax(axis=1))


@register_python("cp_negative", "returns -1")
def negative(observations, masks):
    return np.full(observations.shape[0], -1)


@register_python("cp_keyboard", "raises KeyboardInterrupt itself")
def keyboard(observations, masks):
    raise KeyboardInterrupt


@register_python("cp_systemexit", "calls sys.exit(0)")
def system_exit(observations, masks):
    raise SystemExit(0)


@register_python("cp_mutates", "writes into what it is given, then plays the first legal move")
def mutates(observations, masks):
    actions = masks.argmax(axis=1)
    observations[:] = -1
    masks[:] = True
    return actions


@register_python("cp_good", "plays the first legal action")
def good(observations, masks):
    return masks.argmax(axis=1)
''',
    "cp_compiled": '''"""Compiled strategies that misbehave (the campaign's)."""
import numpy as np
from numba import njit

from strategies import register


@njit
def raises(observation, moves, n_moves, params, rng):
    raise ValueError("compiled failure")


@njit
def out_of_range(observation, moves, n_moves, params, rng):
    return 1000


@njit
def allocates(observation, moves, n_moves, params, rng):
    block = np.ones(10**11)
    return int(block[0]) - 1


@njit
def floats(observation, moves, n_moves, params, rng):
    return 0.5


register("cp_c_raises", "raises in compiled code")(raises)
register("cp_c_range", "returns an index out of range")(out_of_range)
register("cp_c_alloc", "allocates without bound in compiled code")(allocates)
''',
    "cp_float_choose": '''from numba import njit

from strategies import register


@register("cp_c_float", "returns a float")
@njit
def floats(observation, moves, n_moves, params, rng):
    return 0.5
''',
    "cp_name_clash": '''from numba import njit

from strategies import register


@register("greedy", "takes a built-in's name")
@njit
def choose(observation, moves, n_moves, params, rng):
    return 0
''',
}
