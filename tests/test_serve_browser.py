"""``sniff serve`` in a real browser: a game played by keyboard only, a game at a phone's
390x844 by touch-size clicks (bots' moves shown one after another), a hint row that plays
its move, the modes kept apart with the back button, a replay, a position set up, and an
automated accessibility check (axe-core, bundled by axe-selenium-python: no network).

Selenium drives Debian's headless Chromium against uvicorn on a free port in a thread.
``.ci/run`` installs Chromium and its driver; the module skips, in one line, only where
they are missing.
"""

from __future__ import annotations

import shutil
import socket
import statistics
import threading
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed (sniff[serve])")

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from sim.serve.app import create_app  # noqa: E402
from sim.serve.guard import Guard, allowed_hosts  # noqa: E402

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
# Seconds a step may take: a wait ends as soon as its condition holds, but the first game
# and the first hint compile their kernels where the cache is cold.
PATIENCE = 120
if not (CHROMIUM and DRIVER):
    pytest.skip("chromium or chromedriver is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def base_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(guard=Guard(allowed_hosts("127.0.0.1", port)))
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def chromium(size: str, phone: bool = False):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={size}"):
        options.add_argument(argument)
    if phone:  # a headless window has a minimum width; the phone's viewport is emulated
        width, height = map(int, size.split(","))
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {
            "width": width, "height": height, "pixelRatio": 3.0, "touch": True}})
    from selenium.webdriver.chrome.service import Service

    return webdriver.Chrome(service=Service(DRIVER), options=options)


@pytest.fixture(scope="module")
def browser():
    driver = chromium("1280,900")
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def phone():
    driver = chromium("390,844", phone=True)
    yield driver
    driver.quit()


WIDE = """return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect()
  .right > document.documentElement.clientWidth + 1).slice(0, 5).map(e => e.tagName + '#' + e.id
  + '.' + e.className.baseVal + e.className + ' ' + Math.round(e.getBoundingClientRect().right))"""


def phase(browser) -> str:
    return browser.find_element(By.ID, "status").get_attribute("data-phase") or ""


def version(browser) -> int:
    return browser.execute_script("return game.view ? game.view.version : -1")


# The focused control's label if it matches the selector given, else null.
FOCUSED = """const a = document.activeElement;
return a && a.matches(arguments[0]) ? (a.getAttribute('aria-label') || a.textContent) : null"""


def press(browser, key: str) -> None:
    """A key pressed on the keyboard: it goes to whatever has the focus."""
    ActionChains(browser).send_keys(key).perform()


def answered(browser, before: int) -> bool:
    """The answer to the decision of version ``before`` is drawn (the hand unlocked)."""
    return browser.execute_script(
        "return game.view !== null && game.view.version > arguments[0] && !game.busy", before)


def start(browser, base_url: str, target: str, seed: str, instant: bool) -> None:
    browser.get(base_url + "/static/style.css")  # this origin, no script: forget the last game
    browser.execute_script("sessionStorage.clear()")
    browser.get(base_url + "/#/game")
    wait = WebDriverWait(browser, PATIENCE)
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#opponents option")) > 1)
    if not browser.find_element(By.ID, "new-game").get_attribute("open"):
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
    Select(browser.find_element(By.ID, "players")).select_by_visible_text("2")
    Select(browser.find_element(By.ID, "opponents")).select_by_visible_text("greedy")
    for field, value in (("target", target), ("seed", seed)):
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    if browser.find_element(By.ID, "instant").is_selected() != instant:
        browser.execute_script("document.getElementById('instant').click()")
    browser.find_element(By.ID, "seed").send_keys(Keys.ENTER)  # submits the form
    wait.until(lambda b: phase(b) in ("move", "settled", "over") and answered(b, -1))


def test_a_game_played_by_keyboard_only(base_url, browser):
    """Tab to a lit tile (or an end, or Next round) and press Enter, to the end."""
    start(browser, base_url, "40", "3", instant=True)
    wait = WebDriverWait(browser, PATIENCE)
    presses = 0
    while phase(browser) != "over":
        presses += 1
        assert presses < 3000, "the game did not end"
        before = version(browser)
        wanted = ("#next" if phase(browser) == "settled"
                  else "#prompt button.end-choice, #hand button.legal")
        for _ in range(80):  # Tab until a control that answers this decision has the focus
            label = browser.execute_script(FOCUSED, wanted)
            if label is not None:
                break
            press(browser, Keys.TAB)
        else:
            raise AssertionError(f"Tab never reached {wanted}")
        assert label.strip(), "a focused control without a label"
        press(browser, Keys.ENTER)
        if browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice"):
            continue  # the tile fits two ends: the end buttons now have the focus
        wait.until(lambda b, before=before: answered(b, before))
    assert browser.find_element(By.ID, "banner").is_displayed()
    assert browser.find_element(By.ID, "settlement").find_elements(By.CSS_SELECTOR, "tbody tr")
    assert browser.find_element(By.ID, "status").get_attribute("aria-live") == "polite"


