"""What the real-browser tests of ``sniff serve`` share: the server (uvicorn on a free port in
a thread), headless Chromium at 1280x900 and at a phone's 390x844, axe-core 4.x (vendored in
``tests/vendor/axe-core``: no network), and the steps of a game by clicks.

Selenium drives Debian's headless Chromium; ``.ci/run`` installs Chromium and its driver.
A test module skips, in one line, only where they are missing.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import urllib.request

import pytest

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn is not installed (sniff[serve])")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from sim.serve.app import create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard, allowed_hosts  # noqa: E402
from tests.helpers import TESTS  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
# Seconds a step may take: a wait ends as soon as its condition holds, but the first game
# and the first hint compile their kernels where the cache is cold.
PATIENCE = 180
AXE = TESTS / "vendor" / "axe-core" / "axe.min.js"
AXE_VERSION = "4.14.1"
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21aa", "wcag22aa"]
SIZES = {"wide": "1280,900", "phone": "390,844"}
missing = not (CHROMIUM and DRIVER)


@pytest.fixture(scope="module")
def base_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = create_app(guard=Guard(allowed_hosts("127.0.0.1", port), rate=500.0, burst=2000))
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def chromium(size: str):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={size}"):
        options.add_argument(argument)
    if size == SIZES["phone"]:  # a headless window has a minimum width: the phone is emulated
        width, height = map(int, size.split(","))
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {
            "width": width, "height": height, "pixelRatio": 3.0, "touch": True}})
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_script_timeout(120)
    return driver


@pytest.fixture(scope="module")
def browser():
    driver = chromium(SIZES["wide"])
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def phone():
    driver = chromium(SIZES["phone"])
    yield driver
    driver.quit()


def phase(browser) -> str:
    return browser.find_element(By.ID, "status").get_attribute("data-phase") or ""


def version(browser) -> int:
    return browser.execute_script("return game.view ? game.view.version : -1")


def answered(browser, before: int) -> bool:
    """The answer to the decision of version ``before`` is drawn (the hand unlocked)."""
    return browser.execute_script(
        "return game.view !== null && game.view.version > arguments[0] && !game.busy", before)


def wait(browser, condition, patience: float = PATIENCE):
    return WebDriverWait(browser, patience).until(condition)


def fresh(browser, base_url: str, route: str = "#/game") -> None:
    """The page anew: no game kept in the tab, the start page."""
    browser.get(base_url + "/static/style.css")  # this origin, no script: forget the last game
    browser.execute_script("sessionStorage.clear()")
    browser.get(base_url + "/" + route)
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#opponents option")) > 1)


def start(browser, base_url: str, target: str = "", seed: str = "", instant: bool = True,
          players: str = "2", seat: str = "0", opponents: str = "greedy") -> None:
    """A game from the form (Choose the game), drawn and waiting for you (``target`` empty:
    the engine's own for the players)."""
    fresh(browser, base_url)
    if not browser.find_element(By.ID, "new-game").get_attribute("open"):
        browser.find_element(By.CSS_SELECTOR, "#new-game summary").click()
    Select(browser.find_element(By.ID, "players")).select_by_visible_text(players)
    Select(browser.find_element(By.ID, "seat")).select_by_visible_text(seat)
    Select(browser.find_element(By.ID, "opponents")).select_by_visible_text(opponents)
    for field, value in (("target", target), ("seed", seed)):
        if field == "target" and not value:
            continue
        box = browser.find_element(By.ID, field)
        box.clear()
        box.send_keys(value)
    if browser.find_element(By.ID, "instant").is_selected() != instant:
        browser.execute_script("document.getElementById('instant').click()")
    browser.find_element(By.ID, "start").click()
    wait(browser, lambda b: phase(b) in ("move", "settled", "over") and answered(b, -1))


def act(browser) -> None:
    """Answer the decision shown: Next round at a settlement, else the first lit tile (and
    the first end offered), then wait for the answer to be drawn."""
    before = version(browser)
    if phase(browser) == "settled":
        browser.find_element(By.ID, "next").click()
    else:
        browser.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
        for choice in browser.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")[:1]:
            choice.click()
    wait(browser, lambda b: answered(b, before))


def play_to(browser, wanted: str, limit: int = 400) -> None:
    """Act until the phase is ``wanted`` (or the game is over)."""
    for _ in range(limit):
        if phase(browser) in (wanted, "over"):
            return
        act(browser)
    raise AssertionError(f"never reached {wanted}")


def api(browser, method: str, path: str, body: dict | None = None) -> dict:
    """A request made outside the page (another tab, curl), with the page's token."""
    token = browser.execute_script("return TOKEN")
    base = browser.execute_script("return location.origin")
    request = urllib.request.Request(base + path, None if body is None else
                                     json.dumps(body).encode(), method=method,
                                     headers={"content-type": "application/json",
                                              TOKEN_HEADER: token})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def axe_violations(browser) -> list[str]:
    """axe-core's violations of the WCAG 2.0, 2.1 and 2.2 A and AA rules on the page now."""
    if not browser.execute_script("return typeof axe !== 'undefined'"):
        browser.execute_script(AXE.read_text())
    results = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]}})"
        ".then((r) => done({version: axe.version, violations: r.violations,"
        " passes: r.passes.length}), (e) => done({error: String(e)}));", AXE_TAGS)
    assert "error" not in results, results
    assert results["version"] == AXE_VERSION and results["passes"] > 10, results
    return [f"{v['id']}: {v['help']} ({len(v['nodes'])}: {v['nodes'][0]['target']})"
            for v in results["violations"]]


# The page's elements wider than its width (what makes it scroll sideways), if any.
WIDE = """return [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect()
  .right > document.documentElement.clientWidth + 1).slice(0, 5).map(e => e.tagName + '#' + e.id
  + ' ' + Math.round(e.getBoundingClientRect().right))"""

# Every tile drawn on the main board: its long side, and pairs that overlap.
TILES = """const board = document.getElementById(arguments[0] || 'board');
const box = board.getBoundingClientRect();
const rs = [...board.querySelectorAll('g.tile')].map((g) => g.getBoundingClientRect());
const over = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
  && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
let overlaps = 0;
rs.forEach((a, i) => rs.slice(i + 1).forEach((b) => { overlaps += over(a, b); }));
return {count: rs.length, overlaps,
  shortest: rs.length ? Math.min(...rs.map((r) => Math.max(r.width, r.height))) : null,
  outside: rs.filter((r) => r.left < box.left - 0.5 || r.right > box.right + 0.5).length,
  scroll: document.documentElement.scrollWidth, width: document.documentElement.clientWidth}"""
