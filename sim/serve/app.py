"""The web app of ``sniff serve``: the page, its static files and a small JSON API.

Why Starlette: a few routes and static files need no more, and its TestClient lets the
tests play whole games through HTTP. Every failure is a 4xx (or, for a bug, a 500) with a
one-line JSON ``{"error": ...}``, never a traceback: a ``SniffError`` is the user's input
(400), an unknown session 404, a stale click 409, a body over ``MAX_BODY`` 413, a server
that keeps all the games it may 503.

API (all JSON): ``POST /api/games`` {players, seat, opponents, target, seed?} starts a game
(charged to the client, ``client_of``); ``GET /api/games/{id}?since=N`` its view, with a
frame per event from N on; ``POST /api/games/{id}/move`` {move, version} (a frame per event
from the move on); ``POST /api/games/{id}/next`` {version} after a settlement; ``POST
/api/games/{id}/hint`` {budget?};
``GET /api/games/{id}/trace`` the JSON Lines trace, once the game is over; ``POST
/api/games/{id}/takeback`` {version}; ``GET /api/games/{id}/history`` the move list's
frames; ``POST /api/games/{id}/position`` {event} the person's position there as text;
``POST /api/games/{id}/analysis`` {budget?} the finished game analysed as ``sniff analyze``
analyses its trace;
``GET /api/strategies`` the opponents one may choose; ``POST /api/replay?game=N`` (the body
a JSON Lines trace) the frames of one traced game (``/api/replay/position?game=N&event=K``
the position there); ``POST /api/position/write`` (a draft),
``/read`` {text} and ``/hint`` {text, budget?}: position setup in ``sniff hint``'s text.

Every request passes ``sim.serve.guard`` first (Host, same-origin proof, rate, headers); the
page gets the per-server token written into its ``index.html``.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from sim.analyze.settings import DEFAULT_BUDGET as ANALYZE_BUDGET
from sim.core import engine
from sim.core.checks import check_players, check_seed
from sim.core.seating import PLAYER_COUNTS
from sim.errors import SniffError
from sim.hint.estimate import MIN_BUDGET
from sim.serve.game import StaleMove, WebGame
from sim.serve.guard import Guard, GuardMiddleware, allowed_hosts
from sim.serve.hints import DEFAULT_BUDGET, game_hint, position_hint
from sim.serve.replay import MAX_TRACE, trace_frames, trace_position
from sim.serve.review import game_analysis, game_history, game_position, trace_name
from sim.serve.sessions import DEFAULT_TTL, ServerFull, Sessions, UnknownSession
from sim.serve.setup import draft_position, position_view, read_text
from sim.serve.views import game_view
from sim.table.play import new_seed
from strategies import available, parse_spec

__all__ = ["CLIENT_COOKIE", "create_app", "DEFAULT_OPPONENT"]

STATIC = Path(__file__).parent / "static"
MAX_BODY = 64 * 1024  # bytes of a request body: every real request is under 1 KiB
DEFAULT_OPPONENT = "learned"
DEFAULT_PORT = 8737
MAX_HINT_BUDGET = 5_000  # play-outs per move a hint may ask: a few seconds of the server
DEFAULT_ANALYSIS_BUDGET = ANALYZE_BUDGET  # play-outs per move of a finished game's analysis
LOG = logging.getLogger("sniff.serve")
CLIENT_COOKIE = "sniff-client"  # the browser session a game is charged to
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


class BadRequest(SniffError):
    """A request the API cannot take (its message goes back as the one line)."""


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": " ".join(str(message).split())}, status_code=status)


async def _read(request: Request, limit: int) -> bytes:
    """The request's body, refused (413) past ``limit`` bytes before more is read."""
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > limit):
        raise HTTPException(413, f"request body over {limit} bytes")
    data = b""
    async for chunk in request.stream():
        data += chunk
        if len(data) > limit:
            raise HTTPException(413, f"request body over {limit} bytes")
    return data


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object, read at most ``MAX_BODY`` bytes."""
    data = await _read(request, MAX_BODY)
    if not data.strip():
        return {}
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        raise BadRequest("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("the request body must be a JSON object")
    return body


def _int(body: dict, key: str, default: int | None = None) -> int:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or abs(value) >= 2**63:
        raise BadRequest(f"{key} must be a whole number")
    return value


def _query_int(request: Request, key: str) -> int:
    """A whole number from the query string (``?game=N``), 0 when absent."""
    value = request.query_params.get(key, "0")
    if not (value.isascii() and value.isdigit() and len(value) <= 9):
        raise BadRequest(f"{key} must be a whole number 0..999999999")
    return int(value)


def _budget(body: dict, default: int = DEFAULT_BUDGET) -> int:
    """A hint's play-outs per move, from ``MIN_BUDGET`` to the server's cap."""
    budget = _int(body, "budget", default)
    if not MIN_BUDGET <= budget <= MAX_HINT_BUDGET:
        raise BadRequest(f"play-outs must be {MIN_BUDGET}..{MAX_HINT_BUDGET:,} per move on "
                         f"this server, got {budget:,}")
    return budget


def _opponents(value: Any, players: int) -> list:
    """Plain strategy names only: a spec with ``:`` could name a file on the server."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
        raise BadRequest("opponents must be a strategy name or a list of them")
    known = available()
    for name in names:
        if name not in known or name == "human":
            raise BadRequest(f"unknown strategy {name!r}; available: {', '.join(known)}")
        if known[name].python:
            raise BadRequest(f"{name} is a Python player: the table plays compiled "
                             "strategies only")
    return [parse_spec(name) for name in names]


