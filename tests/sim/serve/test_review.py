"""``sniff serve`` in a real browser, after and around the game: review draws the whole
table of the event shown, the analysis (rows and chart) jumps the board to a decision, Play
again, takeback and the move list by keys, the set-up form (every field writes the
position, a bad one is named), and first contact (a start page with the rules, no move
controls before a game, a favicon, the budget's range, progress for a slow request)."""

from __future__ import annotations

import pytest

from tests.helpers.serve_browser import missing

if missing:
    pytest.skip("chromium or chromedriver is not installed", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402

from tests.helpers import serve_browser as helpers  # noqa: E402
from tests.helpers.serve_browser import (  # noqa: E402
    act,
    answered,
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

LAST_DRAWN = "return window.sniffDrawn[window.sniffDrawn.length - 1]"
FRAME = """const f = game.history[arguments[0]];
return {kind: f.kind, hand: f.hand.length, count: f.count, scores: f.scores, sizes: f.sizes,
  boneyard: f.boneyard, turn: f.turn, settled: Boolean(f.settlement), line: f.line.text,
  rows: game.history.slice(0, arguments[0] + 1).filter((g) => g.sheet_row).length,
  tiles: f.board.opening ? 1 + Object.values(f.board.arms).reduce((n, a) => n + a.length, 0) : 0}"""


def test_review_draws_the_whole_table_of_the_event_shown(base_url, browser):
    """Clicking a move in the list shows that moment whole: board, count, scores, tile
    counts, boneyard, your hand, the score sheet so far, a settlement only at one; Back to
    the game returns to now."""
    start(browser, base_url, seed="13")
    play_to(browser, "settled")
    act(browser)  # the next round
    for _ in range(2):
        if phase(browser) == "move":
            act(browser)
    browser.find_element(By.ID, "moves-load").click()
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#moves li"))
    total = browser.execute_script("return game.history.length")
    settled_at = browser.execute_script(
        "return game.history.findIndex((f) => f.kind === 'round_end')")
    for index in sorted({2, 5, settled_at - 1, settled_at, settled_at + 2, total - 2}):
        browser.find_element(By.CSS_SELECTOR, f'#moves li[data-index="{index}"]').click()
        wait(browser, lambda b, index=index: b.execute_script(LAST_DRAWN)["index"] == index)
        drawn, frame = browser.execute_script(LAST_DRAWN), browser.execute_script(FRAME, index)
        assert drawn["review"] and phase(browser) == "review"
        assert drawn["tiles"] == frame["tiles"] and drawn["hand"] == frame["hand"], (drawn, frame)
        assert drawn["status"].startswith(f"reviewing event {index + 1} of {total}")
        ends = browser.find_element(By.ID, "ends").text
        assert all(f" {score}" in ends for score in frame["scores"]), (ends, frame)
        if frame["tiles"]:
            assert f"count {frame['count']}" in ends
        seats = browser.find_element(By.ID, "seats").text
        assert f"boneyard {frame['boneyard']}" in seats
        assert f"{frame['sizes'][1]} tile" in seats
        rows = browser.find_elements(By.CSS_SELECTOR, "#sheet tbody tr")
        assert len(rows) == frame["rows"], (index, frame)
        assert bool(browser.find_element(By.ID, "settlement").text) == frame["settled"]
        assert not browser.find_element(By.ID, "actions").is_displayed()
    browser.find_element(By.ID, "dock-live").click()
    assert phase(browser) in ("move", "settled")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#sheet tbody tr")) == 1


def test_a_finished_game_is_analysed_charted_and_played_again(base_url, browser):
    start(browser, base_url, target="40", seed="2")
    play_to(browser, "over")
    assert browser.find_element(By.ID, "banner").is_displayed()
    assert browser.find_element(By.ID, "again").is_displayed()
    # a slow analysis (the first on a machine compiles its search) shows it works: the
    # button waits and the progress line counts the seconds
    browser.execute_script("""window.realFetch = window.fetch;  // every answer 2.5 s late
      window.fetch = (...a) => new Promise((r) => setTimeout(r, 2500))
        .then(() => realFetch(...a));""")
    button = browser.find_element(By.ID, "analyse")
    button.click()
    progress = browser.find_element(By.ID, "progress")
    wait(browser, lambda b: progress.is_displayed() and " 1 s" in progress.text, 5)
    assert "as sniff analyze does" in progress.text and not button.is_enabled()
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr"))
    browser.execute_script("window.fetch = window.realFetch")
    wait(browser, lambda b: button.is_enabled() and not progress.is_displayed(), 10)
    caption = browser.find_element(By.ID, "analysis-source").text
    assert "sniff analyze serve-seed2.jsonl --strategy human --budget 100" in caption
    chart = browser.find_element(By.ID, "win-chart")
    assert len(chart.find_elements(By.CSS_SELECTOR, "polyline")) == 2
    assert "chance to win" in chart.get_attribute("aria-label")
    decisions = browser.execute_script(
        "return [...document.querySelectorAll('#analysis-table tbody tr')].map((r) =>"
        " Number(r.dataset.event))")
    marks = chart.find_elements(By.CSS_SELECTOR, "g.mark")
    costly = browser.find_elements(By.CSS_SELECTOR, "#analysis-table tr.costly")
    assert len(marks) == len(costly)
    row = browser.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr")[-1]
    row.click()
    event = decisions[-1]
    wait(browser, lambda b: b.execute_script(LAST_DRAWN)["index"] == event - 1)
    assert browser.find_element(By.ID, "status").text.startswith(f"reviewing event {event}")
    assert "you played" in browser.find_element(By.ID, "status").text
    if marks:
        marks[0].click()
        wait(browser, lambda b: "you played" in b.find_element(By.ID, "status").text)
    # the game's accuracy as sniff analyze counts it, and each graded move a button that
    # shows the table at that decision
    accuracy = browser.find_element(By.ID, "accuracy").text
    assert accuracy.startswith("Accuracy ") and "inaccurac" in accuracy and "blunder" in accuracy
    costly = browser.find_elements(By.CSS_SELECTOR, "#mistakes button")
    assert len(costly) == browser.execute_script(
        "return [...document.querySelectorAll('#analysis-table tbody tr')].length") - round(
        int(accuracy.split()[1].rstrip("%")) / 100 * len(decisions))
    if costly:
        event = int(costly[-1].get_attribute("data-event"))
        costly[-1].send_keys(Keys.ENTER)
        wait(browser, lambda b: b.execute_script(LAST_DRAWN)["index"] == event - 1)
        assert browser.find_element(By.ID, "status").text.startswith(f"reviewing event {event}")
    browser.find_element(By.ID, "dock-live").click()
    session = browser.execute_script("return game.view.session")
    browser.find_element(By.ID, "again").click()
    wait(browser, lambda b: b.execute_script("return game.view && game.view.session") != session
         and answered(b, -1))
    assert browser.execute_script("return [game.view.players, game.view.target]") == [2, 40]


def test_takeback_the_move_list_by_keys_and_set_up_from_the_first_event(base_url, browser):
    """A move taken back returns the hand; the arrow keys step the move list and End
    returns; Set up this position works from any event, the first included."""
    start(browser, base_url, seed="13")
    play_to(browser, "move")
    hand = browser.find_element(By.ID, "hand").get_attribute("innerHTML")
    act(browser)
    if phase(browser) == "move":
        assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") != hand
        before = version(browser)
        browser.find_element(By.ID, "takeback").click()
        wait(browser, lambda b: answered(b, before))
        assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") == hand
    moves = browser.find_element(By.ID, "moves")
    moves.send_keys(Keys.ARROW_LEFT)
    wait(browser, lambda b: phase(b) == "review")
    moves.send_keys(Keys.ARROW_LEFT)
    assert "reviewing event" in browser.find_element(By.ID, "status").text
    assert browser.find_elements(By.CSS_SELECTOR, "#moves li.current")
    moves.send_keys(Keys.END)
    wait(browser, lambda b: phase(b) in ("move", "settled"))
    browser.find_element(By.ID, "moves-first").click()
    wait(browser, lambda b: b.execute_script(LAST_DRAWN)["index"] == 0)
    browser.find_element(By.ID, "to-setup").click()
    wait(browser, lambda b: b.find_element(By.ID, "mode-setup").is_displayed())
    wait(browser, lambda b: "ready" in b.find_element(By.ID, "p-problem").text)
    assert browser.find_element(By.ID, "error").text == ""


def test_every_set_up_field_writes_the_position_and_a_bad_one_is_named(base_url, browser):
    fresh(browser, base_url, "#/setup")
    text = browser.find_element(By.ID, "p-text")
    wait(browser, lambda b: "sniff position" in text.get_attribute("value"))
    edits = (("p-players", "3", "players: 3"), ("p-seat", "1", "seat: 1"),
             ("p-leader", "2", "leader: 2"), ("p-round", "2", "round: 2"),
             ("p-target", "200", "target: 200"), ("p-scores", "10 20 30", "scores: 10 20 30"),
             ("p-sizes", "6 6 6", "sizes: 6 6 6"), ("p-boneyard", "10", "boneyard: 10"))
    for field, value, line in edits:
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value, Keys.TAB)
        wait(browser, lambda b, line=line: line in text.get_attribute("value"), 20)
    palette = browser.find_element(By.ID, "palette")
    palette.find_element(By.CSS_SELECTOR, 'button[data-tile="4-4"]').click()  # into the hand
    wait(browser, lambda b: "hand: 4-4" in text.get_attribute("value"), 20)
    browser.find_element(By.CSS_SELECTOR, "input[name=p-mode][value=table]").click()
    palette.find_element(By.CSS_SELECTOR, 'button[data-tile="2-2"]').click()  # opens the table
    wait(browser, lambda b: "table: 2-2" in text.get_attribute("value"), 20)
    assert browser.find_elements(By.CSS_SELECTOR, "#setup-board g.tile.sniff")
    position = ("players: 2\nseat: 0\nleader: 0\nscores: 10 20\n"
                "hand: 3-4 5-5 0-0 1-1 6-6 0-5\ntable: 2-2, 2-5 R\nsizes: 6 6\nboneyard: 14\n")
    text.clear()
    text.send_keys(position)
    browser.find_element(By.ID, "p-read").click()
    problem = browser.find_element(By.ID, "p-problem")
    wait(browser, lambda b: "ready" in problem.text)

    def edit(field: str, value: str):
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value, Keys.TAB)
        return box

    box = edit("p-boneyard", "13")  # 27 tiles: the hand sizes or the boneyard is wrong
    wait(browser, lambda b: problem.text.startswith("hand sizes, boneyard:"), 20)
    assert box.get_attribute("aria-invalid") == "true"
    assert browser.find_element(By.ID, "p-sizes").get_attribute("aria-invalid") == "true"
    box = edit("p-scores", "10 x")
    wait(browser, lambda b: problem.text.startswith("scores"), 20)
    assert box.get_attribute("aria-invalid") == "true"
    edit("p-boneyard", "14")
    box = browser.find_element(By.ID, "p-scores")
    box.clear()
    box.send_keys("0 20")  # no Tab: the hint still reads the text with this edit in it
    browser.find_element(By.ID, "p-budget").clear()
    browser.find_element(By.ID, "p-budget").send_keys("30")
    browser.find_element(By.ID, "p-hint").click()
    wait(browser, seen.presence_of_element_located((By.CSS_SELECTOR, "#hint-table tr.best")))
    assert "scores: 0 20" in text.get_attribute("value")
    assert box.get_attribute("aria-invalid") is None
    assert "5-5 on R" in browser.find_element(By.ID, "hint-table").text


