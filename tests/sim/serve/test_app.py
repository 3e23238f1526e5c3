"""``sniff serve``'s HTTP API: whole games played through it never show a hidden tile, hints
match ``sniff hint``'s analysis, and every bad request is a 4xx with one JSON line."""

from __future__ import annotations

import json
import random

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from sim.serve.app import MAX_BODY, create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard  # noqa: E402
from sim.serve.sessions import Sessions  # noqa: E402
from sim.table.render import ReplayState  # noqa: E402

# The hint search compiled once for both workers (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("hint_search_compiled")


def client_of(sessions: Sessions) -> TestClient:
    """A TestClient that is the page: TestClient's host, the page's token, no rate limit."""
    guard = Guard(("testserver",), rate=1e6, burst=10**6)
    return TestClient(create_app(sessions, guard), raise_server_exceptions=False,
                      headers={TOKEN_HEADER: guard.token})


@pytest.fixture()
def served():
    sessions = Sessions()
    with client_of(sessions) as client:
        yield client, sessions


def hidden_tiles(game) -> set[str]:
    """What the person may not know now: other hands (unless just settled), the boneyard."""
    shown = game.events[: game.visible()]
    state, boneyard = ReplayState(), []
    for event in shown:
        state.apply(event)
        if event["event"] == "round_start":
            boneyard = list(event["boneyard"])
        elif event["event"] == "draw":
            boneyard = [t for t in boneyard if sorted(t) != sorted(event["tile"])]
    hidden = set(boneyard)
    # a settlement counts every hand in the open; the game's end shows them all too
    if shown[-1]["event"] not in ("round_end", "game_end"):
        for seat, hand in enumerate(state.hands):
            if seat != game.seat:
                hidden |= set(hand)
    names = set()
    for tile in hidden:
        a, b = tile.split("-")
        names |= {f"{a}-{b}", f"{b}-{a}"}
    return names


def check_secret(response, game) -> dict:
    assert response.status_code == 200, response.text
    # The settlement's rounding rule reads "remainder 1-2 down, 3-4 up": not tiles. The
    # session id is random URL-safe text, which may hold "6-0" by chance: not a tile either.
    text = response.text.replace("remainder 1-2 down, 3-4 up", "")
    text = text.replace(response.json().get("session", "") or "", "")
    hidden = hidden_tiles(game)
    settled = game.events[: game.visible()][-1]["event"] == "round_end"
    # Only a game over, or a settlement after the boneyard ran dry, shows every tile.
    assert hidden or game.over or settled, "a game in play always hides some tiles"
    leaked = [tile for tile in hidden if f'{tile}' in text]
    assert not leaked, f"hidden tiles {leaked} in a response"
    return response.json()


def play_out(client, sessions, players: int, seat: int, target: int, seed: int) -> dict:
    chooser = random.Random(seed)
    response = client.post("/api/games", json={"players": players, "seat": seat,
                                               "opponents": "learned", "target": target,
                                               "seed": seed})
    view = response.json()
    game = sessions.get(view["session"])
    view = check_secret(response, game)
    steps = 0
    while view["phase"] != "over":
        steps += 1
        assert steps < 500
        url = f"/api/games/{view['session']}"
        if view["phase"] == "settled":
            assert len(view["settlement"]["hands"]) == players
            response = client.post(url + "/next", json={"version": view["version"]})
        else:
            assert view["options"], view
            move = chooser.choice(view["options"])["move"]
            response = client.post(url + "/move", json={"move": move,
                                                        "version": view["version"]})
        drawn = view["events"]
        view = check_secret(response, game)
        check_secret(client.get(f"{url}?since={drawn}"), game)  # a tab catching up
    return view


@pytest.mark.parametrize("players,seat,target", [(2, 0, 250), (3, 1, 200), (4, 2, 100)])
def test_whole_games_never_show_a_hidden_tile(served, players, seat, target):
    client, sessions = served
    view = play_out(client, sessions, players, seat, target, seed=11 + players)
    assert view["winner"] is not None
    assert max(view["scores"]) >= target
    trace = client.get(f"/api/games/{view['session']}/trace")
    assert trace.status_code == 200
    events = [json.loads(line) for line in trace.text.splitlines()]
    assert events[0]["event"] == "game_start" and events[-1]["event"] == "game_end"


def test_the_game_is_the_engine_game_with_the_same_moves(served):
    """The batch is deterministic: the same seed and moves give the same events, and the
    bots' part is the engine's (tests/sim/serve/test_table.py compares with sniff trace)."""
    client, sessions = served
    view = play_out(client, sessions, 2, 0, 60, seed=5)
    game = sessions.get(view["session"])
    from sim.serve.game import WebGame

    again = WebGame(2, 0, game.opponents, 5, 60)
    for move in game.moves:
        while again.settling() is not None:
            again.acknowledge(again.version)
        again.play(move, again.version)
    assert again.events == game.events


