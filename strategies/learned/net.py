"""``learned``'s value network as plain arrays: the compiled forward pass and the model files.

A model is a multi-layer perceptron (ReLU hidden layers, one linear output: the mover
side's chance to win the game from the move's afterstate), as scikit-learn's
``MLPRegressor`` computes it. The file is an ``.npz`` of plain arrays, read with numpy
only (a user without the training extra plays with it):

    W0, b0, W1, b1, ...   layer weights (inputs x outputs) and biases, float64
    feature_version       the inputs it reads: 1, the move's afterstate
                          (``strategies.learned.features``); 3, those and the round's record
                          (``strategies.learned.record_inputs``); W0 has
                          ``inputs_for(feature_version, players)`` rows
    players               the player count it was trained for (2, 3 or 4)

In the kernel the layers are one flat float64 array (each layer's weights row-major, then
its biases) with the layer widths in ``sizes``; :func:`forward` reads it without
allocating.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from numba import njit

from sim.errors import SniffError
from sim.files import write_atomic
from strategies.learned.features import FEATURE_VERSIONS, N_BASE_INPUTS
from strategies.learned.record_inputs import inputs_for

__all__ = [
    "first_layer_partial", "forward", "forward_from", "MAX_WIDTH", "ModelError", "pack",
    "read_layers", "save_model",
]

MAX_WIDTH = 512
MAX_LAYERS = 4


class ModelError(SniffError):
    """A model file that cannot be played (message is user-facing, one line)."""


@njit
def first_layer_partial(x, weights, sizes, out) -> None:
    """The first layer's bias plus the record block's share (inputs from ``N_BASE_INPUTS``
    on, which do not depend on the candidate move) into ``out``: once per decision."""
    n_in = sizes[0]
    n_out = sizes[1]
    bias = n_in * n_out
    for j in range(n_out):
        out[j] = weights[bias + j]
    for i in range(N_BASE_INPUTS, n_in):
        value = x[i]
        if value != 0.0:
            row = i * n_out
            for j in range(n_out):
                out[j] += value * weights[row + j]


@njit
def forward_from(x, weights, sizes, scratch, partial) -> float:
    """The network's output for inputs ``x`` whose first layer starts from ``partial``
    (:func:`first_layer_partial` of the same decision); ``scratch``: float64 (2, max
    width). The sums run in the order :func:`forward`'s do, so both give the same bits."""
    n_out = sizes[1]
    out = scratch[0]
    for j in range(n_out):
        out[j] = partial[j]
    for i in range(min(sizes[0], N_BASE_INPUTS)):
        value = x[i]
        if value != 0.0:
            row = i * n_out
            for j in range(n_out):
                out[j] += value * weights[row + j]
    return _other_layers(weights, sizes, scratch)


@njit
def forward(x, weights, sizes, scratch) -> float:
    """The network's output for inputs ``x`` (``scratch``: float64 (2, max width)); it skips
    zero inputs, which are most of the tile bits."""
    first_layer_partial(x, weights, sizes, scratch[1])
    return forward_from(x, weights, sizes, scratch, scratch[1])


@njit
def _other_layers(weights, sizes, scratch) -> float:
    """ReLU on the first layer's sums in ``scratch[0]``, then the other layers."""
    n_layers = sizes.shape[0] - 1
    offset = sizes[0] * sizes[1] + sizes[1]
    for layer in range(1, n_layers):
        previous = scratch[(layer + 1) % 2]
        for j in range(sizes[layer]):
            if previous[j] < 0.0:
                previous[j] = 0.0
        n_in = sizes[layer]
        n_out = sizes[layer + 1]
        out = scratch[layer % 2]
        bias = offset + n_in * n_out
        for j in range(n_out):
            out[j] = weights[bias + j]
        for i in range(n_in):
            value = previous[i]
            if value != 0.0:
                row = offset + i * n_out
                for j in range(n_out):
                    out[j] += value * weights[row + j]
        offset = bias + n_out
    return scratch[(n_layers - 1) % 2, 0]


