"""Timings of ``sniff serve``'s requests, for docs/serve.md (``.venv/bin/python
benchmarks/serve_timings.py``): new game, a move (one call of the game's resumable batch), a
hint at 500 play-outs, a replay of a traced game, and 50 games played at once (each move's
answer time while the other 49 games play too). Kernels are warmed first (compiles are not
timed). The app runs in process (Starlette's TestClient, httpx's ASGI transport). ``--games
1 --hints 0 --replays 1 --at-once 2 --target 50``: a check that it runs, in seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from dataclasses import dataclass

import httpx
from starlette.testclient import TestClient

from sim.kernels.trace import trace_games
from sim.serve.app import create_app
from sim.serve.guard import TOKEN_HEADER, Guard
from sim.serve.sessions import Sessions

GUARD = Guard(("testserver",), rate=1e9, burst=10**9)
AT_ONCE = 50


def timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


@dataclass(frozen=True)
class Sizes:
    """How much is timed: games one at a time, hints, replays, games at once, and the
    games' target (None: the page's own)."""

    games: int = 5
    hints: int = 5
    replays: int = 5
    at_once: int = AT_ONCE
    target: int | None = None

    def body(self, seed: int) -> dict:
        """A new game's request."""
        return {"seed": seed} if self.target is None else {"seed": seed, "target": self.target}


def one_at_a_time(client: TestClient, sizes: Sizes) -> dict[str, list[float]]:
    starts, moves, hints = [], [], []
    for seed in range(1, sizes.games + 1):
        seconds, response = timed(lambda seed=seed: client.post("/api/games",
                                                                json=sizes.body(seed)))
        starts.append(seconds)
        view = response.json()
        while view["phase"] != "over":
            url = f"/api/games/{view['session']}"
            if view["phase"] == "settled":
                view = client.post(url + "/next", json={"version": view["version"]}).json()
                continue
            if len(hints) < sizes.hints and seed == 1:
                seconds, _ = timed(lambda url=url: client.post(url + "/hint",
                                                               json={"budget": 500}))
                hints.append(seconds)
            body = {"move": view["options"][0]["move"], "version": view["version"]}
            seconds, response = timed(lambda url=url, body=body: client.post(url + "/move",
                                                                             json=body))
            moves.append(seconds)
            view = response.json()
    text = "".join(json.dumps(e) + "\n" for e in trace_games(2, 7, ["greedy", "learned"], 1))
    replays = [timed(lambda: client.post("/api/replay", content=text))[0]
               for _ in range(sizes.replays)]
    return {"new game": starts, "move": moves, "hint, 500 play-outs": hints,
            "replay of one traced game": replays}


async def many_at_once(app, sizes: Sizes) -> list[float]:
    """Each move's answer time while ``sizes.at_once`` games (against learned) play side by
    side."""
    times: list[float] = []

    async def one(client, seed: int) -> None:
        view = (await client.post("/api/games", json=sizes.body(100 + seed))).json()
        while view["phase"] != "over":
            url = f"/api/games/{view['session']}"
            if view["phase"] == "settled":
                view = (await client.post(url + "/next", json={"version": view["version"]})).json()
                continue
            body = {"move": view["options"][0]["move"], "version": view["version"]}
            start = time.perf_counter()
            view = (await client.post(url + "/move", json=body)).json()
            times.append(time.perf_counter() - start)

    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver",
                                 headers={TOKEN_HEADER: GUARD.token}) as client:
        await asyncio.gather(*(one(client, seed) for seed in range(sizes.at_once)))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=5, help="games played one at a time")
    parser.add_argument("--hints", type=int, default=5, help="hints timed in the first game")
    parser.add_argument("--replays", type=int, default=5, help="replays timed")
    parser.add_argument("--at-once", type=int, default=AT_ONCE, help="games played at once")
    parser.add_argument("--target", type=int, help="the games' target (default: the page's)")
    args = parser.parse_args()
    sizes = Sizes(args.games, args.hints, args.replays, args.at_once, args.target)
    app = create_app(Sessions(per_client=2 * sizes.at_once), GUARD)  # one client, many games
    client = TestClient(app, headers={TOKEN_HEADER: GUARD.token})
    client.post("/api/games", json=sizes.body(0))  # warm the compiled kernels
    rows = one_at_a_time(client, sizes)
    rows[f"move, {sizes.at_once} games at once"] = asyncio.run(many_at_once(app, sizes))
    for name, values in rows.items():
        if not values:
            continue
        values = sorted(values)
        p95 = values[int(0.95 * (len(values) - 1))]
        print(f"{name:<30} median {1000 * statistics.median(values):7.1f} ms   "
              f"p95 {1000 * p95:7.1f} ms   max {1000 * max(values):7.1f} ms   "
              f"({len(values)} requests)")


if __name__ == "__main__":
    main()
