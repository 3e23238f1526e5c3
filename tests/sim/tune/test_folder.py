"""A tuning folder read by sniff: its files are bounded, and a foreign or special
one is one line, never read whole."""

from __future__ import annotations

import os

import pytest

from sim.errors import SniffError
from tests.helpers.cli import one_line, run_main


def test_bounded_best_json_and_at_file_specs(tmp_path, capsys) -> None:
    from strategies import parse_spec

    os.mkfifo(tmp_path / "fifo")
    for path in ("/dev/zero", tmp_path / "fifo"):
        with pytest.raises(ValueError, match="is a (device|FIFO)"):
            parse_spec(f"weighted:@{path}")
    big = tmp_path / "best.json"
    with open(big, "wb") as handle:  # sparse: 300 MB that are never read whole
        handle.truncate(300 * 2**20)
    with pytest.raises(ValueError, match="larger than"):
        parse_spec(f"weighted:@{big}")
    tuning = tmp_path / "tuning"
    tuning.mkdir()
    (tuning / "manifest.json").write_text("{}")
    os.link(big, tuning / "best.json")
    from sim.tune.folder import read_best

    with pytest.raises(SniffError, match="larger than"):
        read_best(tuning)


def test_a_foreign_trials_table_is_one_line(tmp_path) -> None:
    import pandas as pd

    from sim.tune.folder import read_trials

    pd.DataFrame({"x": [1, 2]}).to_parquet(tmp_path / "trials.parquet")
    with pytest.raises(SniffError, match="not the trials of this tuning run"):
        read_trials(tmp_path)
    os.unlink(tmp_path / "trials.parquet")
    os.mkfifo(tmp_path / "trials.parquet")
    with pytest.raises(SniffError, match="is a FIFO"):
        read_trials(tmp_path)


def test_a_tuning_folder_has_one_writer(tmp_path, capsys) -> None:
    """A second ``sniff tune --resume`` while another process writes the folder is refused
    in one line, and changes nothing."""
    pytest.importorskip("cma", reason="sniff tune needs the tune extra (installed by [test])")
    from sim.store.lock import RunLock
    from sim.tune import folder as tune_folder
    from sim.tune.setup import TuneConfig

    folder = tmp_path / "tuning"
    config = TuneConfig.build(strategy="weighted", against="greedy", players=2,
                              games=4000, games_per_trial=100)
    tune_folder.create(folder, config, "test")
    before = (folder / "manifest.json").read_bytes()
    with RunLock(folder) as other:
        other.acquire("another sniff tune")
        code, out, err = run_main(["tune", "--resume", "-o", str(folder)], capsys)
    one_line(code, err, "is being written by")
    assert (folder / "manifest.json").read_bytes() == before
