"""docs/img/serve-<state>-<size>.png: the page of ``sniff serve`` in each of its states, at
1280x900 (``wide``) and at a phone's 390x844 (``phone``).

The states: the start page, a game in the middle, a bot's move on show, a hint, a
settlement, the result with the analysis and its chart, review of an earlier event, a
replayed trace, and the set-up board. Starts the app with uvicorn on a free port in a
thread and drives headless Chromium through Selenium (the ``test`` extra), as the browser
tests do. Run: ``.venv/bin/python scripts/serve_screenshots.py`` (``--only phone`` for one
size; ``--until start --out DIR``: the first state alone, elsewhere).
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from sim.kernels.trace import trace_games
from sim.serve.app import create_app
from sim.serve.guard import Guard, allowed_hosts

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"wide": (1280, 900), "phone": (390, 844)}
STATES = ("start", "midgame", "botmove", "hint", "settlement", "result", "analysis", "review",
          "replay", "setup")  # in the order they are shot


class Enough(Exception):
    """The last state asked for is shot (``--until``)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def chromium(size: str):
    width, height = SIZES[size]
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or ""
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                     f"--window-size={width},{height}"):
        options.add_argument(argument)
    if size == "phone":  # a headless window has a minimum width: the phone is emulated
        options.add_experimental_option("mobileEmulation", {"deviceMetrics": {
            "width": width, "height": height, "pixelRatio": 2.0, "touch": True}})
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


class Page:
    """The page in one browser, with the steps the states need."""

    def __init__(self, driver, base: str, size: str, out: Path, last: str) -> None:
        self.driver, self.base, self.size = driver, base, size
        self.out, self.last = out, last

    def until(self, condition, patience: float = 300):
        return WebDriverWait(self.driver, patience).until(condition)

    def js(self, script: str, *args):
        return self.driver.execute_script(script, *args)

    def phase(self) -> str:
        return self.driver.find_element(By.ID, "status").get_attribute("data-phase") or ""

    def idle(self, before: int = -1) -> None:
        self.until(lambda d: self.js("return game.view !== null && !game.busy && "
                                     "game.view.version > arguments[0]", before))

    def shot(self, state: str) -> None:
        time.sleep(0.4)
        out = self.out / f"serve-{state}-{self.size}.png"
        self.driver.save_screenshot(str(out))
        print(f"wrote {out}", flush=True)
        if state == self.last:
            raise Enough

    def act(self) -> None:
        before = self.js("return game.view.version")
        if self.phase() == "settled":
            self.driver.find_element(By.ID, "next").click()
        else:
            self.driver.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
            for choice in self.driver.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice"):
                choice.click()
                break
        self.idle(before)

    def play_to(self, wanted: str, moves: int = 0) -> None:
        for _ in range(moves):
            if self.phase() == "move":
                self.act()
        for _ in range(500):
            if self.phase() in (wanted, "over"):
                return
            self.act()

    def new_game(self) -> None:
        driver = self.driver
        driver.find_element(By.CSS_SELECTOR, "#new-game summary").click()
        Select(driver.find_element(By.ID, "players")).select_by_visible_text("4")
        Select(driver.find_element(By.ID, "seat")).select_by_visible_text("1")
        driver.find_element(By.ID, "seed").send_keys("33")
        driver.find_element(By.ID, "start").click()
        self.idle()


def states(page: Page, trace: Path) -> None:
    driver = page.driver
    driver.get(page.base + "/#/game")
    page.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#opponents option")) > 1)
    page.shot("start")
    page.new_game()
    page.play_to("move", moves=3)
    page.shot("midgame")
    page.js("HOLD_MS.play = HOLD_MS.draw = HOLD_MS.pass = 60000")
    before = page.js("return game.view.version")
    driver.find_element(By.CSS_SELECTOR, "#hand button.legal").click()
    for choice in driver.find_elements(By.CSS_SELECTOR, "#prompt button.end-choice")[:1]:
        choice.click()
    # Your own move's pause skipped; a bot's move then stays on show for the picture.
    page.until(lambda d: page.js("""const last = window.sniffDrawn.slice(-1)[0];
      if (last.status.startsWith("you ") && game.wake) game.wake();
      return !last.live && !last.thinking && !last.status.startsWith("you ")"""))
    page.shot("botmove")
    page.js("document.getElementById('instant').click()")
    page.idle(before)
    page.js("document.getElementById('instant').click()")
    page.play_to("move")
    driver.find_element(By.ID, "hint").click()
    page.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#hint-table tr.best"))
    driver.find_element(By.ID, "hints").location_once_scrolled_into_view  # noqa: B018
    page.shot("hint")
    page.js("document.getElementById('instant').click()")
    page.play_to("settled")
    page.shot("settlement")
    page.play_to("over")
    driver.find_element(By.ID, "analyse").click()
    page.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr"))
    page.js("scrollTo(0, 0)")
    page.shot("result")
    driver.find_element(By.ID, "win-chart").location_once_scrolled_into_view  # noqa: B018
    page.shot("analysis")
    driver.find_elements(By.CSS_SELECTOR, "#analysis-table tbody tr")[2].click()
    page.until(lambda d: page.phase() == "review")
    page.shot("review")
    driver.find_element(By.ID, "nav-replay").click()
    driver.find_element(By.ID, "replay-file").send_keys(str(trace))
    page.until(lambda d: d.find_element(By.ID, "replay-controls").is_displayed())
    for _ in range(14):
        driver.find_element(By.ID, "replay-next").click()
    page.shot("replay")
    driver.find_element(By.ID, "replay-setup").click()
    page.until(lambda d: "ready" in d.find_element(By.ID, "p-problem").text)
    page.js("scrollTo(0, 0)")
    page.shot("setup")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=list(SIZES))
    parser.add_argument("--until", choices=STATES, default=STATES[-1],
                        help="the last state shot (default: every state)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img",
                        help="the folder of the pictures (default: docs/img)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    guard = Guard(allowed_hosts("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(create_app(guard=guard), port=port,
                                           log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with tempfile.TemporaryDirectory() as folder:
        trace = Path(folder) / "game.jsonl"
        events = trace_games(2, 8, ["greedy", "learned"], 1)
        trace.write_text("".join(json.dumps(event) + "\n" for event in events))
        for size in [args.only] if args.only else list(SIZES):
            driver = chromium(size)
            try:
                states(Page(driver, f"http://127.0.0.1:{port}", size, args.out, args.until),
                       trace)
            except Enough:
                pass
            finally:
                driver.quit()
    server.should_exit = True


if __name__ == "__main__":
    sys.exit(main())
