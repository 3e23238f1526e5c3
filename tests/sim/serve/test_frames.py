"""``sniff serve``'s answers as moments: a frame per event since the page last drew the
table (forced moves and every bot's included), the move list as whole tables, the game kept
per client so others cannot push it out, and the small things of first contact (favicon,
the budget's range, set-up problems that name their field)."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from sim.serve.app import CLIENT_COOKIE, MAX_HINT_BUDGET, create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard  # noqa: E402
from sim.serve.sessions import Sessions  # noqa: E402

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")
POSITION = {"players": 2, "seat": 0, "leader": 0, "scores": [10, 20], "sizes": [6, 6],
            "boneyard": 14, "hand": ["3-4", "5-5", "0-0", "1-1", "6-6", "0-5"],
            "table": [["2-2", None], ["2-5", "R"]]}


def client_of(sessions: Sessions, cookie: str | None = None) -> TestClient:
    guard = Guard(("testserver",), rate=1e6, burst=10**6)
    client = TestClient(create_app(sessions, guard), raise_server_exceptions=False,
                        headers={TOKEN_HEADER: guard.token})
    if cookie is not None:
        client.cookies.set(CLIENT_COOKIE, cookie)
    return client


def check_frames(frames: list[dict], seat: int) -> None:
    """Each frame a whole moment: your hand as large as your seat's count, the board
    holding one tile per placement of the round so far, and the seat marked to act next
    the one that does."""
    for frame, following in zip(frames, frames[1:] + [None]):
        assert len(frame["hand"]) == frame["sizes"][seat], frame
        if following is not None and following["kind"] in ("play", "draw", "pass"):
            assert frame["turn"] == following["seat"], (frame["line"], following["line"])


def test_one_click_of_18_events_comes_back_as_18_frames():
    """The issue's repro: 4 players, seat 1, seed 33, open with 4-6. The answer had
    ``recent: []`` and the board jumped to the settled round; now every event from the move
    on is a frame, your forced moves and every bot's move included."""
    with client_of(Sessions()) as client:
        view = client.post("/api/games", json={"players": 4, "seat": 1, "seed": 33}).json()
        assert [f["kind"] for f in view["recent"]] == ["round_start"]  # the deal, drawn
        option = next(o for o in view["options"] if sorted(o["tile"]) == sorted("4-6"))
        answer = client.post(f"/api/games/{view['session']}/move",
                             json={"move": option["move"], "version": view["version"]}).json()
    frames = answer["recent"]
    assert [f["index"] for f in frames] == list(range(view["events"], answer["events"]))
    assert len(frames) >= 18 and answer["phase"] == "settled"
    assert frames[0]["line"]["text"].startswith("you open 4-6")
    mine = [f for f in frames[1:] if f["seat"] == 1 and f["kind"] == "play"]
    assert mine, "the forced moves of seat 1 are frames too"
    bots = {f["seat"] for f in frames if f["kind"] == "play" and f["seat"] != 1}
    assert bots == {0, 2, 3}
    check_frames(frames, 1)
    assert frames[-1]["kind"] == "round_end" and frames[-1]["settlement"]
    tiles = [sum(len(arm) for arm in f["board"]["arms"].values()) + 1 for f in frames
             if f["kind"] == "play"]
    assert tiles == list(range(tiles[0], tiles[0] + len(tiles)))  # one more tile each


def test_a_view_since_an_event_brings_the_frames_missed():
    """A page that drew N events (then a 409, or a move made in another tab) asks
    ``?since=N`` and gets a frame for each event after, nothing more."""
    with client_of(Sessions()) as client:
        view = client.post("/api/games", json={"seed": 6, "opponents": "greedy"}).json()
        while view["phase"] == "settled":
            view = client.post(f"/api/games/{view['session']}/next",
                               json={"version": view["version"]}).json()
        url = f"/api/games/{view['session']}"
        drawn = view["events"]
        elsewhere = client.post(url + "/move", json={"move": view["options"][0]["move"],
                                                     "version": view["version"]}).json()
        caught_up = client.get(f"{url}?since={drawn}").json()
        assert caught_up["version"] == elsewhere["version"]
        assert [f["index"] for f in caught_up["recent"]] == list(range(drawn,
                                                                        elsewhere["events"]))
        assert client.get(url).json()["recent"] == []
        assert client.get(f"{url}?since={elsewhere['events']}").json()["recent"] == []
        assert client.get(f"{url}?since=-1").status_code == 400


