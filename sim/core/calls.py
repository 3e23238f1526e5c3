"""A strategy called through its address: how the game loop, compiled once, reaches any
strategy compiled on its own.

Each strategy's ``choose(observation, moves, n_moves, params, rng)`` is compiled alone into a
C-callable function of the fixed signature :data:`CHOOSE_SIGNATURE` (``sim.kernels.generate``
writes that small wrapper per strategy and numba caches it). The game loop holds each seat's
function as an address (an int64, ``Seats.functions``) and calls it with :func:`call_choose`.
So the loop's compiled code names no strategy: it is compiled once per machine and plays
any lineup, and a new or edited strategy compiles only itself.

Why an address and not numba's first-class function types: those are marked experimental
and cache unreliably when passed into a ``cache=True`` function; an address is a plain
integer argument, and the call it compiles to is the same indirect call.

The wrapper's arrays travel as (data pointer, length) pairs, and the wrapper rebuilds them
with ``numba.carray`` (no copy). An exception inside a strategy cannot cross a C call, so the
wrapper returns :data:`RAISED` instead and the loop records it (``engine.BAD_CHOICE``).

Compiled code that is not handed an address (the search players' play-outs call their
heuristic policies this way) reads it from :data:`SLOTS`, a process-wide table that
compiled code finds by its symbol name (:func:`slot`), so the address is read when the code
runs, never frozen into it (a cached function keeps working in the next process, whose
addresses differ). ``sim.kernels.generate`` fills the table before such code runs.
"""

from __future__ import annotations

import ctypes

from llvmlite import binding, ir
from numba import types
from numba.extending import intrinsic

__all__ = [
    "call_choose", "call_search", "PAIRED_SLOT", "RAISED", "SEARCH_CHOICE", "SEARCH_PAIRED",
    "SEARCH_SIGNATURE", "SEARCH_SLOT", "SEARCH_VALUES", "slot", "SLOTS",
]

# The wrapper's C signature: observation (pointer, length), moves (pointer, length), n_moves,
# params (pointer, length), rng (pointer, length) -> the chosen index.
CHOOSE_SIGNATURE = types.int64(
    types.CPointer(types.int64), types.int64, types.CPointer(types.int64), types.int64,
    types.int64, types.CPointer(types.float64), types.int64, types.CPointer(types.uint64),
    types.int64,
)
# A search compiled alone (``expert``'s, called by its ``choose``, by ``sniff learn``'s teacher
# and by the tests): mode, then the arrays of a choose, then values (pointer, length) -> an int.
SEARCH_SIGNATURE = types.int64(
    types.int64, types.CPointer(types.int64), types.int64, types.CPointer(types.int64),
    types.int64, types.int64, types.CPointer(types.float64), types.int64,
    types.CPointer(types.uint64), types.int64, types.CPointer(types.float64), types.int64,
)
# What a search does, by its mode: the move to play, every move's value into ``values`` (both
# expert's searcher), or every move on the same deals (the paired searcher,
# ``strategies.search.paired.paired_values``: the search of ``sniff hint`` and ``sniff analyze``).
SEARCH_CHOICE, SEARCH_VALUES, SEARCH_PAIRED = 0, 1, 2
# What a wrapper returns when its strategy raised: never a move index.
RAISED = -(1 << 62)

# The table of addresses compiled code reads at run time (0: not filled), by index.
N_SLOTS = 16
SLOTS = (ctypes.c_int64 * N_SLOTS)()
# The slot of expert's search (the play-out policies take the first ones, by their index in
# ``strategies.search.playout.POLICIES``), and of the paired search of ``sniff hint`` and
# ``sniff analyze`` (a searcher of the same signature, compiled alone: ``SEARCH_PAIRED``).
SEARCH_SLOT = N_SLOTS - 1
PAIRED_SLOT = N_SLOTS - 2
_SYMBOL = "sniff_calls_slots"
binding.add_symbol(_SYMBOL, ctypes.addressof(SLOTS))


@intrinsic
def slot(typingctx, index):
    """The address in ``SLOTS[index]`` as the code runs (``index`` below ``N_SLOTS``)."""
    if not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        word = ir.IntType(64)
        table = builder.module.globals.get(_SYMBOL)
        if table is None:
            table = ir.GlobalVariable(builder.module, ir.ArrayType(word, N_SLOTS), _SYMBOL)
            table.linkage = "external"
        at = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.load(builder.gep(table, [ir.Constant(ir.IntType(32), 0), at]))

    return types.int64(index), codegen


def _contiguous_vector(value: types.Type) -> bool:
    return isinstance(value, types.Array) and value.ndim == 1 and value.layout == "C"


def _call_address(address, arguments):
    """The signature and code generator of a call to the C function at ``address`` with
    ``arguments`` (integers, and contiguous vectors passed as pointer and length), returning
    an int64; None when an argument has another type."""
    if not isinstance(address, types.Integer):
        return None
    for value in arguments:
        if not (_contiguous_vector(value) or isinstance(value, types.Integer)):
            return None
    signature = types.int64(types.int64, *arguments)

    def codegen(context, builder, signature, args):
        flat = []
        for kind, value in zip(signature.args[1:], args[1:], strict=True):
            if isinstance(kind, types.Array):
                array = context.make_array(kind)(context, builder, value)
                flat += [array.data, builder.extract_value(array.shape, 0)]
            else:
                flat.append(context.cast(builder, value, kind, types.int64))
        word = ir.IntType(64)
        function = builder.inttoptr(
            args[0], ir.FunctionType(word, [a.type for a in flat]).as_pointer())
        return builder.call(function, flat)

    return signature, codegen


@intrinsic
def call_choose(typingctx, address, observation, moves, n_moves, params, rng):
    """``choose(observation, moves, n_moves, params, rng)`` of the strategy whose wrapper
    lives at ``address`` (its index, or :data:`RAISED`). Every array must be contiguous."""
    if not isinstance(n_moves, types.Integer):
        return None
    return _call_address(address, (observation, moves, n_moves, params, rng))


@intrinsic
def call_search(typingctx, address, mode, observation, moves, n_moves, params, rng, values):
    """``search(mode, observation, moves, n_moves, params, rng, values)`` of the search whose
    wrapper (of :data:`SEARCH_SIGNATURE`) lives at ``address``: an int, or :data:`RAISED`."""
    if not all(isinstance(v, types.Integer) for v in (mode, n_moves)):
        return None
    return _call_address(address, (mode, observation, moves, n_moves, params, rng, values))
