"""Running the async MCP SDK from evigate's synchronous tools: one-shot sessions and long-lived ones.

A `LiveSession` keeps one SDK session open on a private event-loop thread, so a stdio server is started once,
not once per call. Calls are serialised; any failure (a timeout, a broken pipe, a protocol error) closes the
session and the next call opens a new one. `run_async` runs a single coroutine to completion (for checks).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import anyio

from evigate.errors import ToolError
from evigate.tools.formatting import one_line

T = TypeVar("T")
GRACE_S = 5.0  # beyond the source's timeout, for the session to unwind before the caller gives up


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def tool_error(exc: BaseException, timeout_s: float) -> ToolError:
    """The ToolError a failed MCP operation is recorded as (exception groups reduced to their first cause)."""
    leaf = _leaf(exc)
    if isinstance(leaf, ToolError):
        return leaf
    if isinstance(leaf, TimeoutError | concurrent.futures.TimeoutError):
        return ToolError(f"MCP server did not answer within {timeout_s:g}s")
    return ToolError(f"MCP server failed: {type(leaf).__name__}: {one_line(str(leaf), 300)}")


def run_async(factory: Callable[[], Awaitable[T]], timeout_s: float) -> T:
    """Run a coroutine to completion on its own event loop and thread, failing after `timeout_s`."""
    outcome: dict[str, Any] = {}

    async def bounded() -> T:
        with anyio.fail_after(timeout_s):
            return await factory()

    def target() -> None:
        try:
            outcome["value"] = anyio.run(bounded)
        except BaseException as exc:  # handed to the calling thread
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="evigate-mcp-once", daemon=True)
    worker.start()
    worker.join(timeout_s + GRACE_S)
    if worker.is_alive():
        raise ToolError(f"MCP server did not answer within {timeout_s:g}s")
    if "error" in outcome:
        raise tool_error(outcome["error"], timeout_s) from None
    return outcome["value"]


Use = Callable[[Any], Awaitable[Any]]


class LiveSession:
    """One open MCP session, reused by every call until it fails or the process exits."""

    def __init__(self, opener: Callable[[], AbstractAsyncContextManager[Any]], timeout_s: float) -> None:
        self._opener = opener
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[tuple[Use, concurrent.futures.Future[Any]] | None] | None = None
        self.opened = 0
        atexit.register(self.close)

    def run(self, use: Use) -> Any:
        """`await use(session)` on the live session, opening it first if needed; ToolError on any failure."""
        with self._lock:
            loop = self._ensure_loop()
            if self._task is None or self._task.done():
                self._start(loop)
            done: concurrent.futures.Future[Any] = concurrent.futures.Future()
            assert self._queue is not None
            loop.call_soon_threadsafe(self._queue.put_nowait, (use, done))
            return self._wait(done)

    def close(self) -> None:
        """Close the session (the stdio server exits) and stop the loop thread."""
        loop, task = self._loop, self._task
        if loop is None or loop.is_closed():
            return
        if task is not None and not task.done() and self._queue is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._queue.put_nowait, None)
                asyncio.run_coroutine_threadsafe(asyncio.wait({task}, timeout=GRACE_S), loop).result(GRACE_S + 1)
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(loop.stop)
        self._loop = None

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="evigate-mcp", daemon=True).start()
            self._loop = loop
        return self._loop

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        def start() -> None:
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._serve(ready))

        loop.call_soon_threadsafe(start)
        self._wait(ready)
        self.opened += 1

    def _wait(self, future: concurrent.futures.Future[T]) -> T:
        try:
            return future.result(self.timeout_s + GRACE_S)
        except concurrent.futures.TimeoutError:
            self._abandon()
            raise ToolError(f"MCP server did not answer within {self.timeout_s:g}s") from None
        except BaseException as exc:
            raise tool_error(exc, self.timeout_s) from None

    def _abandon(self) -> None:
        """Cancel a session that stopped answering; the next call opens a new one."""
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
            self._task = None

    async def _serve(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            async with self._opener() as session:
                ready.set_result(None)
                while True:
                    assert self._queue is not None
                    item = await self._queue.get()
                    if item is None:
                        return
                    use, done = item
                    try:
                        with anyio.fail_after(self.timeout_s):
                            result = await use(session)
                    except Exception as exc:
                        done.set_exception(exc)
                        return  # the session may be broken: close it, the next call reopens
                    done.set_result(result)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
