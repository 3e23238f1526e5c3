"""Inputs that raised a traceback, exited with the wrong status, or were accepted and
answered wrongly: each is one line and exit 2 now."""

from __future__ import annotations

import pytest

from tests.helpers.cli import POSITION_TEXT, error_lines, run_main

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")


def one_line(code: int, err: str, text: str) -> None:
    assert code == 2, err
    lines = error_lines(err)
    assert len(lines) == 1 and lines[0].startswith("sniff: error: "), err
    assert text in lines[0], err


# --- 8. sniff plan


@pytest.mark.parametrize(("args", "text"), [
    (["--difference", "1e-300"], "--difference 1e-300 is too small to plan for"),
    (["--difference", "1e-150"], "--difference 1e-150 is too small to plan for"),
    (["--difference", "-0.02"], "its size, not its sign), got -0.02"),
    (["--difference", "0.02", "--sd", "0.6"], "--sd is the per-deal SD of duplicate deals: "
                                              "it needs --paired"),
    (["--difference", "0.02", "--paired", "--sd", "-1"], "--sd must be"),
    (["--difference", "nan"], "got nan"),
])
def test_plan_refuses_what_it_cannot_answer(args, text, capsys) -> None:
    code, out, err = run_main(["plan", *args], capsys)
    one_line(code, err, text)
    assert out == ""


def test_plan_still_answers_a_small_positive_difference(capsys) -> None:
    code, out, _ = run_main(["plan", "--difference", "0.00001"], capsys)
    assert code == 0 and "to detect a win-rate difference of 1e-05" in out
    code, out, _ = run_main(["plan", "--difference", "0.02", "--paired", "--sd", "0.6"], capsys)
    assert code == 0 and "7,064 deals" in out


# --- 9, 10, 14. sniff hint


POSITION = POSITION_TEXT.replace("lacks: 1=3,4\n", "")


@pytest.mark.parametrize(("change", "text"), [
    ("target: 99999999999999999999\n", "position: target must be at most 1,000,000"),
    ("target: 0\n", "position: target must be positive, got 0"),
    ("target: -5\n", "position: target must be positive, got -5"),
])
def test_a_position_target_that_cannot_be_is_refused(change, text, tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION + change)
    code, out, err = run_main(["hint", str(path), "--print-position"], capsys)
    one_line(code, err, text)


def test_a_big_score_is_refused_not_overflowed(tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION.replace("scores: 10 20", "scores: 10 99999999999999999999"))
    code, _, err = run_main(["hint", str(path), "--print-position"], capsys)
    one_line(code, err, "position: scores must be at most 1,000,000")


@pytest.mark.parametrize("seed", ["-1", "100000000000000000000000", str(2**63)])
def test_hint_refuses_seeds_every_other_command_refuses(seed, tmp_path, capsys) -> None:
    path = tmp_path / "position.txt"
    path.write_text(POSITION)
    code, out, err = run_main(["hint", str(path), "--seed", seed, "--budget", "10"], capsys)
    one_line(code, err, f"--seed must be an integer from 0 to 2**63-1, got {seed}")
    code, out, err = run_main(["simulate", "--seed", seed, "-o", str(tmp_path / "r")], capsys)
    one_line(code, err, "--seed must be an integer from 0 to 2**63-1")


def test_print_position_announces_no_compile(tmp_path) -> None:
    from tests.helpers.cli import sniff

    path = tmp_path / "position.txt"
    path.write_text(POSITION)
    done = sniff("hint", str(path), "--print-position",
                 env={**__import__("os").environ, "SNIFF_CACHE_DIR": str(tmp_path / "cache"),
                      "SNIFF_PRECOMPILE": "0"})
    assert done.returncode == 0, done.stderr
    assert "compiling" not in done.stderr and "\nplayers: 2\n" in done.stdout


# --- 11. an empty output name


@pytest.mark.parametrize("command", [["simulate", "--games", "10"], ["tournament"],
                                     ["openings", "--deals", "1"], ["report", "RUN"],
                                     ["tune", "greedy"]])
def test_an_empty_output_name_is_refused(command, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run_main([*command, "-o", ""], capsys)
    one_line(code, err, "an empty name")
    assert list(tmp_path.iterdir()) == []


def test_the_api_refuses_an_empty_output_name(tmp_path, monkeypatch) -> None:
    import sim
    from sim.errors import SniffError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SniffError, match="out is an empty name"):
        sim.simulate(games=10, out="")
    assert list(tmp_path.iterdir()) == []


# --- 14. small things


def test_tally_calls_a_non_number_what_it_is(capsys) -> None:
    code, _, err = run_main(["tally", "abc"], capsys)
    one_line(code, err, "'abc' is not a valid integer.")
    assert "range" not in err


def test_tune_docs_give_sigterm_its_own_status() -> None:
    from tests.helpers.cli import ROOT

    text = (ROOT / "docs" / "tune.md").read_text()
    assert "exit status is 130 after\nCtrl-C, 143 after SIGTERM" in text


def test_the_first_search_compile_is_not_reported_as_search_time(monkeypatch) -> None:
    """The first call of the compiled search compiles it (a minute on a cold cache): that
    call must not be the timed one."""
    import time as clock

    from sim.hint import estimate as hint
    from sim.hint import kernel as hint_kernel
    from sim.hint.position import parse_position

    real = hint_kernel.load()
    calls: list[int] = []

    class FirstCallCompiles:
        def __getattr__(self, name):
            return getattr(real, name)

        def search(self, *args):
            calls.append(args[3])
            if len(calls) == 1:
                clock.sleep(1.5)  # what a compile costs the first call
            return real.search(*args)

    monkeypatch.setattr(hint_kernel, "load", lambda search=False: FirstCallCompiles())
    result = hint.analyse(parse_position(POSITION), budget=20)
    assert calls == [1, 20]  # one untimed play-out per move first, then the search
    assert result.seconds < 1.0
