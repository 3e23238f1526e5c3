"""The ``serve`` surface: hostile requests to one ``sniff serve`` (bodies, sessions, new
games, positions)."""

from __future__ import annotations

import http.client
import json
import os
import time
from collections import Counter
from dataclasses import dataclass

from campaign_run import request
from outcomes import Case, Context

# ------------------------------------------------------------------ sniff serve


@dataclass(frozen=True)
class Asked:
    """How a serve case asks: its headers, the statuses that are a clean answer, whether it
    sends the page's token, its Host and Origin, whether it names a game, how many times."""

    headers: dict | None = None
    statuses: tuple = (400,)
    token: bool = True
    host: str | None = None
    origin: str | None = None
    game: bool = False
    repeat: int = 1


def serve_case(name: str, method: str, path: str, body: bytes | None = None,
               **options) -> Case:
    """A request (``{game}`` in ``path`` is a game of this server) and the statuses that
    are a clean answer (``options``: ``Asked``'s fields)."""
    asked = Asked(**options)
    headers, statuses, token, host, origin, game, repeat = (
        asked.headers, asked.statuses, asked.token, asked.host, asked.origin, asked.game,
        asked.repeat)

    def send(ctx: Context) -> tuple[str, str]:
        campaign = ctx.campaign
        address, port, secret = campaign.serve()
        before = campaign.serve_log().count("Traceback")
        given = {"Host": host if host is not None else f"{address}:{port}"}
        if token:
            given["x-sniff-token"] = secret
        if origin:
            given["Origin"] = origin
        if body is not None:
            given.setdefault("Content-Type", "application/json")
        given.update(headers or {})
        target = path
        if game or "{game}" in path:
            target = path.replace("{game}", campaign.game_id(ctx))
        seen = []
        try:
            for _ in range(repeat):
                status, _, text = request(address, port, method, target.replace(
                    "{random}", os.urandom(8).hex()), body, given, timeout=20)
                seen.append(status)
        except TimeoutError:
            return "hang", "no answer in 20 s"
        except (ConnectionError, http.client.HTTPException) as error:
            if campaign.server.poll() is not None:
                return "traceback", f"the server died: {error}"
            seen.append(f"closed: {type(error).__name__}")
        time.sleep(0.2)
        if campaign.serve_log().count("Traceback") > before:
            return "traceback", "a traceback in the server's log"
        if campaign.server.poll() is not None:
            return "traceback", "the server died"
        if 500 in seen:
            return "traceback", "a 500"
        last = seen[-1]
        if repeat > 1:
            return ("clean", f"{Counter(seen)}") if any(s in statuses for s in seen) else (
                "silently wrong", f"never {statuses}: {Counter(seen)}")
        if last in statuses:
            return "clean", f"{last}: {text[:100]}"
        return "silently wrong", f"{last} where {statuses} was expected: {text[:100]}"
    return Case("serve", name, send)


def _new_game(**fields) -> bytes:
    """A request body for a new game, ``fields`` replaced."""
    return json.dumps({"players": 2, "seat": 0, "opponents": ["greedy"], "target": 250,
                       **fields}).encode()


def _serve_new_game_cases() -> list[Case]:
    """Requests that open a game: the Host, Origin and token checks, the body's size and
    shape, the new game's settings."""
    new, game = _new_game(), _new_game
    nested = ("[" * 30_000 + "]" * 30_000).encode()
    return [
        serve_case("Host of another site", "GET", "/api/strategies", host="evil.example:80",
                   statuses=(421,)),
        serve_case("no Host header", "GET", "/api/strategies", host="", statuses=(400, 421)),
        serve_case("Origin of another site", "POST", "/api/games", new,
                   origin="http://evil.example", statuses=(403,)),
        serve_case("no token", "POST", "/api/games", new, token=False, statuses=(403,)),
        serve_case("a non-ASCII token", "POST", "/api/games", new, token=False,
                   headers={"x-sniff-token": "t\u00f6k\u00e9n".encode().decode("latin-1")},
                   statuses=(403,)),
        serve_case("a body of 10 MB", "POST", "/api/games", b"{" + b" " * 10_000_000 + b"}",
                   statuses=(413,)),
        serve_case("Content-Length 10**12, a small body", "POST", "/api/games", b"{}",
                   headers={"Content-Length": str(10**12)}, statuses=(413, 400)),
        serve_case("Content-Length not a number", "POST", "/api/games", b"{}",
                   headers={"Content-Length": "abc"}, statuses=(400, 413)),
        serve_case("bad JSON", "POST", "/api/games", b"{", statuses=(400,)),
        serve_case("JSON nested 30,000 deep", "POST", "/api/games", nested, statuses=(400,)),
        serve_case("JSON not an object", "POST", "/api/games", b"[1, 2]", statuses=(400,)),
        serve_case("players 1e999", "POST", "/api/games", b'{"players": 1e999, "seat": 0, '
                   b'"opponents": ["greedy"], "target": 250}', statuses=(400,)),
        serve_case("players as a string", "POST", "/api/games", game(players="2"),
                   statuses=(400, 200)),
        serve_case("seed 2**80", "POST", "/api/games", game(seed=2**80), statuses=(400,)),
        serve_case("seed -1", "POST", "/api/games", game(seed=-1), statuses=(400,)),
        serve_case("target 10**30", "POST", "/api/games", game(target=10**30), statuses=(400,)),
        serve_case("7,000 opponents", "POST", "/api/games", game(opponents=["greedy"] * 7000),
                   statuses=(400, 413)),
        serve_case("500 opponents", "POST", "/api/games", game(opponents=["greedy"] * 500),
                   statuses=(400,)),
        serve_case("an opponent reading a file", "POST", "/api/games",
                   game(opponents=["defensive:@/etc/passwd"]), statuses=(400,)),
        serve_case("a NUL in a name", "POST", "/api/games", game(opponents=["gre\u0000edy"]),
                   statuses=(400,)),
    ]