def test_first_contact(base_url, browser):
    """A start page that says what the game is and links the rules, no move controls
    before a game, a favicon, one click to a game, the budget's range as the server's, and
    progress shown for a request over a second."""
    fresh(browser, base_url)
    intro = browser.find_element(By.ID, "intro")
    assert intro.is_displayed() and "multiple of 5" in intro.text
    for hidden in ("hand", "actions", "board", "hint", "takeback"):
        assert not browser.find_element(By.ID, hidden).is_displayed(), hidden
    icon = browser.execute_script("return fetch(document.querySelector('link[rel=icon]').href)"
                                  ".then((r) => [r.status, r.headers.get('content-type')])")
    assert icon == [200, "image/svg+xml"]
    assert browser.execute_script("return fetch('/favicon.ico').then((r) => r.status)") == 200
    rules = browser.find_element(By.CSS_SELECTOR, "#intro a[href$='rules.html']")
    rules.click()
    wait(browser, lambda b: "Sniff" in b.find_element(By.TAG_NAME, "h2").text)
    assert "multiple of 5" in browser.find_element(By.TAG_NAME, "main").text
    fresh(browser, base_url)
    browser.execute_script("document.getElementById('opponents').value = 'greedy'")
    browser.find_element(By.ID, "quick").click()
    wait(browser, lambda b: answered(b, -1))
    assert not browser.find_element(By.ID, "intro").is_displayed()
    play_to(browser, "move")
    budget = browser.find_element(By.ID, "budget")
    budget.clear()
    budget.send_keys("0")
    browser.find_element(By.ID, "hint").click()
    wait(browser, lambda b: "2..5,000" in b.find_element(By.ID, "error").text, 20)
    budget.clear()
    budget.send_keys("20")
    browser.execute_script("""const real = window.fetch;  // every answer 2.5 s late
      window.fetch = (...a) => new Promise((r) => setTimeout(r, 2500)).then(() => real(...a));""")
    browser.find_element(By.ID, "hint").click()
    progress = browser.find_element(By.ID, "progress")
    wait(browser, lambda b: progress.is_displayed() and " 1 s" in progress.text, 5)
    assert "searching 20 play-outs" in progress.text
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#hint-table"), 30)
    wait(browser, lambda b: not progress.is_displayed(), 5)
