"""What keeps ``sniff serve`` safe on localhost: the Host and same-origin checks, the
per-server token, the rate limit and the security headers, as one ASGI middleware.

Why each:
- **Host**: a page on another site can make its own name resolve to 127.0.0.1 (DNS
  rebinding) and then talk to the server as if it were that site. Only the bound host and
  port (and, on a loopback or wildcard address, an IP literal or ``localhost`` with that
  port, which no rebinding can produce) are served; anything else is 421.
- **Origin and token**: a cross-origin form or ``fetch`` can send a POST without reading the
  answer. Every request that changes state (any method but GET and HEAD) must carry the
  per-server token (header ``x-sniff-token``) that only the page of this server gets (it is
  written into ``index.html``, which another origin cannot read), and an ``Origin``, when
  the browser sends one, must be this server's. A custom header also forces the browser's
  CORS preflight, which this server never answers. Otherwise 403.
- **Rate**: a token bucket per client address (not per session id, which a client could
  make up for each request): a runaway page or script on another machine cannot starve
  this one's. Over it: 429.
- **Headers**: CSP (scripts, styles, connections only from this server; no framing),
  ``X-Frame-Options: DENY``, ``nosniff``, no referrer.
Each refusal is one JSON line ``{"error": ...}``, as every other error of the API.
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["allowed_hosts", "Guard", "TOKEN_HEADER"]

TOKEN_HEADER = "x-sniff-token"
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'")
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)
MAX_BUCKETS = 10_000  # rate-limit buckets kept (the least recently used go first)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


def allowed_hosts(host: str, port: int | None) -> tuple[str, ...]:
    """The Host headers a server bound to ``host``:``port`` answers (see the module's Host)."""
    suffix = "" if port is None else f":{port}"
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    hosts = [shown + suffix]
    loopback = _is_ip(host) and ipaddress.ip_address(host.strip("[]")).is_loopback
    if loopback or host in ("0.0.0.0", "::", "[::]"):
        hosts += [f"localhost{suffix}", f"127.0.0.1{suffix}", f"[::1]{suffix}"]
    if host in ("0.0.0.0", "::", "[::]"):
        hosts.append(f"*{suffix}")  # any IP literal with this port (no name can rebind it)
    return tuple(hosts)


def host_allowed(header: str, hosts: tuple[str, ...]) -> bool:
    """Whether a Host header names this server (``hosts`` from :func:`allowed_hosts`)."""
    header = header.strip().lower()
    if header in hosts:
        return True
    for allowed in hosts:
        if allowed.startswith("*"):
            name, _, port = header.rpartition(":")
            if ":" + port == allowed[1:] and _is_ip(name):
                return True
    return False


@dataclass(frozen=True)
class Guard:
    """The checks' settings: the Host headers served, the page's token, the rate limit
    (``rate`` requests a second with bursts of ``burst``, per client).

    Attributes:
        hosts: the Host headers served.
        token: the page's token.
        rate: requests a second, per client.
        burst: the burst a client may make.
    """

    hosts: tuple[str, ...]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    rate: float = 20.0
    burst: int = 60


class Buckets:
    """Token buckets by key, thread-safe; the oldest keys are forgotten past MAX_BUCKETS."""

    def __init__(self, rate: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> bool:
        """Spend one request of ``key``'s bucket; False if it is empty."""
        now = self.clock()
        with self._lock:
            level, last = self._buckets.pop(key, (float(self.burst), now))
            level = min(float(self.burst), level + (now - last) * self.rate)
            allowed = level >= 1.0
            self._buckets[key] = (level - 1.0 if allowed else level, now)
            while len(self._buckets) > MAX_BUCKETS:
                self._buckets.popitem(last=False)
        return allowed


def _header(scope: dict, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _rate_key(scope: dict) -> str:
    """The client's address: not a session id from the path, which a client can make up
    anew for each request (a limit it would never meet)."""
    client = scope.get("client") or ("?", 0)
    return f"client:{client[0]}"


class GuardMiddleware:
    """The ASGI middleware applying a :class:`Guard` to every HTTP request."""

    def __init__(self, app, guard: Guard, clock: Callable[[], float] = time.monotonic) -> None:
        self.app, self.guard = app, guard
        self.buckets = Buckets(guard.rate, guard.burst, clock)

    def refusal(self, scope: dict) -> tuple[int, str] | None:
        """Why this request is refused (status, one line), or None."""
        host = _header(scope, b"host") or ""
        if not host_allowed(host, self.guard.hosts):
            return 421, f"this server answers only {self.guard.hosts[0]}, not host {host[:80]!r}"
        if scope["method"] not in SAFE_METHODS:
            origin = _header(scope, b"origin")
            if origin is not None and not (origin.lower().startswith("http://") and
                                           host_allowed(origin[7:], self.guard.hosts)):
                return 403, "a request from another site cannot change anything here"
            # as bytes: compare_digest refuses a str past ASCII (a TypeError, a 500)
            given = (_header(scope, TOKEN_HEADER.encode()) or "").encode("latin-1")
            if not secrets.compare_digest(given, self.guard.token.encode()):
                return 403, "this request lacks the page's token: reload the page"
        if scope["path"].startswith("/api/") and not self.buckets.take(_rate_key(scope)):
            return 429, "too many requests: wait a moment"
        return None

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *HEADERS]}
            await send(message)

        refused = self.refusal(scope)
        if refused is None:
            await self.app(scope, receive, send_with_headers)
            return
        status, text = refused
        body = json.dumps({"error": text}).encode()
        await send_with_headers({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send_with_headers({"type": "http.response.body", "body": body})