def pack(coefs: list[np.ndarray], intercepts: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Layers (as scikit-learn's ``coefs_`` and ``intercepts_``) to ``(weights, sizes)``."""
    parts = []
    for weight, bias in zip(coefs, intercepts):
        parts.append(np.ascontiguousarray(weight, dtype=np.float64).ravel())
        parts.append(np.ascontiguousarray(bias, dtype=np.float64).ravel())
    sizes = [coefs[0].shape[0]] + [w.shape[1] for w in coefs]
    return np.concatenate(parts), np.array(sizes, dtype=np.int64)


def version_of(n_inputs: int) -> int:
    """The feature version of a network with ``n_inputs`` inputs."""
    return 1 if n_inputs == N_BASE_INPUTS else 3


def save_model(path: Path, coefs, intercepts, players: int, **extra) -> None:
    """Write a model file (atomically: a partial file is never left under ``path``)."""
    arrays = {}
    for index, (weight, bias) in enumerate(zip(coefs, intercepts)):
        arrays[f"W{index}"] = np.asarray(weight, dtype=np.float64)
        arrays[f"b{index}"] = np.asarray(bias, dtype=np.float64).ravel()
    arrays["feature_version"] = np.array(version_of(coefs[0].shape[0]))
    arrays["players"] = np.array(players)
    for key, value in extra.items():
        arrays[key] = np.asarray(value)

    def write(temporary: Path) -> None:
        with open(temporary, "wb") as handle:  # a handle: np.savez would append ".npz"
            np.savez(handle, **arrays)  # type: ignore[arg-type]  # numpy's stub matches **arrays to allow_pickle

    write_atomic(Path(path), write)


def read_layers(path: Path, players: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A model file's layers, checked; one-line :class:`ModelError` for anything wrong."""
    where = f"model file {str(path)!r}"
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except FileNotFoundError:
        raise ModelError(f"{where} does not exist") from None
    except IsADirectoryError:
        raise ModelError(f"{where} is a folder, not an .npz model") from None
    except OSError as error:
        raise ModelError(f"cannot read {where}: {error.strerror or error}") from None
    except (ValueError, zipfile.BadZipFile, EOFError):
        raise ModelError(f"{where} is not an .npz model (corrupt or another format)") from None
    try:
        version = int(arrays["feature_version"])
        trained_for = int(arrays["players"])
    except (KeyError, TypeError, ValueError):
        raise ModelError(f"{where} is not a model of learned (no feature_version/players)") \
            from None
    if version not in FEATURE_VERSIONS:
        known = " and ".join(str(v) for v in FEATURE_VERSIONS)
        raise ModelError(f"{where} has feature version {version}; this sniff reads versions "
                         f"{known}: train it again")
    if trained_for != players:
        raise ModelError(f"{where} is a model for {trained_for} players, not {players}")
    n_inputs = inputs_for(version, players)
    coefs, intercepts = [], []  # type: ignore[var-annotated]  # no hint: it would change learned's code digest
    while f"W{len(coefs)}" in arrays:
        coefs.append(arrays[f"W{len(coefs)}"])
        intercepts.append(arrays.get(f"b{len(intercepts)}"))
    width = n_inputs
    for weight, bias in zip(coefs, intercepts):
        if (bias is None or weight.ndim != 2 or weight.shape[0] != width or bias.ndim != 1
                or bias.shape[0] != weight.shape[1] or weight.shape[1] > MAX_WIDTH
                or not np.all(np.isfinite(weight)) or not np.all(np.isfinite(bias))):
            raise ModelError(f"{where} has malformed layers (need W0: {n_inputs} inputs, "
                             "each layer's inputs the width of the one before, finite values)")
        width = weight.shape[1]
    if not coefs or width != 1 or len(coefs) > MAX_LAYERS:
        raise ModelError(f"{where} has malformed layers (1 to {MAX_LAYERS} layers, one output)")
    return coefs, intercepts  # type: ignore[return-value]  # the loop refused a None bias


def load_model(path: Path, players: int) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, sizes)`` of a checked model file, ready for :func:`forward`."""
    return pack(*read_layers(path, players))
