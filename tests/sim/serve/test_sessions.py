"""``sniff serve`` under load: memory bounded by the session store over 1,000 games created
and finished, and 50 games played at once through the API, every one to its end.

Timings are in ``benchmarks/serve_timings.py`` (docs/serve.md): a test run shares the machine,
so these tests assert what holds under any load (no growth, no game blocked or mixed up).
"""

from __future__ import annotations

import asyncio
import os

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from sim.serve.app import create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard  # noqa: E402
from sim.serve.sessions import Sessions  # noqa: E402

FAST = {"players": 2, "opponents": "greedy", "target": 5}


def rss_mib() -> float:
    pages = int(open("/proc/self/statm").read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def finish(client, view: dict) -> dict:
    while view["phase"] != "over":
        url = f"/api/games/{view['session']}"
        if view["phase"] == "settled":
            view = client.post(url + "/next", json={"version": view["version"]}).json()
        else:
            view = client.post(url + "/move", json={"move": view["options"][0]["move"],
                                                    "version": view["version"]}).json()
    return view


def test_memory_is_bounded_by_the_store_over_350_games():
    """The store's bound, not a scale measurement (benchmarks/serve_memory.py measures peak
    RSS over thousands of games)."""
    guard = Guard(("testserver",), rate=1e9, burst=10**9)
    sessions = Sessions(limit=50, per_client=50)  # one client (the test's address)
    client = TestClient(create_app(sessions, guard), headers={TOKEN_HEADER: guard.token})
    marks = {}
    for number in range(350):
        view = finish(client, client.post("/api/games", json={**FAST, "seed": number}).json())
        assert view["winner"] is not None
        if number in (99, 349):
            marks[number] = rss_mib()
    assert len(sessions) == 50
    # The store is full from game 50 on: 250 more games may not grow the process by more
    # than a few MiB (it grew 2.4 MiB a game, 600 MiB here, before the batch).
    assert marks[349] - marks[99] < 16, marks


def test_50_games_at_once_each_to_its_end():
    guard = Guard(("testserver",), rate=1e9, burst=10**9)
    app = create_app(Sessions(per_client=50), guard)  # 50 games of one client at once

    async def one(client, seed: int) -> tuple[int, list]:
        view = (await client.post("/api/games", json={**FAST, "target": 40, "seed": seed})).json()
        moves = []
        while view["phase"] != "over":
            url = f"/api/games/{view['session']}"
            if view["phase"] == "settled":
                response = await client.post(url + "/next", json={"version": view["version"]})
            else:
                move = view["options"][0]["move"]
                moves.append(move)
                response = await client.post(url + "/move",
                                             json={"move": move, "version": view["version"]})
            assert response.status_code == 200, response.text
            view = response.json()
        return seed, moves

    async def all_at_once():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver",
                                     headers={TOKEN_HEADER: guard.token}) as client:
            return await asyncio.gather(*(one(client, seed) for seed in range(50)))

    results = asyncio.run(all_at_once())
    assert len(results) == 50
    # Each game is its own: played again alone, seed 7 makes the same moves.
    client = TestClient(create_app(Sessions(), guard), headers={TOKEN_HEADER: guard.token})
    view = client.post("/api/games", json={**FAST, "target": 40, "seed": 7}).json()
    alone = []
    while view["phase"] != "over":
        url = f"/api/games/{view['session']}"
        if view["phase"] == "settled":
            view = client.post(url + "/next", json={"version": view["version"]}).json()
            continue
        alone.append(view["options"][0]["move"])
        view = client.post(url + "/move", json={"move": alone[-1],
                                                "version": view["version"]}).json()
    assert dict(results)[7] == alone
