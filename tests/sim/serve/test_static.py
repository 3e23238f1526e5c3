"""``sniff serve`` in a real browser (headless Chromium through Selenium): one moment drawn
at a time (every event of a click, in turn, the seat to move marked), a game at a phone's
390x844 with the board turning its corners, the end chosen on the board, recovery after a
409 and after a move made elsewhere, and the modes kept apart with the back button.

Review, analysis, set-up and first contact are in ``test_review.py``; the
accessibility checks and the keyboard-only game in ``test_static_a11y.py``.
"""

from __future__ import annotations

import statistics
import time

import pytest

from tests.helpers.serve_browser import missing

if missing:
    pytest.skip("chromium or chromedriver is not installed", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402

from tests.helpers import serve_browser as helpers  # noqa: E402
from tests.helpers.serve_browser import (  # noqa: E402
    PATIENCE,
    TILES,
    WIDE,
    act,
    answered,
    api,
    phase,
    start,
    version,
    wait,
)

base_url, browser, phone = helpers.base_url, helpers.browser, helpers.phone  # the fixtures
# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")

# What the page drew for each moment since the click, and the frames the answer brought.
DRAWN = "return window.sniffDrawn.slice(arguments[0])"
FRAMES = """return game.view.recent.map((f) => ({index: f.index, kind: f.kind, seat: f.seat,
  text: f.line.text, size: f.sizes[game.view.seat], tiles: f.board.opening ?
  1 + Object.values(f.board.arms).reduce((n, a) => n + a.length, 0) : 0}))"""


def test_every_event_of_one_click_is_drawn_in_turn(base_url, browser):
    """The issue's repro: 4 players, seat 1, seed 33, open with 4-6. One click runs 18
    events; each is drawn whole, in order, with the bot's seat marked as thinking just
    before its move, your hand and the status line matching the board at every moment."""
    start(browser, base_url, seed="33", instant=False, players="4", seat="1",
          opponents="learned")
    browser.execute_script("window.sniffTurns = []")
    drawn_before = browser.execute_script("return window.sniffDrawn.length")
    before = version(browser)
    browser.find_element(By.CSS_SELECTOR, '#hand button[data-tile="4-6"], '
                                          '#hand button[data-tile="6-4"]').click()
    wait(browser, lambda b: answered(b, before))
    frames = browser.execute_script(FRAMES)
    drawn = browser.execute_script(DRAWN, drawn_before)
    assert len(frames) >= 18
    moments = [d for d in drawn if not d["live"] and not d["thinking"]]
    assert [d["index"] for d in moments] == [f["index"] for f in frames]
    for moment, frame in zip(moments, frames):
        assert moment["status"] == frame["text"]
        assert moment["hand"] == moment["me"] == frame["size"], (moment, frame)
        assert f"{frame['size']} tile" in moment["meText"]
        assert moment["tiles"] == frame["tiles"], (moment, frame)
    thinking = [d for d in drawn if d["thinking"]]
    bots = [f for f in frames[1:] if f["kind"] in ("play", "draw", "pass") and f["seat"] != 1]
    assert [d["turn"] for d in thinking] == [f["seat"] for f in bots]
    assert all(d["status"] == f"seat {d['turn']} is thinking…" for d in thinking)
    turns = browser.execute_script("return window.sniffTurns")
    assert len(turns) == len(bots) and statistics.median(turns) <= 100, turns
    log = browser.find_element(By.ID, "log").text
    assert "you open 4-6" in log or "you open 6-4" in log


def test_a_game_at_phone_size_fits_the_screen(base_url, phone):
    """Every decision at 390x844: no sideways scroll, every tile on the board at least 40 px
    long and none overlapping, the status and your hand (or the result) in view; a hint row
    plays its move; the result comes with Play again, which deals a new game."""
    start(phone, base_url, target="60", seed="5", instant=False)
    width = phone.execute_script("return document.documentElement.clientWidth")
    assert width <= 400
    clicks, hinted = 0, False
    in_view = """const r = document.getElementById(arguments[0]).getBoundingClientRect();
      return r.top >= 0 && r.bottom <= innerHeight + 1 && r.height > 0"""
    while phase(phone) != "over":
        clicks += 1
        assert clicks < 300, "the game did not end"
        tiles = phone.execute_script(TILES)
        assert tiles["scroll"] <= tiles["width"], phone.execute_script(WIDE)
        assert tiles["count"] == 0 or tiles["shortest"] >= 40, tiles
        assert tiles["overlaps"] == 0 and tiles["outside"] == 0, tiles
        assert phone.execute_script(in_view, "status")
        assert phone.execute_script(in_view, "next" if phase(phone) == "settled" else "hand")
        if phase(phone) == "move" and not hinted:  # a hint row, clicked, plays its move
            before = version(phone)
            phone.find_element(By.ID, "budget").clear()
            phone.find_element(By.ID, "budget").send_keys("20")
            phone.find_element(By.ID, "hint").click()
            row = wait(phone, seen.element_to_be_clickable((By.CSS_SELECTOR,
                                                            "#hint-table tr.best")))
            assert "loss vs best" in phone.find_element(By.CSS_SELECTOR, "#hints .legend").text
            row.click()
            wait(phone, lambda b, before=before: answered(b, before))
            hinted = True
            continue
        act(phone)
    turns = phone.execute_script("return window.sniffTurns")
    assert turns and statistics.median(turns) <= 100, turns
    assert phone.execute_script(in_view, "banner") and phone.execute_script(in_view, "again")
    session = phone.execute_script("return game.view.session")
    phone.find_element(By.ID, "again").click()
    wait(phone, lambda b: b.execute_script("return game.view && game.view.session") != session
         and answered(b, -1))
    assert phase(phone) in ("move", "settled")


@pytest.mark.parametrize("driver", ["browser", "phone"])
def test_a_long_line_turns_its_corners(base_url, driver, request):
    """A 26-tile line of a real game, the Sniff's branches open: every tile at least 40 px
    long, inside the board, none overlapping, and the page does not scroll sideways."""
    from sim.kernels.trace import trace_games
    from sim.serve.frames import board_of
    from sim.table.render import ReplayState

    state, longest = ReplayState(), None
    for event in trace_games(2, 11, ["greedy", "greedy"], 40):
        state.apply(event)
        if event["event"] == "play":
            size = len(state.arms["L"]) + len(state.arms["R"]) + 1
            if longest is None or size > longest[0]:
                longest = (size, board_of(state))
    assert longest[0] >= 20
    page = request.getfixturevalue(driver)
    start(page, base_url, seed="2")
    page.execute_script("drawBoard(document.getElementById('board'), arguments[0], [], 0)",
                        longest[1])
    tiles = page.execute_script(TILES)
    assert tiles["count"] == longest[0] + sum(len(longest[1]["arms"][a]) for a in "UD")
    assert tiles["shortest"] >= 40 and tiles["overlaps"] == 0 and tiles["outside"] == 0, tiles
    assert tiles["scroll"] <= tiles["width"], page.execute_script(WIDE)
    labels = page.find_element(By.ID, "board").text
    assert "L=" in labels and "R=" in labels


def test_the_end_is_chosen_by_clicking_it_on_the_board(base_url, browser):
    """A tile that fits two ends lights those ends on the board; a click on one plays it
    there."""
    start(browser, base_url, seed="21")
    two = """const seen = {}; for (const o of game.view.options) (seen[o.tile] ||= []).push(o);
      return Object.values(seen).find((o) => o.length > 1) || null"""
    for _ in range(300):
        options = browser.execute_script(two) if phase(browser) == "move" else None
        if options:
            break
        act(browser)
    else:
        pytest.fail("no tile fitting two ends came up")
    browser.find_element(By.CSS_SELECTOR, f'#hand button[data-tile="{options[0]["tile"]}"]').click()
    targets = browser.find_elements(By.CSS_SELECTOR, "#board g.slot.target")
    assert {t.get_attribute("data-end") for t in targets} == {o["end"] for o in options}
    before = version(browser)
    chosen = options[-1]
    browser.find_element(By.CSS_SELECTOR, f'#board g.slot.target[data-end="{chosen["end"]}"]'
                         ).click()
    wait(browser, lambda b: answered(b, before))
    session = browser.execute_script("return game.view.session")
    history = api(browser, "GET", f"/api/games/{session}/history")
    lines = [frame["line"]["text"] for frame in history["frames"]]
    mine = [line for line in lines if line.startswith("you play")]
    assert mine[-1].startswith(f"you play {chosen['tile']} on {chosen['end']}"), mine[-1]


def test_the_page_catches_up_after_a_409_and_a_move_made_elsewhere(base_url, browser):
    """The same game played from elsewhere: a click in this page gets a 409, and the page
    fetches the current turn itself (the next click plays); a move made elsewhere while the
    page waits is drawn within seconds, without a click."""
    start(browser, base_url, seed="9")
    for _ in range(5):
        if phase(browser) == "move":
            break
        act(browser)
    session = browser.execute_script("return game.view.session")
    view = api(browser, "GET", f"/api/games/{session}")
    moved = api(browser, "POST", f"/api/games/{session}/move",
                {"move": view["options"][0]["move"], "version": view["version"]})
    stale = version(browser)
    browser.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
    for choice in browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")[:1]:
        choice.click()
    wait(browser, lambda b: version(b) == moved["version"] and not b.execute_script(
        "return game.busy"))
    assert stale < moved["version"]
    assert "earlier turn" in browser.find_element(By.ID, "error").text
    assert browser.execute_script("return game.view.events") == moved["events"]
    if moved["phase"] != "over":
        act(browser)  # the next click is played: no 409 loop
        assert browser.find_element(By.ID, "error").text == ""
    view = api(browser, "GET", f"/api/games/{session}")
    if view["phase"] == "move":
        elsewhere = api(browser, "POST", f"/api/games/{session}/move",
                        {"move": view["options"][0]["move"], "version": view["version"]})
        wait(browser, lambda b: version(b) == elsewhere["version"], 15)


def test_modes_are_kept_apart_and_the_back_button_works(base_url, browser, tmp_path):
    import json

    from sim.kernels.trace import trace_games

    start(browser, base_url, seed="7")
    hand = browser.find_element(By.ID, "hand").get_attribute("innerHTML")
    events = trace_games(2, 8, ["greedy", "learned"], 1)
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    browser.find_element(By.ID, "nav-replay").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait(browser, lambda b: b.find_element(By.ID, "replay-controls").is_displayed())
    where = browser.find_element(By.ID, "replay-where")
    assert where.text.startswith(f"event 1 of {len(events)}")
    browser.find_element(By.ID, "replay-step").send_keys(Keys.ARROW_RIGHT)
    for _ in range(3):
        browser.find_element(By.ID, "replay-next").click()
    assert where.text.startswith("event 5 of") or where.text.startswith("event 4 of")
    shown = browser.execute_script(TILES, "replay-board")["count"]
    assert shown == sum(1 for e in events[:int(where.text.split()[1])] if e["event"] == "play")
    browser.back()  # to the game: its hand untouched by the replay
    wait(browser, lambda b: b.find_element(By.ID, "mode-game").is_displayed())
    assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") == hand
    assert not browser.find_element(By.ID, "mode-replay").is_displayed()
    browser.forward()  # and the replay is where it was
    wait(browser, lambda b: b.find_element(By.ID, "mode-replay").is_displayed())
    assert where.text.startswith("event 4 of") or where.text.startswith("event 5 of")
    browser.find_element(By.ID, "replay-setup").click()  # its position on the set-up board
    wait(browser, lambda b: b.find_element(By.ID, "mode-setup").is_displayed())
    wait(browser, lambda b: "ready" in b.find_element(By.ID, "p-problem").text, PATIENCE)
    browser.back()
    wait(browser, lambda b: b.find_element(By.ID, "mode-replay").is_displayed())
    time.sleep(0.1)