def test_the_move_list_is_a_whole_table_per_event():
    """Each frame of the history has the board of its moment (not the round's last board),
    the count, scores, sizes, your hand and the score sheet's row at a settlement."""
    with client_of(Sessions()) as client:
        view = client.post("/api/games", json={"seed": 4, "target": 250,
                                               "opponents": "greedy"}).json()
        while view["phase"] != "over" and view["sheet"] == []:
            url = f"/api/games/{view['session']}"
            if view["phase"] == "settled":
                break
            view = client.post(url + "/move", json={"move": view["options"][0]["move"],
                                                    "version": view["version"]}).json()
        frames = client.get(f"/api/games/{view['session']}/history").json()["frames"]
    placed = 0
    for frame in frames:
        placed = 0 if frame["kind"] == "round_start" else placed + (frame["kind"] == "play")
        on_board = sum(len(a) for a in frame["board"]["arms"].values()) + bool(
            frame["board"]["opening"])
        assert on_board == placed, frame["line"]
    check_frames(frames, 0)
    assert frames[-1]["scores"] == view["scores"] and frames[-1]["hand"] == view["hand"]
    ends = [f for f in frames if f["kind"] == "round_end"]
    assert ends and ends[0]["sheet_row"]["scores"] == view["sheet"][0]["scores"]


def test_other_clients_cannot_push_out_a_game():
    """250 games started by others (the issue's repro) leave a game in progress alone: a
    client keeps its own few games, the server refuses new ones when full (503)."""
    sessions = Sessions(limit=30, per_client=3)
    mine = client_of(sessions, "m" * 22)
    made = [mine.post("/api/games", json={"seed": seed, "opponents": "greedy"}).json()["session"]
            for seed in range(5)]  # a client's own oldest games make room for its next ones
    assert sessions.owned("browser:" + "m" * 22) == 3
    assert [mine.get(f"/api/games/{s}").status_code for s in made] == [404] * 2 + [200] * 3
    statuses = []
    for number in range(250):
        other = client_of(sessions, f"other-client-{number:08d}")
        statuses.append(other.post("/api/games", json={"seed": 2,
                                                       "opponents": "greedy"}).status_code)
    assert [mine.get(f"/api/games/{s}").status_code for s in made[2:]] == [200] * 3
    assert statuses[:27] == [200] * 27 and set(statuses[27:]) == {503}
    full = client_of(sessions, "z" * 22).post("/api/games", json={"opponents": "greedy"})
    assert full.status_code == 503 and "other players" in full.json()["error"]
    # Without the cookie (a script), the client is its address: its own limit too.
    script = client_of(Sessions(per_client=2))
    made = [script.post("/api/games", json={"opponents": "greedy"}).json()["session"]
            for _ in range(3)]
    assert [script.get(f"/api/games/{s}").status_code for s in made] == [404, 200, 200]


def test_the_page_gives_each_browser_session_a_client_cookie_and_a_favicon():
    with client_of(Sessions()) as client:
        page = client.get("/")
        cookie = page.cookies.get(CLIENT_COOKIE)
        assert cookie and len(cookie) >= 16
        assert "httponly" in page.headers["set-cookie"].lower()
        assert "samesite=strict" in page.headers["set-cookie"].lower()
        assert "max-age" not in page.headers["set-cookie"].lower()  # ends with the session
        assert CLIENT_COOKIE not in client.get("/").headers.get("set-cookie", "")
        icon = client.get("/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/svg+xml"
        assert 'rel="icon"' in page.text


@pytest.mark.parametrize("budget", [0, 1, MAX_HINT_BUDGET + 1])
def test_the_budgets_range_is_the_servers(budget):
    with client_of(Sessions()) as client:
        response = client.post("/api/position/hint", json={"text": "players: 2",
                                                           "budget": budget})
    assert response.status_code == 400
    assert f"2..{MAX_HINT_BUDGET:,}" in response.json()["error"]
    assert "100,000" not in response.json()["error"]


def test_a_position_from_the_first_event_and_problems_that_name_their_field():
    with client_of(Sessions()) as client:
        view = client.post("/api/games", json={"seed": 8, "opponents": "greedy"}).json()
        first = client.post(f"/api/games/{view['session']}/position", json={"event": 0})
        assert first.status_code == 200 and "hand:" in first.json()["text"]
        for change, fields in (({"boneyard": 13}, ["sizes", "boneyard"]),
                               ({"seat": 5}, ["seat"]), ({"scores": [10, 21]}, ["scores"]),
                               ({"leader": 9}, ["leader"]), ({"sizes": [6]}, ["sizes"]),
                               ({"lacks": [[3], []]}, ["lacks"])):
            problem = client.post("/api/position/write", json={**POSITION, **change}).json()
            assert problem["problem"] and problem["fields"] == fields, (change, problem)
        ready = client.post("/api/position/write", json=POSITION).json()
        assert ready["problem"] is None and ready["fields"] == []
