"""``sniff serve`` is safe by default on localhost: only its own Host, no state changed from
another origin or without the page's token, security headers on every answer, a rate limit
per client, a hint's budget capped, and a client that disconnects one quiet log line."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from sim.serve.app import MAX_HINT_BUDGET, create_app  # noqa: E402
from sim.serve.guard import TOKEN_HEADER, Guard, allowed_hosts, host_allowed  # noqa: E402
from sim.serve.sessions import Sessions  # noqa: E402

FAST = {"players": 2, "seed": 3, "opponents": "greedy", "target": 50}


def served(guard: Guard | None = None) -> tuple[TestClient, Sessions, Guard]:
    guard = guard or Guard(("testserver",))
    sessions = Sessions()
    client = TestClient(create_app(sessions, guard), raise_server_exceptions=False)
    return client, sessions, guard


def one_line(response) -> str:
    message = response.json()["error"]
    assert message and "\n" not in message and "Traceback" not in message
    return message


def test_only_the_bound_host_and_port_are_served():
    assert host_allowed("127.0.0.1:8737", allowed_hosts("127.0.0.1", 8737))
    assert host_allowed("localhost:8737", allowed_hosts("127.0.0.1", 8737))
    for bad in ("evil.example:8737", "127.0.0.1:9999", "evil.example", "127.0.0.1"):
        assert not host_allowed(bad, allowed_hosts("127.0.0.1", 8737)), bad
    wildcard = allowed_hosts("0.0.0.0", 8000)
    assert host_allowed("192.168.1.5:8000", wildcard) and host_allowed("[fe80::1]:8000", wildcard)
    assert not host_allowed("rebound.example:8000", wildcard)
    assert not host_allowed("192.168.1.5:8001", wildcard)
    client, sessions, guard = served()
    for method, path in (("get", "/"), ("get", "/api/strategies"), ("post", "/api/games")):
        response = getattr(client, method)(path, headers={"host": "evil.example",
                                                          TOKEN_HEADER: guard.token})
        assert response.status_code == 421 and "evil.example" in one_line(response)
    assert len(sessions) == 0
    assert client.get("/").status_code == 200


def test_no_state_changes_from_another_origin_or_without_the_token():
    client, sessions, guard = served()
    page = client.get("/").text
    assert f'content="{guard.token}"' in page  # the page, and only it, carries the token
    text_plain = {"content-type": "text/plain", "origin": "http://evil.example"}
    for headers in (text_plain, {**text_plain, TOKEN_HEADER: guard.token}, {},
                    {TOKEN_HEADER: "guessed"}, {TOKEN_HEADER: guard.token, "origin": "null"}):
        response = client.post("/api/games", content=json.dumps(FAST), headers=headers)
        assert response.status_code == 403, headers
        one_line(response)
    assert len(sessions) == 0
    same = {TOKEN_HEADER: guard.token, "origin": "http://testserver"}
    response = client.post("/api/games", json=FAST, headers=same)
    assert response.status_code == 200, response.text
    assert len(sessions) == 1
    session = response.json()["session"]
    for path in ("/move", "/next", "/hint"):  # every state-changing route is guarded
        response = client.post(f"/api/games/{session}{path}", json={},
                               headers={"origin": "http://evil.example"})
        assert response.status_code == 403


def test_a_token_of_other_bytes_than_ascii_is_a_403():
    """#63: a token header holding bytes past ASCII (latin-1 text) made
    ``secrets.compare_digest`` raise TypeError: a 500 and a traceback in the log."""
    client, sessions, guard = served()
    for token in ("caf\u00e9".encode("latin-1"), b"\xff" * 32, guard.token.encode() + b"\xe9"):
        response = client.post("/api/games", json=FAST, headers=[(TOKEN_HEADER.encode(), token)])
        assert response.status_code == 403 and "token" in one_line(response)
    assert len(sessions) == 0


def test_security_headers_on_every_answer():
    client, _, _ = served()
    for response in (client.get("/"), client.get("/static/app.js"),
                     client.get("/api/strategies"), client.get("/api/games/none"),
                     client.get("/", headers={"host": "evil.example"})):
        csp = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
        assert "unsafe-inline" not in csp
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_requests_are_limited_per_client_whatever_session_they_name():
    """#63: the limit was keyed by the session id in the path, so a client naming a new
    random id in each request was never limited."""
    client, _, guard = served(Guard(("testserver",), rate=0.001, burst=4))
    headers = {TOKEN_HEADER: guard.token}
    one = client.post("/api/games", json=FAST, headers=headers).json()["session"]
    answers = [client.get(f"/api/games/{one}").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]  # with the POST, a burst of 4
    for made_up in ("a1", "b2", "c3"):  # another id each time: the same client's bucket
        response = client.get(f"/api/games/{made_up}")
        assert response.status_code == 429 and "too many requests" in one_line(response)
    other = TestClient(client.app, raise_server_exceptions=False, client=("10.0.0.2", 5000))
    assert other.get(f"/api/games/{one}").status_code == 200  # another client is not starved


def test_a_hints_budget_is_capped_by_the_server():
    client, _, guard = served()
    headers = {TOKEN_HEADER: guard.token}
    view = client.post("/api/games", json=FAST, headers=headers).json()
    for budget in (MAX_HINT_BUDGET + 1, 100_000):
        response = client.post(f"/api/games/{view['session']}/hint", json={"budget": budget},
                               headers=headers)
        assert response.status_code == 400 and f"{MAX_HINT_BUDGET:,}" in one_line(response)


def test_a_client_that_disconnects_is_one_quiet_log_line(caplog):
    guard = Guard(("testserver",))
    app = create_app(Sessions(), guard)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "POST", "scheme": "http", "path": "/api/games", "raw_path": b"/api/games",
             "query_string": b"", "root_path": "", "client": ("127.0.0.1", 5000),
             "server": ("testserver", 80),
             "headers": [(b"host", b"testserver"), (TOKEN_HEADER.encode(), guard.token.encode()),
                         (b"content-type", b"application/json")]}
    sent = []

    async def receive():
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    with caplog.at_level(logging.DEBUG):
        asyncio.run(app(scope, receive, send))
    records = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(records) == 1 and "left before" in records[0].getMessage()
    assert records[0].exc_info is None
    assert sent[0]["status"] == 400
