"""Request limits: the query's length in characters, what counts as a blank query, and the body limit as plain
ASGI middleware (413 before the app sees a byte more than ``max_bytes``; 408 for a body that arrives too slowly).

A declared ``Content-Length`` over the limit is refused without reading the body; a chunked body is read up to
the limit, then refused. A body within the limit is buffered and replayed to the app unchanged.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

# The one query limit and blank test of every entry point (ask, the Python API, this server).
from evigate.signatures.query import MAX_QUERY_CHARS as MAX_QUERY_CHARS
from evigate.signatures.query import has_visible_text as has_visible_text

MAX_ESCAPED_CHAR_BYTES = 12
"""The most JSON bytes one character can take: ``\\ud83d\\ude00`` (a surrogate pair of ``\\u`` escapes)."""

MAX_BODY_BYTES = MAX_QUERY_CHARS * MAX_ESCAPED_CHAR_BYTES + 1024
"""The default body limit: a query of MAX_QUERY_CHARS characters fits however a client escapes it (plus the
locale and JSON punctuation), and a body is still bounded (48 KiB)."""

HEADER_TIMEOUT_S = 10.0
"""A request's headers must arrive within this long (evigate/serve/protocol.py)."""

MAX_CONNECTIONS = 256
"""Open connections at most, each one a file descriptor (evigate/serve/protocol.py)."""

BODY_READ_TIMEOUT_S = 30.0
"""A body must arrive within this long after its headers (a slow client cannot hold a connection and a buffer)."""

Scope = dict[str, Any]
Message = dict[str, Any]


class BodyLimitMiddleware:
    def __init__(self, app: Any, max_bytes: int, read_timeout_s: float = BODY_READ_TIMEOUT_S) -> None:
        self.app, self.max_bytes, self.read_timeout_s = app, max_bytes, read_timeout_s

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await _refuse(send, 413, _too_large(self.max_bytes))
            return
        chunks: list[bytes] = []
        size = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.read_timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - loop.time()))
            except TimeoutError:
                await _refuse(send, 408, f"the request body did not arrive within {self.read_timeout_s:g} s")
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _refuse(send, 413, _too_large(self.max_bytes))
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: the disconnect a streaming response waits for

        await self.app(scope, replay, send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _too_large(limit: int) -> str:
    return f"request body over the limit of {limit} bytes"


async def _refuse(send: Any, status: int, message: str) -> None:
    """The API's error shape, ``{"error": ...}``, and the connection closed (the rest of the body is not read)."""
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
               (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
