"""``sniff learn`` (``sim.learn``): the curve's measure pairs deals, training on a tiny
budget runs end to end, resumes and is reproducible by its seed, the expert teacher's labels
survive a resume, bad options are one line, a signal stops after the fit, and the training
state is plain arrays (a pickle is never read)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.errors import SniffError
from strategies import parse_spec
from strategies.learned.net import read_layers
from tests.helpers.cli import sniff_here
from tests.helpers.learned import tiny

pytest.importorskip("sklearn.neural_network")


def arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {key: data[key] for key in data.files}


def assert_same_model(first: Path, second: Path) -> None:
    a, b = arrays(first), arrays(second)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_the_curve_measure_pairs_deals_and_a_heuristic_against_itself_is_even() -> None:
    """A deterministic player against itself on duplicate deals wins each deal's two games
    once each: every deal's share is exactly one half, and so is the rate, with no spread;
    another seat row on the same deals gives other shares (the measure is of the rows)."""
    from sim.learn import measure, seat

    blocker = seat.player_row(seat.BLOCKER)
    per_deal = measure.deal_wins(2, 11, 41, blocker, blocker)  # rounded down to 40 games
    assert per_deal.shape == (20,)
    np.testing.assert_array_equal(per_deal, 0.5)
    result = measure.evaluate(2, 11, 40, blocker, blocker)
    assert (result["games"], result["wins"], result["rate"], result["low"], result["high"]) \
        == (40, 20, 0.5, 0.5, 0.5)
    partner = seat.player_row(seat.PARTNER)
    against = measure.deal_wins(2, 11, 40, partner, blocker)
    assert set(np.unique(against)) <= {0.0, 0.5, 1.0} and not np.all(against == 0.5)
    assert measure.evaluate(2, 11, 40, partner, blocker)["wins"] == int(2 * against.sum())


def test_training_runs_end_to_end_resumes_and_is_reproducible(tmp_path: Path) -> None:
    from sim.learn.training import learn

    whole = tmp_path / "whole"
    learn(tiny(), whole)
    for name in ("model.npz", "settings.json", "log.jsonl", "curve.csv", "curve.png",
                 "state.npz", "state.json", "snapshots/iter-001.npz", "snapshots/iter-002.npz"):
        assert (whole / name).exists(), name
    log = [json.loads(line) for line in (whole / "log.jsonl").read_text().splitlines()]
    assert [row["iteration"] for row in log] == [1, 2]
    assert all(0 <= row["win_rate"] <= 1 and row["eval_games"] == 12 for row in log)
    read_layers(whole / "model.npz", 2)
    parse_spec(f"learned:model={whole / 'model.npz'}")  # plays as learned:model=PATH

    # Stopped during iteration 2 (as Ctrl-C would): iteration 1 is kept; --resume ends
    # with the model of the uninterrupted run, and so does the same seed from scratch.
    stopped = tmp_path / "stopped"

    def stop_in_iteration_two(text: str) -> None:
        if text.startswith("iteration 2/2") and "fitting" in text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        learn(tiny(), stopped, progress=stop_in_iteration_two)
    assert len((stopped / "log.jsonl").read_text().splitlines()) == 1
    assert_same_model(stopped / "model.npz", whole / "snapshots/iter-001.npz")
    learn(tiny(), stopped, resume=True)
    assert_same_model(stopped / "model.npz", whole / "model.npz")
    assert (stopped / "curve.csv").read_text() == (whole / "curve.csv").read_text()

    again = tmp_path / "again"
    learn(tiny(), again)
    assert_same_model(again / "model.npz", whole / "model.npz")
    other = tmp_path / "other"
    learn(tiny(seed=8, iterations=1), other)
    assert not np.array_equal(arrays(other / "model.npz")["W0"],
                              arrays(whole / "snapshots/iter-001.npz")["W0"])

    # More iterations on resume; a changed option is refused.
    learn(tiny(iterations=3), stopped, resume=True, given={"iterations"})
    assert len((stopped / "log.jsonl").read_text().splitlines()) == 3
    with pytest.raises(SniffError, match="games=30 differs from the folder's 24"):
        learn(tiny(games=30), stopped, resume=True, given={"games"})
    with pytest.raises(SniffError, match="iterations=2 is fewer than the 3 already done"):
        learn(tiny(iterations=2), stopped, resume=True, given={"iterations"})
    with pytest.raises(SniffError, match="is not empty"):
        learn(tiny(), whole)

    # A folder whose settings lack one (another version of sniff) is refused, not defaulted.
    settings = json.loads((stopped / "settings.json").read_text())
    del settings["label_rate"]
    (stopped / "settings.json").write_text(json.dumps(settings))
    with pytest.raises(SniffError, match="records no label_rate"):
        learn(tiny(iterations=4), stopped, resume=True, given={"iterations"})


def test_training_with_the_expert_teacher_keeps_its_labels_and_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sim.learn import training

    config = tiny(games=6, teacher="expert", teacher_budget=4, label_rate=0.5)
    whole = tmp_path / "whole"
    training.learn(config, whole)
    labelled = []
    for iteration in (1, 2):
        with np.load(whole / f"records/iter-00{iteration}.npz") as data:
            x, value = data["x"], data["value"]
        assert x.shape[0] == value.shape[0] > 20
        assert np.all((value >= 0) & (value <= 1))
        labelled.append(value)
    # Every candidate of a labelled decision is a record: the values are not all alike.
    assert np.unique(np.concatenate(labelled)).size > 10

    # Two threads play the same games (iteration 2 has two chunks: the network against
    # itself and against the heuristic): the same records as the run's.
    network = training.read_network(whole / "snapshots/iter-001.npz")
    threaded = training.iteration_games(config, 2, network, threads=2)
    with np.load(whole / "records/iter-002.npz") as data:
        for name, array in zip(("x", "value", "outcome"), threaded):
            np.testing.assert_array_equal(array, data[name], err_msg=name)

    # Stopped in iteration 2's fit: resuming reads iteration 1's labels back (no search
    # again) and ends with the uninterrupted run's model.
    stopped = tmp_path / "stopped"

    def stop_in_iteration_two(text: str) -> None:
        if text.startswith("iteration 2/2") and "fitting" in text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        training.learn(config, stopped, progress=stop_in_iteration_two)
    played = []
    real = training.iteration_games
    monkeypatch.setattr(training, "iteration_games",
                        lambda config, iteration, *rest: played.append(iteration) or real(
                            config, iteration, *rest))
    training.learn(config, stopped, resume=True)
    assert played == []  # both iterations' labels were kept
    assert_same_model(stopped / "model.npz", whole / "model.npz")


@pytest.mark.parametrize(("args", "message"), [
    (["--players", "5"], "--players must be 2, 3 or 4, got 5"),
    (["--games", "0"], "--games must be between 2 and"),
    (["--epsilon", "1.5"], "--epsilon must be between 0 and 1"),
    (["--hidden", "64,x"], "--hidden must be 1 to 3 widths"),
    (["--target", "points"], "--target must be one of value, outcome, mix"),
    (["--teacher", "oracle"], "--teacher must be one of none, expert"),
    (["--teacher", "expert", "--label-rate", "0"], "--label-rate must be in (0, 1]"),
    (["--teacher", "expert", "--teacher-budget", "0"], "--teacher-budget must be between 1"),
    (["--teacher", "expert", "--target", "outcome"], "with --teacher the teacher's values"),
])
def test_learn_refuses_bad_options_in_one_line(args, message, tmp_path: Path) -> None:
    completed = sniff_here("learn", "--out", str(tmp_path / "x"), *args)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and message in completed.stderr, completed.stderr


def test_learn_resume_of_a_folder_that_is_not_one(tmp_path: Path) -> None:
    completed = sniff_here("learn", "--out", str(tmp_path), "--resume")
    assert completed.returncode == 2
    assert "is not a sniff learn folder" in completed.stderr


def test_a_signal_during_the_fit_stops_after_it_not_inside_it() -> None:
    """scikit-learn's partial_fit swallows a KeyboardInterrupt and keeps going with a
    half-done epoch: the signal must wait for the fit and then stop the training."""
    import os
    import signal

    from sim.errors import Stopped
    from sim.learn.training import Signals

    class Swallowing:
        calls = 0

        def partial_fit(self, inputs, wanted) -> None:
            try:
                os.kill(os.getpid(), signal.SIGTERM)
            except KeyboardInterrupt:  # what scikit-learn does
                pass
            self.calls += 1

    regressor = Swallowing()
    with Signals() as signals, pytest.raises(Stopped) as stopped:
        signals.fit(regressor, None, None)
    assert regressor.calls == 1 and stopped.value.exit_status == 143


def test_the_training_state_is_plain_arrays_and_a_pickle_is_never_read(tmp_path: Path) -> None:
    """The regressor saved and restored through state.npz/state.json continues exactly as the
    one kept in memory; a state.pkl (an earlier release's, or planted) is refused, unread."""
    from sklearn.neural_network import MLPRegressor

    from sim.learn.state import load_state, save_state

    def new():
        return MLPRegressor(hidden_layer_sizes=(8, 4), random_state=1, batch_size=16)

    rng = np.random.default_rng(0)
    x, y = rng.random((200, 5)), rng.random(200)
    kept, saved = new(), new()
    for regressor in (kept, saved):
        regressor.partial_fit(x, y)
    save_state(tmp_path, saved, 1)
    restored = new()
    assert load_state(tmp_path, restored) == 1
    kept.partial_fit(x, y)
    restored.partial_fit(x, y)
    assert all(np.array_equal(a, b) for a, b in zip(kept.coefs_, restored.coefs_))
    with np.load(tmp_path / "state.npz", allow_pickle=False) as data:
        assert "coef0" in data.files
    (tmp_path / "state.json").write_text("{not json")
    with pytest.raises(SniffError, match="damaged"):
        load_state(tmp_path, new())
    planted = tmp_path / "old"
    planted.mkdir()
    (planted / "state.pkl").write_bytes(b"cos\nsystem\n(S'touch ran'\ntR.")
    with pytest.raises(SniffError, match="does not read"):
        load_state(planted, new())
    assert not Path("ran").exists()
