"""Who may talk to the studio: every request must come to the loopback address by its own name (the Host check
that stops DNS rebinding), carry the session's token (in the page's URL, then in a header), and, when it changes
anything, come from the studio's own page (Origin, a JSON body, the token header: a form or a page of another
origin can send none of these without a CORS preflight, which is never answered). An ASGI middleware, ahead of
every route; what it refuses is answered with a short text that never repeats the token."""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The header every API request carries the token in.
TOKEN_HEADER = "x-botbin-token"
#: The query parameter of the page's URL that carries the token.
TOKEN_PARAM = "token"
#: Bytes of randomness in a token (URL-safe base64: 43 characters).
TOKEN_BYTES = 32
#: Headers on every answer: no script but the page's own, no framing, no referrer, nothing cached.
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def new_token() -> str:
    """A fresh random token for one studio session."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def is_loopback(host: str) -> bool:
    """True for a loopback address (``127.0.0.1``, ``::1``, any of 127/8) or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Guard:
    """The checks of one studio session, bound to 127.0.0.1:``port``."""

    token: str
    """The session's secret."""
    port: int
    """The port the studio listens on."""

    @property
    def origins(self) -> frozenset[str]:
        """The page's own origins."""
        return frozenset({f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"})

    @property
    def hosts(self) -> frozenset[str]:
        """The Host headers a request may carry: the loopback address or ``localhost``, with the port."""
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    def token_ok(self, given: str | None) -> bool:
        """True when ``given`` is the token (compared in constant time)."""
        return given is not None and hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8"))

    def refusal(self, method: str, path: str, headers: dict[str, str], query: str) -> tuple[int, str] | None:
        """Why a request must be refused, as (HTTP status, reason), or None when it may go on."""
        if headers.get("host") not in self.hosts:
            return 421, "this studio answers only at its own address (127.0.0.1 with its port)"
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, "requests from other origins are refused"
        page = method in ("GET", "HEAD") and path == "/"
        # the page itself may be opened from anywhere (a link, the redirect file serve.py opens): it needs the token
        if not page and headers.get("sec-fetch-site", "same-origin") != "same-origin":
            return 403, "requests from other sites are refused"
        given = parse_qs(query).get(TOKEN_PARAM, [None])[0] if page else headers.get(TOKEN_HEADER)
        if not self.token_ok(given):
            return 401, "a valid studio token is needed (open the URL `botbin studio` printed)"
        if method not in ("GET", "HEAD", "POST"):
            return 405, "method not allowed"
        if method == "POST" and not headers.get("content-type", "").startswith("application/json"):
            return 415, "a JSON body is needed"
        return None


def guarded(app: ASGIApp, guard: Guard) -> ASGIApp:
    """``app`` behind ``guard``, with SECURITY_HEADERS on every answer. Requests are logged by method and path only
    (never the query, which holds the page's token)."""

    async def run(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan events
            await app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        query = scope.get("query_string", b"").decode("latin-1")
        refused = guard.refusal(scope["method"], scope["path"], headers, query)
        if refused is not None:
            log.info("refused %s %s: %s", scope["method"], scope["path"], refused[1])
            await _plain(send, *refused)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await app(scope, receive, send_with_headers)

    return run


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode("utf-8")
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