def test_two_tabs_keep_their_own_games(served):
    client, _ = served
    one = client.post("/api/games", json={"seed": 1, "target": 50}).json()
    two = client.post("/api/games", json={"seed": 2, "target": 50}).json()
    assert one["session"] != two["session"]
    while not one["options"] and one["phase"] == "settled":
        one = client.post(f"/api/games/{one['session']}/next",
                          json={"version": one["version"]}).json()
    if one["options"]:
        client.post(f"/api/games/{one['session']}/move",
                    json={"move": one["options"][0]["move"], "version": one["version"]})
    assert client.get(f"/api/games/{two['session']}").json()["hand"] == two["hand"]


def test_sessions_expire():
    now = [0.0]
    sessions = Sessions(ttl=10, clock=lambda: now[0])
    with client_of(sessions) as client:
        session = client.post("/api/games", json={"seed": 3}).json()["session"]
        now[0] = 5
        assert client.get(f"/api/games/{session}").status_code == 200
        now[0] = 16
        response = client.get(f"/api/games/{session}")
        assert response.status_code == 404
        assert "expired" in response.json()["error"]


def test_hint_is_sniff_hints_analysis(served):
    from sim.hint.estimate import analyse
    from sim.hint.position import parse_position

    client, _ = served
    view = client.post("/api/games", json={"seed": 9, "target": 250}).json()
    while not view["options"]:
        view = client.post(f"/api/games/{view['session']}/next",
                           json={"version": view["version"]}).json()
    response = client.post(f"/api/games/{view['session']}/hint", json={"budget": 40})
    assert response.status_code == 200, response.text
    hint = response.json()
    assert {m["move"] for m in hint["moves"]} == {o["move"] for o in view["options"]}
    assert hint["best"] == hint["moves"][0]["move"]
    expected = analyse(parse_position(hint["position"]), 40, "greedy", 9)
    assert [m.move for m in expected.moves] == [m["move"] for m in hint["moves"]]
    assert expected.best.win.mean == pytest.approx(hint["moves"][0]["win"]["mean"])


@pytest.mark.parametrize("method,path,body,status", [
    ("get", "/api/games/nope", None, 404),
    ("post", "/api/games/nope/move", {"move": 1}, 404),
    ("post", "/api/games", "{not json", 400),
    ("post", "/api/games", "[1, 2]", 400),
    ("post", "/api/games", {"players": 5}, 400),
    ("post", "/api/games", {"players": 2, "seat": 7}, 400),
    ("post", "/api/games", {"opponents": "learned:@/etc/passwd"}, 400),
    ("post", "/api/games", {"opponents": "human"}, 400),
    ("post", "/api/games", {"target": 10_000}, 400),
    ("post", "/api/games", {"target": 7}, 400),
    ("post", "/api/games", {"target": 0}, 400),
    ("post", "/api/games", {"seat": -1}, 400),
    ("post", "/api/games", '{"seed": ' + "9" * 5001 + "}", 400),
    ("post", "/api/games", {"players": 2.5}, 400),
    ("post", "/api/replay?game=²", "", 400),
    ("post", "/api/replay?game=" + "9" * 5001, "", 400),
    ("post", "/api/position/hint", {"text": "players: 2", "budget": 100_000}, 400),
    ("post", "/api/games", "x" * (MAX_BODY + 1), 413),
])
def test_bad_requests_are_one_json_line(served, method, path, body, status):
    client, _ = served
    kwargs = {} if body is None else ({"json": body} if not isinstance(body, str)
                                      else {"content": body})
    response = getattr(client, method)(path, **kwargs)
    assert response.status_code == status, response.text
    message = response.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message


def test_illegal_moves_are_refused_and_change_nothing(served):
    client, sessions = served
    view = client.post("/api/games", json={"seed": 4}).json()
    url = f"/api/games/{view['session']}"
    legal = {o["move"] for o in view["options"]}
    illegal = next(m for m in range(112) if m not in legal)
    version = view["version"]
    for body in ({"move": illegal}, {"move": "1"}, {}, {"move": True}, {"move": 10**40}):
        response = client.post(url + "/move", json={"version": version, **body})
        assert response.status_code == 400, body
        assert "\n" not in response.json()["error"]
    message = client.post(url + "/move", json={"move": illegal, "version": version}).json()
    assert " on " in message["error"] and str(illegal) not in message["error"]
    assert still(client.get(url).json()) == still(view)
    assert client.get(url + "/trace").status_code == 409


