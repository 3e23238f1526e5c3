"""The training state of sniff learn: a state that is not sniff's (sparse, huge) is one
line, never read whole."""

from __future__ import annotations

import json

import pytest

from sim.errors import SniffError


def test_a_sparse_training_state_is_one_line(tmp_path) -> None:
    from sim.learn.state import ARRAYS, FORMAT, NUMBERS, load_state

    (tmp_path / NUMBERS).write_text(json.dumps({"format": FORMAT, "layers": 1}))
    with open(tmp_path / ARRAYS, "wb") as handle:
        handle.truncate(2 * 2**30)
    with pytest.raises(SniffError, match="damaged or not sniff's"):
        load_state(tmp_path, None)
