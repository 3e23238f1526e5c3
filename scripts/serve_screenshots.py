"""docs/img/serve-play.png and serve-phone.png: the page of ``sniff serve`` in the middle of
a game, at 1280x900 and at a phone's 390x844.

Starts the app with uvicorn on a free port in a thread, makes a game through the API (with
the page's token) and plays some moves (the first legal one each time), then has headless
Chromium photograph ``/?session=ID``. Run: ``.venv/bin/python scripts/serve_screenshots.py``.
"""

from __future__ import annotations

import argparse
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
from sim.serve.guard import TOKEN_HEADER, Guard, allowed_hosts

ROOT = Path(__file__).resolve().parent.parent
SHOTS = {"serve-play.png": "1280,900", "serve-phone.png": "390,844"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def post(url: str, body: dict, token: str) -> dict:
    request = urllib.request.Request(url, json.dumps(body).encode(),
                                     {"content-type": "application/json", TOKEN_HEADER: token})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()
    port = free_port()
    guard = Guard(allowed_hosts("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(create_app(guard=guard), port=port,
                                           log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    token = guard.token
    view = post(f"{base}/api/games", {"players": 2, "seed": 21, "opponents": "learned"}, token)
    for _ in range(4):  # a few moves in: a board with arms, the hand's legal tiles lit
        if view["phase"] != "move":
            break
        view = post(f"{base}/api/games/{view['session']}/move",
                    {"move": view["options"][0]["move"], "version": view["version"]}, token)
    for name, size in SHOTS.items():
        out = ROOT / "docs" / "img" / name
        subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                        "--hide-scrollbars", "--virtual-time-budget=3000",
                        f"--screenshot={out}", f"--window-size={size}",
                        f"{base}/?session={view['session']}#/game"],
                       check=True, capture_output=True)
        print(f"wrote {out.relative_to(ROOT)}")
    server.should_exit = True


if __name__ == "__main__":
    sys.exit(main())