def test_replay_steps_through_a_checked_trace(served, tmp_path):
    from sim.kernels.trace import trace_games

    client, _ = served
    events = trace_games(2, 4, ["greedy", "learned"], 2)
    text = "".join(json.dumps(event) + "\n" for event in events)
    response = client.post("/api/replay?game=1", content=text)
    assert response.status_code == 200, response.text
    replay = response.json()
    starts = [i for i, e in enumerate(events) if e["event"] == "game_start"]
    assert replay["games"] == 2 and len(replay["frames"]) == len(events) - starts[1]
    assert replay["frames"][-1]["scores"] == events[-1]["scores"]
    tampered = text.replace('"points": 5', '"points": 10', 1)
    for body, query in ((tampered, ""), ("{bad", ""), (text, "?game=2"), (text, "?game=x")):
        response = client.post("/api/replay" + query, content=body)
        assert response.status_code == 400, (query, response.text)
        assert "\n" not in response.json()["error"] and "/tmp" not in response.json()["error"]


POSITION = {"players": 2, "seat": 0, "leader": 0, "scores": [10, 20], "sizes": [6, 6],
            "boneyard": 14, "hand": ["3-4", "5-5", "0-0", "1-1", "6-6", "0-5"],
            "table": [["2-2", None], ["2-5", "R"]]}


def test_a_position_set_up_is_sniff_hints_text(served):
    from sim.hint.position import format_position, parse_position

    client, _ = served
    view = client.post("/api/position/write", json=POSITION).json()
    assert view["problem"] is None
    assert format_position(parse_position(view["text"])) == view["text"]
    assert "table: 2-2, 2-5 R" in view["text"] and view["moves"] == ["5-0 on R", "5-5 on R"]
    assert view["fits"]["5-6"] == ["R"] and "2-5" not in view["fits"]
    read = client.post("/api/position/read", json={"text": view["text"]}).json()
    assert read["text"] == view["text"] and read["draft"]["scores"] == [10, 20]
    hint = client.post("/api/position/hint", json={"text": view["text"], "budget": 30}).json()
    assert {m["name"] for m in hint["moves"]} == {"5-0 on R", "5-5 on R"}
    short = client.post("/api/position/write", json={**POSITION, "boneyard": 13}).json()
    assert "28" in short["problem"]
    for body in ({**POSITION, "table": [["2-3", None], ["5-6", "L"]]},
                 {**POSITION, "hand": ["9-9"]}, {**POSITION, "scores": "x"}):
        response = client.post("/api/position/write", json=body)
        assert response.status_code == 400 and "\n" not in response.json()["error"]
    response = client.post("/api/position/read", json={"text": "players: 7"})
    assert response.status_code == 400


def test_known_lacks_set_up_are_sniff_hints_lacks(served):
    """Seat 1 known to hold no 5 and no 6: the text's lacks line, read back the same, and
    the hint's view of the position carries them (the page's lacks boxes send these)."""
    from sim.hint.position import parse_position

    client, _ = served
    view = client.post("/api/position/write", json={**POSITION, "lacks": [[], [6, 5]]}).json()
    assert view["problem"] is None and view["draft"]["lacks"] == [[], [5, 6]]
    assert parse_position(view["text"]).lacks == (0, 1 << 5 | 1 << 6)
    read = client.post("/api/position/read", json={"text": view["text"]}).json()
    assert read["draft"]["lacks"] == [[], [5, 6]]
    for lacks in ([[7], []], [[]], "x", [[True], []]):
        response = client.post("/api/position/write", json={**POSITION, "lacks": lacks})
        assert response.status_code == 400 and "lacks" in response.json()["error"]


def still(view: dict) -> dict:
    """A view without its frames (an answer's ``recent``: the events it brought)."""
    return {key: value for key, value in view.items() if key != "recent"}


def first_move(client, view: dict) -> dict:
    """Past any settlement to a decision of the person."""
    while view["phase"] == "settled":
        view = client.post(f"/api/games/{view['session']}/next",
                           json={"version": view["version"]}).json()
    return view


def test_a_stale_or_repeated_move_is_refused_in_the_players_words(served):
    client, sessions = served
    view = first_move(client, client.post("/api/games", json={"seed": 6}).json())
    url = f"/api/games/{view['session']}"
    body = {"move": view["options"][0]["move"], "version": view["version"]}
    after = client.post(url + "/move", json=body)
    assert after.status_code == 200
    again = client.post(url + "/move", json=body)  # a double click: the same move again
    assert again.status_code == 409
    assert "earlier turn" in again.json()["error"]
    assert still(client.get(url).json()) == still(after.json())  # nothing played twice
    assert client.post(url + "/next", json={"version": view["version"]}).status_code == 409


