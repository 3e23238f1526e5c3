"""``sniff serve``'s accessibility in a real browser: axe-core 4.x (vendored, its version
asserted) finds no violation of the WCAG 2.0, 2.1 and 2.2 A and AA rules in any state of
the page at 1280x900 and at 390x844, and a whole game is played by keyboard only."""

from __future__ import annotations

import json

import pytest

from tests.helpers.serve_browser import missing

if missing:
    pytest.skip("chromium or chromedriver is not installed", allow_module_level=True)

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

from tests.helpers import serve_browser as helpers  # noqa: E402
from tests.helpers.serve_browser import (  # noqa: E402
    AXE,
    AXE_VERSION,
    PATIENCE,
    SIZES,
    answered,
    axe_violations,
    chromium,
    fresh,
    phase,
    play_to,
    start,
    version,
    wait,
)

base_url, browser = helpers.base_url, helpers.browser  # the fixtures

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")


def test_the_vendored_axe_core_is_4x():
    head = AXE.read_text()[:200]
    assert head.startswith(f"/*! axe v{AXE_VERSION}") and AXE_VERSION.startswith("4.")
    assert (AXE.parent / "LICENSE").read_text().startswith("Mozilla Public License")


def states(page, base_url: str, trace) -> dict[str, list[str]]:
    """Each state of the page in turn, and what axe-core finds in it."""
    found = {}
    fresh(page, base_url)
    found["start"] = axe_violations(page)
    start(page, base_url, target="40", seed="3", instant=False)
    play_to(page, "move")
    found["mid-game"] = axe_violations(page)
    page.execute_script("HOLD_MS.play = HOLD_MS.draw = HOLD_MS.pass = 60000")
    before = version(page)
    page.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
    for choice in page.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")[:1]:
        choice.click()
    wait(page, lambda b: b.execute_script(
        "const d = window.sniffDrawn; return d.length && !d[d.length - 1].live"))
    found["bot move"] = axe_violations(page)
    page.execute_script("document.getElementById('instant').click()")  # the rest at once
    wait(page, lambda b: answered(b, before))
    play_to(page, "move")
    page.find_element(By.ID, "budget").clear()
    page.find_element(By.ID, "budget").send_keys("20")
    page.find_element(By.ID, "hint").click()
    wait(page, lambda b: b.find_elements(By.CSS_SELECTOR, "#hint-table tr.best"))
    found["hint"] = axe_violations(page)
    play_to(page, "settled")
    if phase(page) == "settled":
        found["settlement"] = axe_violations(page)
    play_to(page, "over")
    found["result"] = axe_violations(page)
    page.find_element(By.ID, "analyse").click()
    wait(page, lambda b: b.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr"))
    page.find_element(By.ID, "moves-prev").click()
    wait(page, lambda b: phase(b) == "review")
    found["review"] = axe_violations(page)
    page.find_element(By.ID, "nav-replay").click()
    page.find_element(By.ID, "replay-file").send_keys(str(trace))
    wait(page, lambda b: b.find_element(By.ID, "replay-controls").is_displayed())
    for _ in range(6):
        page.find_element(By.ID, "replay-next").click()
    found["replay"] = axe_violations(page)
    page.find_element(By.ID, "replay-setup").click()
    wait(page, lambda b: "ready" in b.find_element(By.ID, "p-problem").text)
    page.find_element(By.ID, "p-budget").clear()
    page.find_element(By.ID, "p-budget").send_keys("20")
    page.find_element(By.ID, "p-hint").click()
    wait(page, lambda b: b.find_elements(By.CSS_SELECTOR, "#p-hints #hint-table"))
    found["set-up"] = axe_violations(page)
    return found


@pytest.mark.parametrize("size", list(SIZES))
def test_axe_finds_no_violation_in_any_state(base_url, size, tmp_path):
    from sim.kernels.trace import trace_games

    trace = tmp_path / "game.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in trace_games(2, 8, ["greedy"] * 2, 1)))
    page = chromium(SIZES[size])
    try:
        found = states(page, base_url, trace)
    finally:
        page.quit()
    assert {"start", "mid-game", "bot move", "hint", "result", "review", "replay",
            "set-up"} <= set(found)
    assert not {state: v for state, v in found.items() if v}, found


def press(browser, key: str) -> None:
    """A key pressed on the keyboard: it goes to whatever has the focus."""
    ActionChains(browser).send_keys(key).perform()


# The focused control's label if it matches the selector given, else null.
FOCUSED = """const a = document.activeElement;
return a && a.matches(arguments[0]) ? (a.getAttribute('aria-label') || a.textContent) : null"""


def tab_to(browser, selector: str, limit: int = 120) -> str:
    """Tab until a control matching ``selector`` has the focus; its label."""
    for _ in range(limit):
        label = browser.execute_script(FOCUSED, selector)
        if label is not None:
            return label
        press(browser, Keys.TAB)
    raise AssertionError(f"Tab never reached {selector}")


def test_a_whole_game_by_keyboard_only(base_url, browser):
    """From the start page to the result: the game chosen, dealt and played with Tab,
    Enter, Space and typing only (a lit tile, an end, Next round), then Play again."""
    fresh(browser, base_url)
    tab_to(browser, "#new-game summary")
    press(browser, Keys.ENTER)
    tab_to(browser, "#opponents")
    press(browser, "greedy")
    tab_to(browser, "#target")
    press(browser, Keys.BACKSPACE * 4 + "40")
    tab_to(browser, "#seed")
    press(browser, "3")
    tab_to(browser, "#start")
    press(browser, Keys.ENTER)
    wait(browser, lambda b: answered(b, -1))
    assert browser.execute_script("return [game.view.target, game.view.seed]") == [40, 3]
    tab_to(browser, "#instant")
    press(browser, Keys.SPACE)
    assert browser.find_element(By.ID, "instant").is_selected()
    presses = 0
    while phase(browser) != "over":
        presses += 1
        assert presses < 3000, "the game did not end"
        before = version(browser)
        wanted = "#next" if phase(browser) == "settled" else "#prompt button.end-choice, " \
            "#hand button.legal"
        label = tab_to(browser, wanted)
        assert label.strip(), "a focused control without a label"
        press(browser, Keys.ENTER)
        if browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice"):
            continue  # the tile fits two ends: the end buttons now have the focus
        wait(browser, lambda b, before=before: answered(b, before), PATIENCE)
    assert browser.find_element(By.ID, "banner").is_displayed()
    assert browser.find_element(By.ID, "settlement").find_elements(By.CSS_SELECTOR, "tbody tr")
    assert browser.find_element(By.ID, "status").get_attribute("aria-live") == "polite"
    session = browser.execute_script("return game.view.session")
    tab_to(browser, "#again")
    press(browser, Keys.ENTER)
    wait(browser, lambda b: b.execute_script("return game.view && game.view.session") != session
         and answered(b, -1))