def _serve_session_cases() -> list[Case]:
    """Requests to the static files, a game in progress, replays and positions, and many
    headers or requests."""
    return [
        serve_case("a path out of static", "GET", "/static/../../../../etc/passwd",
                   statuses=(404, 400)),
        serve_case("an encoded path out of static", "GET", "/static/%2e%2e/%2e%2e/app.py",
                   statuses=(404, 400)),
        serve_case("a session id of 8,000 characters", "GET", "/api/games/" + "a" * 8000,
                   statuses=(404, 400, 414)),
        serve_case("since=-1", "GET", "/api/games/{game}?since=-1", statuses=(400,)),
        serve_case("since=10**30", "GET", f"/api/games/{{game}}?since={10**30}",
                   statuses=(400, 200)),
        serve_case("since=abc", "GET", "/api/games/{game}?since=abc", statuses=(400,)),
        serve_case("a move of 10**30", "POST", "/api/games/{game}/move",
                   json.dumps({"move": 10**30, "version": 0}).encode(), statuses=(400, 409)),
        serve_case("a move as a list", "POST", "/api/games/{game}/move",
                   json.dumps({"move": [1], "version": "x"}).encode(), statuses=(400, 409)),
        serve_case("a hint of 10**9 play-outs", "POST", "/api/games/{game}/hint",
                   json.dumps({"budget": 10**9}).encode(), statuses=(400,)),
        serve_case("a hint budget NaN", "POST", "/api/games/{game}/hint",
                   b'{"budget": NaN}', statuses=(400,)),
        serve_case("position at event 10**20", "POST", "/api/games/{game}/position",
                   json.dumps({"event": 10**20}).encode(), statuses=(400, 404)),
        serve_case("a replay of a trace that is not one", "POST", "/api/replay?game=0",
                   b"\x00\xff" * 1000, statuses=(400,)),
        serve_case("a replay of a trace nested deep", "POST", "/api/replay?game=0",
                   b"[" * 100_000 + b"\n", statuses=(400,)),
        serve_case("a replay of game 10**20", "POST", f"/api/replay?game={10**20}",
                   b'{"event": "game_start"}\n', statuses=(400, 404)),
        serve_case("a position to read that is binary", "POST", "/api/position/read",
                   json.dumps({"text": "\u0000\ud7ff" * 1000}).encode(), statuses=(400,)),
        serve_case("a position hint of 10**9 play-outs", "POST", "/api/position/hint",
                   json.dumps({"text": "x", "budget": 10**9}).encode(), statuses=(400,)),
        serve_case("a draft position of junk", "POST", "/api/position/write",
                   json.dumps({"hand": "x" * 1000, "table": [[10**20, "Q"]]}).encode(),
                   statuses=(400,)),
        serve_case("200 headers", "GET", "/api/strategies",
                   headers={f"x-h{i}": "v" * 50 for i in range(200)}, statuses=(200, 400, 431)),
        serve_case("a header of 100 KB", "GET", "/api/strategies",
                   headers={"x-big": "v" * 100_000}, statuses=(200, 400, 431)),
        serve_case("300 requests naming random sessions", "GET", "/api/games/{random}",
                   statuses=(429,), repeat=300),
    ]


def serve_cases() -> list[Case]:
    return [*_serve_new_game_cases(), *_serve_session_cases()]