def test_takeback_history_and_positions_show_only_the_persons_view(served):
    from sim.hint.position import parse_position

    client, sessions = served
    view = first_move(client, client.post("/api/games", json={"seed": 8, "target": 250}).json())
    game = sessions.get(view["session"])
    url = f"/api/games/{view['session']}"
    assert not view["can_take_back"]
    moved = client.post(url + "/move", json={"move": view["options"][-1]["move"],
                                             "version": view["version"]}).json()
    moved = first_move(client, moved)
    if moved["phase"] == "move":
        assert moved["can_take_back"]
        back = client.post(url + "/takeback", json={"version": moved["version"]})
        back_view = check_secret(back, game)
        assert back_view["hand"] == view["hand"] and back_view["options"] == view["options"]
        assert back_view["version"] > moved["version"]
    history = client.get(url + "/history")
    frames = check_secret(history, game)["frames"]
    assert len(frames) == game.visible() and frames[0]["line"]["kind"] == "game_start"
    assert all("hands" not in f for f in frames)  # your own hand only, as "hand"
    response = client.post(url + "/position", json={"event": len(frames) - 1})
    position = parse_position(check_secret(response, game)["text"])
    assert position.seat == game.seat
    assert {o["move"] for o in client.get(url).json()["options"]} == set(position.legal_moves())
    for event in (len(frames), -1):
        assert client.post(url + "/position", json={"event": event}).status_code == 400
    assert client.post(url + "/analysis", json={}).status_code == 400  # not over yet


def test_a_finished_game_is_analysed_and_its_last_round_settled(served):
    client, sessions = served
    view = play_out(client, sessions, 2, 0, 30, seed=2)
    assert view["settlement"] and len(view["settlement"]["hands"]) == 2  # the last round too
    assert view["banner"] and view["phase"] == "over"
    analysis = client.post(f"/api/games/{view['session']}/analysis", json={"budget": 10})
    assert analysis.status_code == 200, analysis.text
    result = analysis.json()
    rows = result["decisions"]
    game = sessions.get(view["session"])
    from sim.analyze.decisions import game_decisions
    from sim.analyze.settings import mark_of
    from sim.analyze.sources import GameRef

    # the person's decisions with a choice, each graded by sniff analyze's own rule
    expected = [item for item in game_decisions(GameRef("x", 0), game.events, 0)
                if item.seat == game.seat]
    assert [(r["round"], r["turn"]) for r in rows] == [(i.round, i.turn) for i in expected]
    assert rows and all(r["seat"] == game.seat and r["moves"] > 1 for r in rows)
    thresholds = tuple(result["thresholds"])
    for row in rows:
        assert row["grade"] == mark_of(row["loss_full"], row["loss_low"], thresholds).value
        assert row["mark"] == result["symbols"].get(row["grade"], "")
        assert row["win_best"] >= row["win_played"] and row["loss_full"] >= 0
        assert row["separated"] == (row["best"] != row["played"] and row["loss_low"] > 0)
        assert game.events[row["event"]]["event"] == "play"
        assert game.events[row["event"]]["seat"] == game.seat
    graded = sum(row["grade"] != "" for row in rows)
    assert sum(result["grades"].values()) == graded
    assert result["accuracy"] == pytest.approx(1 - graded / len(rows))
    assert result["summary"]["decisions"] == len(rows)
    assert result["budget"] == 10 and result["source"] == f"serve-seed{game.seed}.jsonl"


def test_a_replay_position_is_the_movers(served):
    from sim.hint.position import parse_position
    from sim.kernels.trace import trace_games

    client, _ = served
    events = trace_games(2, 4, ["greedy", "learned"], 1)
    text = "".join(json.dumps(event) + "\n" for event in events)
    index = next(i for i, e in enumerate(events) if e["event"] == "play") + 1
    mover = next(e["seat"] for e in events[index + 1:] if e["event"] == "play")
    response = client.post(f"/api/replay/position?game=0&event={index}", content=text)
    assert response.status_code == 200, response.text
    assert parse_position(response.json()["text"]).seat == mover


def test_hints_star_only_a_separated_best_and_clip_the_loss(served):
    client, _ = served
    view = first_move(client, client.post("/api/games", json={"seed": 9}).json())
    hint = client.post(f"/api/games/{view['session']}/hint", json={"budget": 20}).json()
    assert all(m["loss"]["low"] >= 0 for m in hint["moves"])
    if len(hint["moves"]) > 1:
        assert hint["separated"] == (hint["moves"][1]["loss"]["low"] > 0)