def test_a_game_at_phone_size_with_bots_moves_shown_in_turn(base_url, phone):
    start(phone, base_url, "40", "5", instant=False)
    wait = WebDriverWait(phone, PATIENCE)
    width = phone.execute_script("return document.documentElement.clientWidth")
    assert width <= 400
    clicks, hinted = 0, False
    while phase(phone) != "over":
        clicks += 1
        assert clicks < 300, "the game did not end"
        assert phone.execute_script("return document.documentElement.scrollWidth") <= width, \
            phone.execute_script(WIDE)
        before = version(phone)
        if phase(phone) == "settled":
            phone.find_element(By.ID, "next").click()
        elif not hinted:  # a hint row, clicked, plays its move
            phone.find_element(By.ID, "budget").clear()
            phone.find_element(By.ID, "budget").send_keys("20")
            phone.find_element(By.ID, "hint").click()
            row = wait.until(seen.element_to_be_clickable((By.CSS_SELECTOR, "#hint-table tr.best")))
            legend = phone.find_element(By.CSS_SELECTOR, "#hints .legend").text
            caption = phone.find_element(By.CSS_SELECTOR, "#hint-table caption").text
            assert "loss vs best" in legend and ("★" in caption or "not separated" in caption)
            row.click()
            hinted = True
        else:
            tile = phone.find_element(By.CSS_SELECTOR, "#hand button.legal")
            box = tile.rect
            assert box["width"] >= 24 and box["height"] >= 48, f"a hand tile of {box}"
            tile.click()
            choices = phone.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")
            if choices:
                choices[0].click()
        wait.until(lambda b, before=before: answered(b, before))
    timings = phone.execute_script("return window.sniffTimings")
    assert len(timings) >= 5
    # Under the shared load of a test run the bound is loose; docs/serve.md has the figures.
    assert statistics.median(timings) < 1000, timings
    assert phone.find_element(By.ID, "banner").is_displayed()
    assert phone.find_elements(By.CSS_SELECTOR, "#board g.tile.recent") or \
        phone.find_elements(By.CSS_SELECTOR, "#board g.tile")
    for route, ready in (("#/setup", "#palette button"), ("#/replay", "#replay-file")):
        phone.execute_script(f"location.hash = '{route}'")
        WebDriverWait(phone, PATIENCE).until(
            lambda b, ready=ready: b.find_element(By.CSS_SELECTOR, ready).is_displayed())
        assert phone.execute_script("return document.documentElement.scrollWidth") <= width, \
            (route, phone.execute_script(WIDE))


def test_modes_are_kept_apart_and_the_back_button_works(base_url, browser, tmp_path):
    import json

    from sim.kernels.trace import trace_games

    start(browser, base_url, "250", "7", instant=True)
    hand = browser.find_element(By.ID, "hand").get_attribute("innerHTML")
    events = trace_games(2, 8, ["greedy", "learned"], 1)
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    wait = WebDriverWait(browser, PATIENCE)
    browser.find_element(By.ID, "nav-replay").click()
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait.until(lambda b: b.find_element(By.ID, "replay-controls").is_displayed())
    where = browser.find_element(By.ID, "replay-where")
    assert where.text.startswith(f"event 1 of {len(events)}")
    browser.find_element(By.ID, "replay-step").send_keys(Keys.ARROW_RIGHT)
    for _ in range(3):
        browser.find_element(By.ID, "replay-next").click()
    assert where.text.startswith("event 5 of") or where.text.startswith("event 4 of")
    assert browser.find_elements(By.CSS_SELECTOR, "#replay-board g.tile")
    browser.back()  # to the game: its hand untouched by the replay
    wait.until(lambda b: b.find_element(By.ID, "mode-game").is_displayed())
    assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") == hand
    assert not browser.find_element(By.ID, "mode-replay").is_displayed()
    browser.forward()  # and the replay is where it was
    wait.until(lambda b: b.find_element(By.ID, "mode-replay").is_displayed())
    assert where.text.startswith("event 4 of") or where.text.startswith("event 5 of")
    browser.find_element(By.ID, "replay-setup").click()  # its position on the set-up board
    wait.until(lambda b: b.find_element(By.ID, "mode-setup").is_displayed())
    wait.until(lambda b: "ready" in b.find_element(By.ID, "p-problem").text)
    browser.back()
    wait.until(lambda b: b.find_element(By.ID, "mode-replay").is_displayed())


