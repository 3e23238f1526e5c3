"""``sniff serve`` in a real browser: a whole game played by clicking, and a hint asked.

Selenium drives Debian's headless Chromium against uvicorn on a free port in a thread. It
skips, with one line, where Chromium, its driver or Selenium is missing.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed (sniff[serve])")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as seen  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from sim.serve.app import create_app  # noqa: E402
from sim.serve.guard import Guard, allowed_hosts  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
# Seconds a step may take: a wait ends as soon as its condition holds, but the first game
# and the first hint compile their kernels where the cache is cold (a cold run of the first
# test took 24 s here, a warm one 6 s).
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


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--window-size=1280,900"):
        options.add_argument(argument)
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    yield driver
    driver.quit()


def phase(browser) -> str:
    return browser.find_element(By.ID, "status").get_attribute("data-phase") or ""


def test_a_game_played_by_clicking_to_the_end(base_url, browser):
    wait = WebDriverWait(browser, PATIENCE)
    browser.get(base_url + "/")
    wait.until(lambda b: len(b.find_elements(By.CSS_SELECTOR, "#opponents option")) > 1)
    Select(browser.find_element(By.ID, "players")).select_by_visible_text("2")
    target = browser.find_element(By.ID, "target")
    target.clear()
    target.send_keys("40")
    browser.find_element(By.ID, "seed").send_keys("3")
    browser.find_element(By.ID, "start").click()
    wait.until(lambda b: phase(b) in ("move", "settled", "over"))

    hinted, clicks = False, 0
    while phase(browser) != "over":
        clicks += 1
        assert clicks < 300, "the game did not end"
        before = browser.find_element(By.ID, "log").text
        if phase(browser) == "settled":
            assert "Settlement" in browser.find_element(By.ID, "settlement").text
            browser.find_element(By.ID, "next").click()
        else:
            if not hinted:
                browser.find_element(By.ID, "budget").clear()
                browser.find_element(By.ID, "budget").send_keys("30")
                browser.find_element(By.ID, "hint").click()
                best_row = (By.CSS_SELECTOR, "#hint-table tr.best")
                wait.until(seen.presence_of_element_located(best_row))
                best = browser.find_element(*best_row).text
                assert "★" in best and "%" in best
                hinted = True
            tiles = browser.find_elements(By.CSS_SELECTOR, "#hand g.tile.legal")
            assert tiles, "no legal tile lit at a move"
            tiles[0].click()
            choices = browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")
            if choices:
                choices[0].click()
        wait.until(lambda b, before=before: b.find_element(By.ID, "log").text != before
                   or phase(b) == "over")
    assert hinted
    assert "game over" in browser.find_element(By.ID, "status").text
    assert browser.find_element(By.ID, "trace").is_displayed()
    assert browser.find_elements(By.CSS_SELECTOR, "#board g.tile")


def test_a_trace_replayed_step_by_step(base_url, browser, tmp_path):
    import json

    from sim.kernels.trace import trace_games

    events = trace_games(2, 8, ["greedy", "learned"], 1)
    path = tmp_path / "game.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    wait = WebDriverWait(browser, PATIENCE)
    browser.get(base_url + "/")
    browser.find_element(By.ID, "replay-file").send_keys(str(path))
    wait.until(lambda b: b.find_element(By.ID, "replay-controls").is_displayed())
    where = browser.find_element(By.ID, "replay-where")
    assert where.text.startswith(f"event 1 of {len(events)}")
    for _ in range(3):
        browser.find_element(By.ID, "replay-next").click()
    assert where.text.startswith("event 4 of")
    assert browser.find_elements(By.CSS_SELECTOR, "#board g.tile")
    browser.find_element(By.ID, "replay-prev").click()
    assert where.text.startswith("event 3 of")


def test_a_position_set_up_by_clicking_and_hinted(base_url, browser):
    wait = WebDriverWait(browser, PATIENCE)
    browser.get(base_url + "/")
    browser.find_element(By.ID, "setup-open").click()
    text = browser.find_element(By.ID, "p-text")
    wait.until(lambda b: "sniff position" in text.get_attribute("value"))
    palette = browser.find_element(By.ID, "palette")
    palette.find_element(By.CSS_SELECTOR, 'g[data-tile="4-4"]').click()  # into the hand
    wait.until(lambda b: "hand: 4-4" in text.get_attribute("value"))
    browser.find_element(By.CSS_SELECTOR, "input[name=p-mode][value=table]").click()
    palette = browser.find_element(By.ID, "palette")
    palette.find_element(By.CSS_SELECTOR, 'g[data-tile="2-2"]').click()  # opens the table
    wait.until(lambda b: "table: 2-2" in text.get_attribute("value"))
    assert browser.find_elements(By.CSS_SELECTOR, "#board g.tile.sniff")
    browser.find_element(By.CSS_SELECTOR, '#p-lacks input[data-seat="1"][data-value="5"]').click()
    wait.until(lambda b: "lacks:" in text.get_attribute("value")
               and "5" in text.get_attribute("value").split("lacks:")[1].split("\n")[0])
    position = ("players: 2\nseat: 0\nleader: 0\nscores: 10 20\n"
                "hand: 3-4 5-5 0-0 1-1 6-6 0-5\ntable: 2-2, 2-5 R\nsizes: 6 6\nboneyard: 14\n")
    text.clear()
    text.send_keys(position)
    browser.find_element(By.ID, "p-read").click()
    wait.until(lambda b: "ready" in b.find_element(By.ID, "p-problem").text)
    browser.find_element(By.ID, "budget").clear()
    browser.find_element(By.ID, "budget").send_keys("30")
    browser.find_element(By.ID, "p-hint").click()
    wait.until(seen.presence_of_element_located((By.CSS_SELECTOR, "#hint-table tr.best")))
    assert "5-5 on R" in browser.find_element(By.ID, "hint-table").text
