"""uvicorn's h11 protocol with what it lacks against slow clients: a deadline for a request's headers, and a cap
on open connections that sheds the connections stalling longest instead of refusing new ones.

uvicorn bounds the idle time *between* requests (``timeout_keep_alive``) and the size of incomplete headers
(``h11_max_incomplete_event_size``), but not the *time* a connection may take to send them: a client that sends a
byte every few seconds holds a connection, a task and a file descriptor forever, and a few hundred such clients
exhaust the descriptors (EMFILE) while legitimate requests wait. ``limit_concurrency`` does not help: it answers
503 to everyone once the stalled connections fill it. Here:

- a connection must complete each request's headers within ``header_timeout_s`` of its first byte (or of
  connecting); past it the server answers 408 in the API's ``{"error"}`` shape and closes the connection;
- at ``max_connections`` open connections, a new one evicts the connection that has waited longest for its
  headers (a stalling client, never a request being served); if every connection is serving a request, the new
  one gets 503 and is closed at once. Open descriptors stay bounded and a legitimate request still gets in.

The body is bounded in time by :class:`evigate.serve.limits.BodyLimitMiddleware` (408 after
``body_read_timeout_s``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from evigate.serve.limits import HEADER_TIMEOUT_S, MAX_CONNECTIONS


def _raw_error(status: int, reason: str, message: str) -> bytes:
    """A whole HTTP/1.1 error response, for connections whose request never parsed (h11 cannot answer those)."""
    body = json.dumps({"error": message}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n")
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """:class:`H11Protocol` with a header deadline and a connection cap (subclass via :func:`guarded_protocol`)."""

    header_timeout_s: float = HEADER_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None
        self.waiting_since: float | None = None  # loop time the current request's headers started to be awaited

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._evict_a_staller():
            self.transport.write(_raw_error(503, "Service Unavailable", "too many open connections; retry later"))
            self.transport.close()
            return
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        if self._header_timer is None and self.conn.their_state is h11.IDLE:
            self._await_headers()  # the next request on a kept-alive connection: a new deadline
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
            self._headers_arrived()

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_arrived()
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        """A request h11 cannot parse: 400 in the API's error shape (uvicorn answers plain text), then close."""
        self._headers_arrived()
        self.transport.write(_raw_error(400, "Bad Request", msg))
        self.transport.close()

    def _await_headers(self) -> None:
        self.waiting_since = self.loop.time()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _headers_arrived(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer, self.waiting_since = None, None

    def _headers_too_slow(self) -> None:
        self._header_timer, self.waiting_since = None, None
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            message = f"the request headers did not arrive within {self.header_timeout_s:g} s"
            self.transport.write(_raw_error(408, "Request Timeout", message))
            self.transport.close()

    def _evict_a_staller(self) -> bool:
        """Close the other connection that has waited longest for its request's headers; False if there is none."""
        stalled = [c for c in self.connections if c is not self and getattr(c, "waiting_since", None) is not None]
        if not stalled:
            return False
        oldest = min(stalled, key=lambda connection: connection.waiting_since)
        oldest._headers_arrived()
        oldest.transport.write(_raw_error(503, "Service Unavailable", "connection shed: headers too slow"))
        oldest.transport.close()
        self.connections.discard(oldest)  # its connection_lost comes later; the cap counts it gone now
        return True


def guarded_protocol(header_timeout_s: float = HEADER_TIMEOUT_S,
                     max_connections: int = MAX_CONNECTIONS) -> type[GuardedH11Protocol]:
    """The protocol class to give uvicorn (``Config(http=...)``) with these limits."""
    if header_timeout_s <= 0 or max_connections < 1:
        raise ValueError("header_timeout_s must be > 0 and max_connections ≥ 1")
    return type("GuardedH11Protocol", (GuardedH11Protocol,),
                {"header_timeout_s": header_timeout_s, "max_connections": max_connections})
