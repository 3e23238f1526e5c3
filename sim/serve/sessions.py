"""Per-tab games: each new game gets an unguessable id, and idle games expire.

Why a store of its own: several tabs (or people) play at once, each with its own game, and
a server left running must not grow without bound. A session is small (a seed and a list
of moves, see ``sim.serve.game``), kept at most ``ttl`` seconds after its last use and at most
``limit`` at once (the least recently used goes first).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from sim.errors import SniffError
from sim.serve.game import WebGame

DEFAULT_TTL = 3600.0  # seconds a game is kept after its last request
DEFAULT_LIMIT = 200  # games kept at once


class UnknownSession(SniffError):
    """No game has this id (never made, or expired)."""


class Sessions:
    """Games by session id, with expiry; thread-safe (Starlette runs handlers in threads)."""

    def __init__(self, ttl: float = DEFAULT_TTL, limit: int = DEFAULT_LIMIT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.limit, self.clock = ttl, limit, clock
        self._games: OrderedDict[str, tuple[WebGame, float]] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, game: WebGame) -> str:
        """Keep ``game``; return its new session id."""
        session = secrets.token_urlsafe(16)
        with self._lock:
            self._expire()
            self._games[session] = (game, self.clock())
            while len(self._games) > self.limit:
                self._games.popitem(last=False)
        return session

    def get(self, session: str) -> WebGame:
        """The game of ``session`` (its clock restarted), or :class:`UnknownSession`."""
        with self._lock:
            self._expire()
            if session not in self._games:
                raise UnknownSession("unknown or expired game session; start a new game")
            game, _ = self._games.pop(session)
            self._games[session] = (game, self.clock())
            return game

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        while self._games:
            session, (_, used) = next(iter(self._games.items()))
            if now - used <= self.ttl:
                break
            del self._games[session]