def _store(request: Request) -> Sessions:
    """The app's session store (``create_app`` puts it in the app's state)."""
    return request.app.state.sessions


def client_of(request: Request) -> str:
    """Who a game is charged to: the page's browser session (its ``sniff-client`` cookie),
    else the client's address (a script)."""
    cookie = request.cookies.get(CLIENT_COOKIE, "")
    if CLIENT_ID.fullmatch(cookie):
        return "browser:" + cookie
    return "address:" + (request.client.host if request.client else "?")


def _since(request: Request) -> int | None:
    """``?since=N``: the events the page has drawn (frames follow for the rest)."""
    if "since" not in request.query_params:
        return None
    return _query_int(request, "since")


def _session(request: Request) -> tuple[str, WebGame]:
    """The ``{session}`` of the path and its game (404 for an unknown or expired one)."""
    session = request.path_params["session"]
    return session, _store(request).get(session)


async def index(request: Request) -> Response:
    """The page, with the server's token written in (``create_app`` renders it once), and a
    browser-session cookie naming the client its games are charged to (``sim.serve.sessions``)."""
    response = Response(request.app.state.page, media_type="text/html",
                        headers={"cache-control": "no-store"})
    if not CLIENT_ID.fullmatch(request.cookies.get(CLIENT_COOKIE, "")):
        response.set_cookie(CLIENT_COOKIE, secrets.token_urlsafe(16), httponly=True,
                            samesite="strict", path="/")
    return response


async def favicon(request: Request) -> Response:
    """The tab's icon (a domino), also at the address browsers try first."""
    return Response((STATIC / "favicon.svg").read_bytes(), media_type="image/svg+xml",
                    headers={"cache-control": "max-age=86400"})


async def strategy_list(request: Request) -> Response:
    """The opponents one may choose (never ``human``) and each player count's target."""
    names = [name for name in available() if name != "human"]
    return JSONResponse({"strategies": names, "default": DEFAULT_OPPONENT,
                         "targets": {str(p): int(engine.TARGET_FOR_PLAYERS[p])
                                     for p in PLAYER_COUNTS}})


async def new_game(request: Request) -> Response:
    """A new game from {players, seat, opponents, target, seed?}, every field checked."""
    body = await _body(request)
    players = check_players(_int(body, "players", 2))
    seed = body.get("seed")
    seed = new_seed() if seed is None else check_seed(_int(body, "seed"))
    seat = _int(body, "seat", 0)
    if not 0 <= seat < players:
        raise BadRequest(f"seat must be 0..{players - 1} with {players} players, got {seat}")
    game = await run_in_threadpool(
        WebGame, players, seat,
        _opponents(body.get("opponents", DEFAULT_OPPONENT), players), seed,
        _int(body, "target", int(engine.TARGET_FOR_PLAYERS[players])))
    session = _store(request).add(game, client_of(request))
    return JSONResponse(game_view(session, game, 1))


async def show(request: Request) -> Response:
    """A game's view as its person sees it (``?since=N``: with a frame per event from N)."""
    session, game = _session(request)
    return JSONResponse(game_view(session, game, _since(request)))


async def move(request: Request) -> Response:
    """The person's move {move, version}; the opponents then play up to the next turn. The
    view has a frame per event from the move on (forced moves and the bots' included)."""
    session, game = _session(request)
    body = await _body(request)
    before = game.visible()
    await run_in_threadpool(game.play, _int(body, "move"), _int(body, "version"))
    return JSONResponse(game_view(session, game, before))


async def next_round(request: Request) -> Response:
    """The settlement acknowledged {version}: the next round starts (its frames follow)."""
    session, game = _session(request)
    body = await _body(request)
    before = game.visible()
    game.acknowledge(_int(body, "version"))
    return JSONResponse(game_view(session, game, before))


async def hint(request: Request) -> Response:
    """The search of every move of the person's turn {budget?}."""
    _, game = _session(request)
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(game_hint, game, _budget(body)))


async def take_back(request: Request) -> Response:
    """The person's last move taken back {version}."""
    session, game = _session(request)
    body = await _body(request)
    await run_in_threadpool(game.take_back, _int(body, "version"))
    return JSONResponse(game_view(session, game))


async def history(request: Request) -> Response:
    """The move list's frames."""
    _, game = _session(request)
    return JSONResponse(await run_in_threadpool(game_history, game))


async def game_position_route(request: Request) -> Response:
    """The person's position at {event}, as ``sniff hint``'s text."""
    _, game = _session(request)
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(game_position, game, _int(body, "event")))


