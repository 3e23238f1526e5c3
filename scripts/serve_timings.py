"""Timings of ``sniff serve``'s requests, for docs/serve.md (``.venv/bin/python
scripts/serve_timings.py``): new game, a move (the game replayed from its seed), a hint at
500 play-outs, a replay of a traced game. Kernels are warmed first (compiles are not timed).
"""

from __future__ import annotations

import json
import statistics
import time

from starlette.testclient import TestClient

from sim.kernels.trace import trace_games
from sim.serve.app import create_app


def timed(call):
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def main() -> None:
    client = TestClient(create_app())
    client.post("/api/games", json={"seed": 0})  # warm the compiled kernels
    starts, moves, hints = [], [], []
    for seed in range(1, 6):
        seconds, response = timed(lambda seed=seed: client.post("/api/games",
                                                                json={"seed": seed}))
        starts.append(seconds)
        view = response.json()
        while view["phase"] != "over":
            url = f"/api/games/{view['session']}"
            if view["phase"] == "settled":
                view = client.post(url + "/next").json()
                continue
            if len(hints) < 5 and seed == 1:
                seconds, _ = timed(lambda url=url: client.post(url + "/hint",
                                                               json={"budget": 500}))
                hints.append(seconds)
            move = view["options"][0]["move"]
            seconds, response = timed(lambda url=url, move=move: client.post(
                url + "/move", json={"move": move}))
            moves.append(seconds)
            view = response.json()
    text = "".join(json.dumps(e) + "\n" for e in trace_games(2, 7, ["greedy", "learned"], 1))
    replays = [timed(lambda: client.post("/api/replay", content=text))[0] for _ in range(5)]
    for name, values in (("new game", starts), ("move", moves), ("hint, 500 play-outs", hints),
                         ("replay of one traced game", replays)):
        print(f"{name:<28} median {1000 * statistics.median(values):7.1f} ms   "
              f"max {1000 * max(values):7.1f} ms   ({len(values)} requests)")


if __name__ == "__main__":
    main()
