"""Python players that break the rules, one way each (tests/strategies/registry/test_plugins.py)."""

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


@register_python("py_memory", "runs out of memory")
def out_of_memory(observations, masks):
    raise MemoryError


@register_python("py_generator_exit", "raises a BaseException that is not an Exception")
def generator_exit(observations, masks):
    raise GeneratorExit("closed")


@register_python("py_exit", "calls sys.exit(0)")
def exits(observations, masks):
    import sys

    sys.exit(0)


class _NotAnArray:
    def __array__(self, *args, **kwargs):
        raise ValueError("no array here")


@register_python("py_bad_array", "returns an object that cannot become an array")
def bad_array(observations, masks):
    return _NotAnArray()
