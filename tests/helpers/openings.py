"""An openings study stopped part way, for the tests of resuming, verifying and reading one."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from sim.errors import Stopped
from sim.openings.play import make_config
from sim.openings.study import measure_openings


def stopped_study(folder: Path, stop_at: int = 3) -> Path:
    """A 20-deal study (chunks of 2 deals, parts of 4) stopped by SIGTERM at its
    ``stop_at``-th pause between chunks: 3 keeps one part; 1 keeps the first chunk only."""
    calls = []

    def stop() -> None:
        calls.append(1)
        if len(calls) == stop_at:
            raise Stopped(signal.SIGTERM)

    with pytest.raises(Stopped):
        measure_openings(make_config(2, "random", 20, 1), folder, chunk_deals=2, part_deals=4,
                         between_chunks=stop)
    return folder
