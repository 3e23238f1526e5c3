"""The regressor of ``sniff learn`` saved as plain arrays and JSON, never as a pickle.

A training folder may come from someone else, and unpickling a file runs whatever code it
names. So ``--resume`` reads the regressor back from ``state.npz`` (numpy arrays, read with
``allow_pickle=False``) and ``state.json`` (numbers), checked: the network's weights, Adam's
moments and step count, the loss history, and the random state that shuffles the next
minibatches, which is everything ``MLPRegressor.partial_fit`` carries from one call to the
next, so a resumed run ends with the same model as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np

from sim.errors import SniffError
from sim.files import open_regular, read_regular, write_atomic

__all__ = ["FORMAT"]

ARRAYS = "state.npz"
NUMBERS = "state.json"
OLD_PICKLE = "state.pkl"  # of releases before this one: never read
FORMAT = "sniff-learn-state/1"
MAX_ARRAYS = 256 * 2**20  # four layers of 512 x 512 with Adam's moments are 40 MiB


def _check_arrays(path: Path) -> None:
    """``state.npz`` is a regular file whose arrays, inflated, fit ``MAX_ARRAYS`` (a FIFO, a
    2 GB sparse file or a zip bomb is refused before numpy reads it); ``ValueError`` if not."""
    os.close(open_regular(path, ARRAYS))
    if os.stat(path).st_size > MAX_ARRAYS:
        raise ValueError("too large")
    with zipfile.ZipFile(path) as archive:
        if sum(info.file_size for info in archive.infolist()) > MAX_ARRAYS:
            raise ValueError("too large")


def save_state(folder: Path, regressor, iterations_done: int) -> None:
    """Write the regressor's state (numbers first, then arrays; a reader wants both)."""
    optimizer = regressor._optimizer
    layers = len(regressor.coefs_)
    arrays = {}
    for i in range(layers):
        arrays[f"coef{i}"] = regressor.coefs_[i]
        arrays[f"intercept{i}"] = regressor.intercepts_[i]
        arrays[f"best_coef{i}"] = regressor._best_coefs[i]
        arrays[f"best_intercept{i}"] = regressor._best_intercepts[i]
    for i, (m, v) in enumerate(zip(optimizer.ms, optimizer.vs)):
        arrays[f"adam_m{i}"], arrays[f"adam_v{i}"] = m, v
    arrays["loss_curve"] = np.asarray(regressor.loss_curve_, dtype=np.float64)
    kind, keys, position, has_gauss, cached = regressor._random_state.get_state()
    arrays["rng_keys"] = keys
    numbers = {
        "format": FORMAT, "iterations_done": int(iterations_done), "layers": layers,
        "n_iter_": int(regressor.n_iter_), "t_": int(regressor.t_),
        "loss_": float(regressor.loss_), "best_loss_": float(regressor.best_loss_),
        "no_improvement_count": int(regressor._no_improvement_count),
        "n_features_in_": int(regressor.n_features_in_), "n_layers_": int(regressor.n_layers_),
        "n_outputs_": int(regressor.n_outputs_), "out_activation_": regressor.out_activation_,
        "adam_t": int(optimizer.t), "rng": [kind, int(position), int(has_gauss),
                                            float(cached)],
    }

    def write_arrays(temporary: Path) -> None:
        with temporary.open("wb") as handle:
            np.savez(handle, **arrays)

    write_atomic(folder / ARRAYS, write_arrays)
    write_atomic(folder / NUMBERS,
                 lambda temporary: temporary.write_text(json.dumps(numbers, indent=1)))


def load_state(folder: Path, regressor) -> int:
    """Put the saved state into a new ``regressor`` (made with the folder's settings); the
    iterations done. A missing state is 0 iterations; a damaged or foreign one is one line."""
    if not (folder / NUMBERS).exists():
        if (folder / OLD_PICKLE).exists():
            raise SniffError(f"{folder} keeps its training state in {OLD_PICKLE}, a pickle of "
                             "an earlier release, which sniff does not read (loading one can "
                             "run code): start the training again in a new folder")
        return 0
    try:
        numbers = json.loads(read_regular(folder / NUMBERS, 2**24, NUMBERS))
        _check_arrays(folder / ARRAYS)
        if not isinstance(numbers, dict) or numbers.get("format") != FORMAT:
            raise ValueError("format")
        layers = int(numbers["layers"])
        with np.load(folder / ARRAYS, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        coefs = [arrays[f"coef{i}"] for i in range(layers)]
        intercepts = [arrays[f"intercept{i}"] for i in range(layers)]
        shapes = [c.shape for c in coefs]
        if any(c.ndim != 2 or b.shape != (c.shape[1],) for c, b in zip(coefs, intercepts)) or (
                any(a[1] != b[0] for a, b in zip(shapes, shapes[1:]))):
            raise ValueError("shapes")
        params = coefs + intercepts
        ms = [arrays[f"adam_m{i}"] for i in range(len(params))]
        vs = [arrays[f"adam_v{i}"] for i in range(len(params))]
        if any(m.shape != p.shape or v.shape != p.shape for m, v, p in zip(ms, vs, params)):
            raise ValueError("moments")
        kind, position, has_gauss, cached = numbers["rng"]
        keys = arrays["rng_keys"]
        if kind != "MT19937" or keys.shape != (624,) or keys.dtype != np.uint32:
            raise ValueError("rng")
        rng = np.random.RandomState()
        rng.set_state((kind, keys, int(position), int(has_gauss), float(cached)))
        done = int(numbers["iterations_done"])
        if not 0 <= done <= 1000 or not 1 <= layers <= 4:  # LearnConfig's own ranges
            raise ValueError("counts")
        state = {
            "coefs_": coefs, "intercepts_": intercepts,
            "_best_coefs": [arrays[f"best_coef{i}"] for i in range(layers)],
            "_best_intercepts": [arrays[f"best_intercept{i}"] for i in range(layers)],
            "n_iter_": int(numbers["n_iter_"]), "t_": int(numbers["t_"]),
            "loss_": float(numbers["loss_"]), "best_loss_": float(numbers["best_loss_"]),
            "_no_improvement_count": int(numbers["no_improvement_count"]),
            "n_features_in_": int(numbers["n_features_in_"]),
            "n_layers_": int(numbers["n_layers_"]), "n_outputs_": int(numbers["n_outputs_"]),
            "out_activation_": str(numbers["out_activation_"]),
            "loss_curve_": [float(x) for x in arrays["loss_curve"]],
            "validation_scores_": None, "best_validation_score_": None, "_random_state": rng,
        }
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError, EOFError,
            zipfile.BadZipFile, MemoryError):
        raise SniffError(f"{folder}: its training state ({NUMBERS}, {ARRAYS}) is damaged or "
                         "not sniff's: start again in a new folder") from None
    for name, value in state.items():
        setattr(regressor, name, value)
    from sklearn.neural_network._stochastic_optimizers import AdamOptimizer

    optimizer = AdamOptimizer(params, regressor.learning_rate_init, regressor.beta_1,
                              regressor.beta_2, regressor.epsilon)
    optimizer.t, optimizer.ms, optimizer.vs = int(numbers["adam_t"]), ms, vs
    regressor._optimizer = optimizer
    return done
