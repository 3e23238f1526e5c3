"""``sim.run.settings``: how a run is played as one object, and errors in the caller's terms.

A library call names its settings as Python names ("resume needs out"), the command line as
its flags ("--resume needs --out"), from one ``SettingError`` and one mapping in ``sim.cli``.
"""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

import sim
from sim.cli.options import error_text, flag_of
from sim.core.checks import check_seed
from sim.display.progress import ProgressBar
from sim.errors import SettingError, SniffError
from sim.kernels import generate
from sim.run.settings import RunControl, mode_of, numba_threads
from tests.helpers.cli import run_main


@pytest.mark.parametrize(("call", "library", "flags"), [
    ({"resume": True}, "resume needs out, the folder of the run to complete",
     ["--resume"]),
    ({"resume": True, "overwrite": True, "out": "x"}, "resume and overwrite exclude each other",
     ["--resume", "--overwrite", "--out", "x"]),
    ({"games": 10, "precision": 0.01}, "games and precision exclude each other",
     ["--games", "10", "--precision", "0.01"]),
    ({"seed": -1}, "seed must be an integer from 0 to 2**63-1, got -1", ["--seed", "-1"]),
])
def test_the_library_names_settings_and_the_command_line_names_flags(call, library, flags,
                                                                     capsys):
    with pytest.raises(SettingError) as refused:
        sim.simulate(**call)
    assert str(refused.value).startswith(library)
    code, _, err = run_main(["simulate", *flags], capsys)
    worded = error_text(refused.value)
    assert code == 2 and err == f"sniff: error: {worded}\n"
    assert "--" in worded and "--" not in str(refused.value)


def test_simulate_names_the_keywords_it_takes():
    with pytest.raises(SniffError, match="unknown option.s. thread; it takes duplicate, "):
        sim.simulate(games=10, thread=2)


def test_flags_of_settings_and_values():
    assert flag_of("chunk_size") == "--chunk-size"
    assert flag_of("games=400") == "--games 400"
    assert flag_of("rounds=False") == "--no-rounds"
    assert flag_of("duplicate=True") == "--duplicate"
    assert flag_of("strategy") == "STRATEGY"  # sniff tune's argument
    error = SettingError("{games=400} differs; start again with {overwrite}")
    assert str(error) == "games=400 differs; start again with overwrite"
    assert error.settings == ["games", "overwrite"]
    assert error_text(error) == "--games 400 differs; start again with --overwrite"
    carried = pickle.loads(pickle.dumps(error))  # from a Dask worker, whole
    assert error_text(carried) == error_text(error) and str(carried) == str(error)
    assert error_text(SniffError("{not a setting}")) == "{not a setting}"


def test_run_control_is_one_checked_frozen_object():
    control = RunControl(threads=1, progress=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        control.threads = 2
    assert control.but(mode="resume").mode == "resume" and control.mode == "new"
    assert control.alerts is control.notice
    with pytest.raises(SettingError, match="mode must be one of new, overwrite, resume"):
        RunControl(mode="append")
    assert [mode_of(False, False), mode_of(True, False), mode_of(False, True)] == [
        "new", "resume", "overwrite"]
    with pytest.raises(SettingError, match="threads must be from 1 to"):
        RunControl(threads=0).check()


def test_one_seed_check_for_every_caller():
    assert check_seed(2**63 - 1) == 2**63 - 1 and check_seed(np.int64(5)) == 5
    for bad in (2**63, -1, True, 1.5):
        with pytest.raises(SettingError, match="seed must be an integer from 0 to 2"):
            check_seed(bad)


def test_the_compile_notice_is_restored_however_a_block_ends():
    before = generate.notice
    said = []
    with pytest.raises(RuntimeError):
        with generate.compile_notice(said.append):
            assert generate.notice == said.append
            raise RuntimeError
    assert generate.notice is before


def test_numba_threads_are_given_back_however_a_block_ends():
    import numba

    before = numba.get_num_threads()
    with pytest.raises(RuntimeError):
        with numba_threads(1):
            assert numba.get_num_threads() == 1
            raise RuntimeError
    assert numba.get_num_threads() == before


def test_a_quiet_run_leaves_the_compile_notice_as_it_was(tmp_path, capsys):
    before = generate.notice
    code, out, _ = run_main(["simulate", "--players", "2", "--games", "20", "-q",
                             "-o", str(tmp_path / "run")], capsys)
    assert code == 0 and "games" in out
    assert generate.notice is before


def test_a_hidden_progress_bar_does_nothing():
    with ProgressBar("x", shown=False, total=10) as bar:
        bar.add(3)
        bar.to(5, 10)
        bar.note("n")
        assert bar.callback is None and bar.bar is None


@pytest.mark.parametrize("call, text", [
    (lambda: sim.simulate(2, "greedy,random", "10", out=None), "games must be a positive "
     "integer, got '10'"),
    (lambda: sim.simulate(2, "greedy,random", 100, chunk_size=2.5), "chunk_size must be a "
     "positive integer, got 2.5"),
])
def test_a_setting_of_the_wrong_type_is_shown_as_given(call, text) -> None:
    """Y06: games="10" was "must be a positive integer, got 10", which reads as a
    contradiction; the value is shown as Python writes it."""
    with pytest.raises(SettingError) as error:
        call()
    assert str(error.value) == text
