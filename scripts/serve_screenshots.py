"""docs/img/serve-play.png: the page of ``sniff serve`` in the middle of a game.

Starts the app with uvicorn on a free port in a thread, makes a game through the API and
plays some moves (the first legal one each time), then has headless Chromium photograph
``/?session=ID``. Run: ``.venv/bin/python scripts/serve_screenshots.py``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import uvicorn

from sim.serve.app import create_app

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "img" / "serve-play.png"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"content-type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def main() -> None:
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(), port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    view = post(f"{base}/api/games", {"players": 2, "seed": 21, "opponents": "learned"})
    for _ in range(4):  # a few moves in: a board with arms, the hand's legal tiles lit
        if view["phase"] != "move":
            break
        view = post(f"{base}/api/games/{view['session']}/move",
                    {"move": view["options"][0]["move"]})
    subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--virtual-time-budget=3000", f"--screenshot={OUT}",
                    "--window-size=1280,900", f"{base}/?session={view['session']}"],
                   check=True, capture_output=True)
    server.should_exit = True
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    sys.exit(main())
