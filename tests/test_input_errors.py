"""Inputs that raised a traceback, exited with the wrong status, or were accepted and
answered wrongly (issue #29, items 7-14): each is one line and exit 2 now."""

from __future__ import annotations

import pytest
from cli_helpers import error_lines, run_main


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