async def analysis(request: Request) -> Response:
    """The finished game analysed {budget?}."""
    _, game = _session(request)
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(
        game_analysis, game, _budget(body, DEFAULT_ANALYSIS_BUDGET)))


async def trace(request: Request) -> Response:
    """The JSON Lines trace, once the game is over (before, it would show hidden tiles)."""
    _, game = _session(request)
    if not game.over:
        raise HTTPException(409, "the trace is sent once the game is over")
    text = "".join(json.dumps(event) + "\n" for event in game.events)
    return Response(text, media_type="application/x-ndjson", headers={
        "content-disposition": f'attachment; filename="{trace_name(game)}"'})


async def replay(request: Request) -> Response:
    """The frames of game ``?game=N`` of the trace in the body."""
    game = _query_int(request, "game")
    data = await _read(request, MAX_TRACE)
    return JSONResponse(await run_in_threadpool(trace_frames, data, game))


async def replay_position(request: Request) -> Response:
    """The position at ``?event=K`` of game ``?game=N`` of the trace in the body."""
    game, event = _query_int(request, "game"), _query_int(request, "event")
    data = await _read(request, MAX_TRACE)
    return JSONResponse(await run_in_threadpool(trace_position, data, game, event))


async def position_write(request: Request) -> Response:
    """A drafted position written as ``sniff hint``'s text."""
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(
        lambda: position_view(draft_position(body))))


async def position_read(request: Request) -> Response:
    """A position read from ``sniff hint``'s text {text}."""
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(read_text, body.get("text")))


async def position_hint_route(request: Request) -> Response:
    """The search of every move of a position given as text {text, budget?}."""
    body = await _body(request)
    return JSONResponse(await run_in_threadpool(
        position_hint, body.get("text"), _budget(body)))


async def disconnected(request: Request, error: ClientDisconnect) -> Response:
    """One quiet line: a closed tab or a cancelled upload is not the server's failure."""
    LOG.warning("sniff serve: the client left before its request was read (%s %s)",
                request.method, request.url.path)
    return _error(400, "the client disconnected")


async def http_error(request: Request, error: HTTPException) -> Response:
    """Starlette's own errors (404, 405, 413, 409) as the one-line JSON."""
    return _error(error.status_code, error.detail)


async def sniff_error(request: Request, error: SniffError) -> Response:
    """The user's input: 404 for an unknown session, 409 for a stale move, else 400."""
    status = (404 if isinstance(error, UnknownSession) else
              409 if isinstance(error, StaleMove) else
              503 if isinstance(error, ServerFull) else 400)
    return _error(status, str(error))


async def any_error(request: Request, error: Exception) -> Response:
    """A bug: a 500 that names the exception's type, never a traceback."""
    return _error(500, f"internal error ({type(error).__name__}); the game is unchanged")


GET, POST = ("GET",), ("POST",)
#: The API: path, handler, methods (the module docstring says what each one takes).
ROUTES = (
    ("/", index, GET),
    ("/favicon.ico", favicon, GET),
    ("/api/strategies", strategy_list, GET),
    ("/api/games", new_game, POST),
    ("/api/games/{session}", show, GET),
    ("/api/games/{session}/move", move, POST),
    ("/api/games/{session}/next", next_round, POST),
    ("/api/games/{session}/hint", hint, POST),
    ("/api/games/{session}/trace", trace, GET),
    ("/api/games/{session}/takeback", take_back, POST),
    ("/api/games/{session}/history", history, GET),
    ("/api/games/{session}/position", game_position_route, POST),
    ("/api/games/{session}/analysis", analysis, POST),
    ("/api/replay", replay, POST),
    ("/api/replay/position", replay_position, POST),
    ("/api/position/write", position_write, POST),
    ("/api/position/read", position_read, POST),
    ("/api/position/hint", position_hint_route, POST),
)
ERRORS: dict[Any, Callable[..., Awaitable[Response]]] = {
    HTTPException: http_error, SniffError: sniff_error, ClientDisconnect: disconnected,
    Exception: any_error}


def create_app(sessions: Sessions | None = None, guard: Guard | None = None) -> Starlette:
    """The app, with its own session store (tests pass one to look inside) and its guard
    (by default for 127.0.0.1 on the default port; ``sniff serve`` passes the bound one)."""
    store = sessions if sessions is not None else Sessions(DEFAULT_TTL)
    guard = guard if guard is not None else Guard(allowed_hosts("127.0.0.1", DEFAULT_PORT))
    routes: list[BaseRoute] = [Route(path, handler, methods=list(methods))
                               for path, handler, methods in ROUTES]
    routes.append(Mount("/static", StaticFiles(directory=STATIC), name="static"))
    app = Starlette(routes=routes, exception_handlers=ERRORS)
    app.add_middleware(GuardMiddleware, guard=guard)
    app.state.guard = guard
    app.state.sessions = store
    app.state.page = (STATIC / "index.html").read_text().replace("{{token}}", guard.token)
    return app
