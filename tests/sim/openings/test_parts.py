"""The openings study's parts: every part writer refuses a table folder that is a link, and
a resume refuses it before it reads a part through it."""

from __future__ import annotations

import pytest

from sim.files import UnsafeFile


def test_every_part_writer_refuses_a_table_folder_that_is_a_link(tmp_path) -> None:
    """The part writers themselves (simulate's chunks, the openings parts) check it too,
    so a folder swapped for a link while a run plays is refused as well; an openings
    resume refuses it before it reads (or sets aside) a part through it."""
    import pandas as pd
    import pyarrow as pa

    from sim.openings.folder import GamesParts
    from sim.openings.parts import PartsRun, play_parts
    from sim.openings.play import make_config
    from sim.openings.tally import OpeningsTally
    from sim.store.io import write_chunk

    outside = tmp_path / "outside"
    outside.mkdir()
    run = tmp_path / "run"
    run.mkdir()
    (run / "games").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        write_chunk(run, 0, {"games": pa.table({"game": [0]})})
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        GamesParts(run, None, 1).add(0, 1, pd.DataFrame({"deal_id": [0]}))
    assert list(outside.iterdir()) == []
    (outside / "part-000000.parquet").write_text("precious data")  # a resume reads it first
    config = make_config(2, "random", 4, 1)
    with pytest.raises(UnsafeFile, match="is a link, not the games folder"):
        play_parts(PartsRun(run, config, "test", 2, 2, ""), OpeningsTally(), resume=True)
    assert [p.read_text() for p in outside.iterdir()] == ["precious data"]
