"""The memory of ``sniff serve`` over many games: 1,000 games created and finished through
its HTTP API must leave the server's resident memory within 50 MB of its level after the
first 100 (docs/serve.md). A benchmark, not a test: it takes minutes.

Starts ``sniff serve --port 0`` as its own process (the server as a person runs it), reads
the page's token, then plays ``--games`` games to their end from ``--clients`` clients
(each its own browser-session cookie, so the store holds up to ``clients x per-client``
games at once, as with that many people), the first legal move each time. It prints the
server's RSS after the first 100 games, every 100 games after, at the end, and its peak
(``VmHWM``), and exits 1 if the end is more than ``--limit`` MB over the level after 100.
Run: ``.venv/bin/python benchmarks/serve_memory.py`` (``--games 2 --clients 1``: a check
that it runs).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time

import httpx

from sim.children import child_env
from sim.serve.app import CLIENT_COOKIE
from sim.serve.guard import TOKEN_HEADER


def memory(pid: int) -> tuple[float, float]:
    """The process's resident memory now and at its peak, in MB."""
    fields = dict(line.split(":", 1) for line in open(f"/proc/{pid}/status"))
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def serve() -> tuple[subprocess.Popen, str]:
    """``sniff serve`` on a free port; its process and its address."""
    process = subprocess.Popen([sys.executable, "-P", "-m", "sim.cli", "serve", "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=child_env())
    for line in process.stdout:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if found:
            return process, f"http://127.0.0.1:{found.group(1)}"
    raise SystemExit(f"sniff serve did not start (exit {process.wait()})")


def post(client: httpx.Client, path: str, body: dict) -> dict:
    """A POST, waited out and sent again while the server's rate limit refuses it (429)."""
    while True:
        answer = client.post(path, json=body)
        if answer.status_code != 429:
            return answer.raise_for_status().json()
        time.sleep(0.1)


def play(client: httpx.Client, body: dict) -> int:
    """One game to its end; the number of requests it took."""
    view = post(client, "/api/games", body)
    requests = 1
    while view["phase"] != "over":
        url = f"/api/games/{view['session']}"
        if view["phase"] == "settled":
            view = post(client, url + "/next", {"version": view["version"]})
        else:
            view = post(client, url + "/move", {"move": view["options"][0]["move"],
                                                "version": view["version"]})
        requests += 1
    return requests


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--target", type=int, default=50, help="a house target (short games)")
    parser.add_argument("--opponents", default="greedy")
    parser.add_argument("--limit", type=float, default=50.0, help="MB allowed over the level "
                        "after the first 100 games")
    args = parser.parse_args()
    process, base = serve()
    try:
        token = re.search(r'name="sniff-token" content="([^"]+)"',
                          httpx.get(base + "/").text).group(1)
        clients = [httpx.Client(base_url=base, headers={TOKEN_HEADER: token}, timeout=600,
                                cookies={CLIENT_COOKIE: f"memory-client-{n:06d}"})
                   for n in range(args.clients)]
        body = {"players": 2, "opponents": args.opponents, "target": args.target}
        marks, requests, began = {}, 0, time.monotonic()
        for number in range(1, args.games + 1):
            requests += play(clients[number % args.clients], {**body, "seed": number})
            if number % 100 == 0 or number == args.games:
                marks[number] = memory(process.pid)
                print(f"{number:>6} games  {requests:>7} requests  RSS {marks[number][0]:7.1f} MB"
                      f"  peak {marks[number][1]:7.1f} MB  {time.monotonic() - began:6.0f} s",
                      flush=True)
    finally:
        process.terminate()
        process.wait(30)
    first = marks[min(marks)][0]
    end, peak = marks[args.games]
    growth = end - first
    print(f"after the first {min(marks)}: {first:.1f} MB; after {args.games}: {end:.1f} MB "
          f"({growth:+.1f} MB, limit {args.limit:g}); peak {peak:.1f} MB")
    return 0 if growth <= args.limit else 1


if __name__ == "__main__":
    sys.exit(main())