def test_takeback_and_the_move_list_by_keys(base_url, browser):
    """A move taken back returns the hand; the arrow keys step the move list and End returns
    to the game; the position shown goes to the set-up board."""
    start(browser, base_url, "250", "13", instant=True)
    wait = WebDriverWait(browser, PATIENCE)
    while phase(browser) != "move":
        before = version(browser)
        browser.find_element(By.ID, "next").click()
        wait.until(lambda b, before=before: answered(b, before))
    hand = browser.find_element(By.ID, "hand").get_attribute("innerHTML")
    before = version(browser)
    browser.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
    for choice in browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")[:1]:
        choice.click()
    wait.until(lambda b: answered(b, before))
    assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") != hand
    before = version(browser)
    browser.find_element(By.ID, "takeback").click()
    wait.until(lambda b: answered(b, before))
    assert browser.find_element(By.ID, "hand").get_attribute("innerHTML") == hand
    moves = browser.find_element(By.ID, "moves")
    moves.send_keys(Keys.ARROW_LEFT)
    wait.until(lambda b: phase(b) == "review")
    moves.send_keys(Keys.ARROW_LEFT)
    assert "reviewing event" in browser.find_element(By.ID, "status").text
    assert browser.find_elements(By.CSS_SELECTOR, "#moves li.current")
    moves.send_keys(Keys.END)
    wait.until(lambda b: phase(b) == "move")
    browser.find_element(By.ID, "to-setup").click()
    wait.until(lambda b: b.find_element(By.ID, "mode-setup").is_displayed())
    wait.until(lambda b: "ready" in b.find_element(By.ID, "p-problem").text)


def test_a_position_set_up_by_clicking_and_hinted(base_url, browser):
    wait = WebDriverWait(browser, PATIENCE)
    browser.get("about:blank")  # a fresh page: the set-up board's state starts empty
    browser.get(base_url + "/#/setup")
    text = browser.find_element(By.ID, "p-text")
    wait.until(lambda b: "sniff position" in text.get_attribute("value"))
    palette = browser.find_element(By.ID, "palette")
    palette.find_element(By.CSS_SELECTOR, 'button[data-tile="4-4"]').click()  # into the hand
    wait.until(lambda b: "hand: 4-4" in text.get_attribute("value"))
    browser.find_element(By.CSS_SELECTOR, "input[name=p-mode][value=table]").click()
    palette = browser.find_element(By.ID, "palette")
    palette.find_element(By.CSS_SELECTOR, 'button[data-tile="2-2"]').click()  # opens the table
    wait.until(lambda b: "table: 2-2" in text.get_attribute("value"))
    assert browser.find_elements(By.CSS_SELECTOR, "#setup-board g.tile.sniff")
    browser.find_element(By.CSS_SELECTOR, '#p-lacks input[data-seat="1"][data-value="5"]').click()
    wait.until(lambda b: "lacks:" in text.get_attribute("value")
               and "5" in text.get_attribute("value").split("lacks:")[1].split("\n")[0])
    position = ("players: 2\nseat: 0\nleader: 0\nscores: 10 20\n"
                "hand: 3-4 5-5 0-0 1-1 6-6 0-5\ntable: 2-2, 2-5 R\nsizes: 6 6\nboneyard: 14\n")
    text.clear()
    text.send_keys(position)
    browser.find_element(By.ID, "p-read").click()
    wait.until(lambda b: "ready" in b.find_element(By.ID, "p-problem").text)
    browser.find_element(By.ID, "p-budget").clear()
    browser.find_element(By.ID, "p-budget").send_keys("30")
    browser.find_element(By.ID, "p-hint").click()
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "#hint-table tr.best")))
    assert "5-5 on R" in browser.find_element(By.ID, "hint-table").text


def test_no_accessibility_violations(base_url, browser):
    """axe-core on the game mid-game, the replay and the set-up modes: no violation of the
    WCAG A and AA rules (contrast included)."""
    from axe_selenium_python import Axe

    start(browser, base_url, "250", "11", instant=True)
    for route in ("#/game", "#/setup", "#/replay"):
        browser.execute_script(f"location.hash = '{route}'")
        time.sleep(0.5)
        axe = Axe(browser)
        axe.inject()
        results = axe.run(options={"runOnly": {"type": "tag",
                                               "values": ["wcag2a", "wcag2aa", "wcag21aa"]}})
        problems = [f"{v['id']}: {v['help']} ({len(v['nodes'])}: "
                    f"{v['nodes'][0]['target']})" for v in results["violations"]]
        assert not problems, f"{route}: {problems}"
