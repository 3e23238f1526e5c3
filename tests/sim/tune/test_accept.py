"""``sniff tune --accept sprt``: the match against the defaults is ``sniff compare``'s
sequential test. A clearly better start is accepted (H1), the defaults against themselves
rejected (H0), each the same again for the same seed; the record is in ``best.json``;
``--resume`` keeps it; bad settings are one line and exit 2.

Tiny budgets: ``sigma`` so small that the tuned values stay at the start (rounded to 4
digits, they are the start), so the decision tested is known in advance.
"""

from __future__ import annotations

import json
import shlex

import pytest

from sim.run.settings import RunControl
from sim.tune import generations as tune_run
from sim.tune.study import TuneInterrupted, load, tune
from tests.helpers.cli import run_main

pytest.importorskip("cma")

# The tuned weighted of docs/tune.md: +8% over its defaults with 4 players.
BETTER = ("weighted:points=1.914,shed=0.6147,reply=-2.954,follow=0.2745,doubles=-5.932,"
          "suits=1.126,block=13.55,partner=1.147")
STAY = {"games": 80, "games_per_trial": 20, "popsize": 2, "sigma": 1e-6, "accept": "sprt"}
BETTER_RUN = {"strategy": BETTER, "against": "weighted", "players": 4, "seed": 3,
              "validate_games": 4000, **STAY}
SAME_RUN = {"strategy": "blocker", "against": "greedy", "players": 2, "seed": 5,
            "validate_games": 2000, **STAY}
RECORD = {"decision", "verdict", "games", "deals", "llr", "lower", "upper", "hypotheses",
          "estimate", "seed", "opponent", "cap", "method", "command", "text"}


def acceptance_of(folder) -> dict:
    return json.loads((folder / "best.json").read_text())["acceptance"]


def test_a_clearly_better_start_is_accepted_and_again_for_the_same_seed(tmp_path, capsys):
    first = tune(out=tmp_path / "a", **BETTER_RUN)
    assert first.spec.startswith("weighted:points=1.914,")  # stayed at the start
    record = acceptance_of(first.folder)
    assert RECORD <= set(record)
    assert (record["decision"], record["verdict"]) == ("H1", "accepted")
    assert record["llr"] >= record["upper"]
    assert record["games"] == 600  # of the cap of 4,000: this seed's deals decide early
    assert record["games"] == 2 * record["deals"] and record["games"] % 100 == 0
    assert record["hypotheses"]["h1"] == 0.05 and record["opponent"] == "weighted (defaults)"
    assert "--max-games 4000" in record["command"] and "note" in record["estimate"]
    assert first.validation == []  # the field is the defaults: the test replaced its match
    again = tune(out=tmp_path / "b", **BETTER_RUN)
    assert acceptance_of(again.folder) == record
    assert str(first).splitlines()[2].startswith("  accepted by SPRT against the defaults: H1")
    # the recorded sniff compare command plays the same games to the same decision
    args = shlex.split(record["command"])[1:]
    code, out, _ = run_main([*args, "-q", "-o", str(tmp_path / "compare")], capsys)
    assert code == 0 and out.startswith("H1: ") and "after 600 games (300 deals)" in out
    assert json.loads((tmp_path / "compare" / "compare.json").read_text())["llr"] == \
        record["llr"]


def test_the_defaults_against_themselves_are_rejected_and_resume_keeps_the_record(
        tmp_path, monkeypatch, capsys):
    whole = tune(out=tmp_path / "whole", **SAME_RUN)
    record = acceptance_of(whole.folder)
    assert whole.spec == "blocker:block=8.0,reply=0.5,shed=0.1"  # the defaults
    assert (record["decision"], record["verdict"]) == ("H0", "rejected")
    # a deterministic strategy against itself splits every duplicate deal: variance 0 (at
    # its floor), so the first chunk decides
    assert record["games"] == 100 and record["llr"] <= record["lower"]
    assert [v.opponent for v in whole.validation] == ["greedy"]  # still a fixed match
    assert whole.validation[0].games == 2000
    assert load(whole.folder).acceptance == record

    # interrupted in the validation: the resume plays it again to the same record
    real = tune_run.validate

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tune_run, "validate", interrupted)
    with pytest.raises(TuneInterrupted):
        tune(out=tmp_path / "cut", **SAME_RUN)
    monkeypatch.setattr(tune_run, "validate", real)
    resumed = tune(out=tmp_path / "cut", control=RunControl(mode="resume"))
    assert acceptance_of(resumed.folder) == record
    code, out, _ = run_main(["tune", "--resume", "-o", str(tmp_path / "cut")], capsys)
    assert code == 0 and "rejected by SPRT against the defaults: H0" in out
    code, _, err = run_main(["tune", "--resume", "-o", str(tmp_path / "cut"), "--h1", "0.1"],
                            capsys)
    assert code == 2 and "--h1 differs from the run" in err and err.count("\n") == 1


BASE = ["tune", "blocker", "--against", "greedy", "--players", "2", "--games", "3000",
        "--games-per-trial", "100", "--popsize", "5"]


@pytest.mark.parametrize("args, message", [
    (["--accept", "maybe"], "'maybe' is not one of 'fixed', 'sprt'"),
    (["--accept", "sprt", "--h1", "0"], "--h1 must be above --h0"),
    (["--accept", "sprt", "--alpha", "0.7"], "--alpha must be an error rate"),
    (["--accept", "sprt", "--h0", "2"], "--h0 must be a win-rate difference"),
    (["--accept", "sprt", "--validate-games", "50"], "at least one chunk of the test (100"),
    (["--accept", "sprt", "--validate-games", "0"], "at least one chunk"),
    (["--h1", "0.1"], "with --accept fixed leave them out"),
    (["--accept", "sprt", "--beta", "x"], "'x' is not a valid float"),
])
def test_bad_acceptance_settings_are_one_line_and_exit_2(args, message, capsys, tmp_path):
    code, _, err = run_main([*BASE, *args, "-o", str(tmp_path / "new")], capsys)
    assert code == 2, err
    assert message in err and err.count("\n") == 1 and err.startswith("sniff: error: ")
    assert not (tmp_path / "new").exists()
