"""Games by session id, each charged to the client that started it; idle games expire.

Why a store of its own: several tabs (or people) play at once, each with its own game, and
a server left running must not grow without bound. Why per client: with one limit for the
whole server, anyone could start games until a game in progress elsewhere was pushed out.
Here a client (the page's browser session, by its ``sniff-client`` cookie; a script
without the cookie, by its address) keeps at most ``per_client`` games, and only its own
least recently used game makes room for its next one. The server keeps at most ``limit``
games: past it a new game is refused (:class:`ServerFull`, a 503) and no game is evicted.
Every game is dropped ``ttl`` seconds after its last request. A game is small (a one-game
batch and the copies kept for takebacks, ``sim.serve.game``).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from sim.errors import SniffError
from sim.serve.game import WebGame

__all__ = ["Sessions"]

DEFAULT_TTL = 3600.0  # seconds a game is kept after its last request
DEFAULT_PER_CLIENT = 20  # games one client keeps at once (its oldest makes room)
DEFAULT_LIMIT = 1000  # games the server keeps at once (past it, new games are refused)


class UnknownSession(SniffError):
    """No game has this id (never made, or expired)."""


class ServerFull(SniffError):
    """The server keeps as many games as it may; none is evicted for a new one."""


@dataclass
class Entry:
    game: WebGame
    owner: str
    used: float


class Sessions:
    """Games by session id, with owners and expiry; thread-safe (Starlette runs handlers in
    threads). The dict's order is the order of last use, oldest first."""

    def __init__(self, ttl: float = DEFAULT_TTL, limit: int = DEFAULT_LIMIT,
                 clock: Callable[[], float] = time.monotonic,
                 per_client: int = DEFAULT_PER_CLIENT) -> None:
        self.ttl, self.limit, self.per_client, self.clock = ttl, limit, per_client, clock
        self._games: OrderedDict[str, Entry] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, game: WebGame, owner: str = "") -> str:
        """Keep ``game`` for ``owner``; return its new session id. The owner's least recently
        used games go first past ``per_client``; past ``limit``, :class:`ServerFull`."""
        with self._lock:
            self._expire()
            mine = [session for session, entry in self._games.items() if entry.owner == owner]
            while mine and len(mine) >= self.per_client:
                del self._games[mine.pop(0)]
            if len(self._games) >= self.limit:
                raise ServerFull(f"the server keeps {self.limit} games at once, all in use by "
                                 "other players; try again when one has been idle an hour")
            session = secrets.token_urlsafe(16)
            self._games[session] = Entry(game, owner, self.clock())
        return session

    def get(self, session: str) -> WebGame:
        """The game of ``session`` (its clock restarted), or :class:`UnknownSession`."""
        with self._lock:
            self._expire()
            entry = self._games.pop(session, None)
            if entry is None:
                raise UnknownSession("unknown or expired game session; start a new game")
            entry.used = self.clock()
            self._games[session] = entry
            return entry.game

    def owned(self, owner: str) -> int:
        """How many games ``owner`` keeps now."""
        with self._lock:
            self._expire()
            return sum(entry.owner == owner for entry in self._games.values())

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        while self._games:
            session, entry = next(iter(self._games.items()))
            if now - entry.used <= self.ttl:
                break
            del self._games[session]
