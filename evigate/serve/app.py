"""The HTTP API: diagnoses (JSON or server-sent progress events), sessions' audit chains, health, OpenAPI.

    POST /v1/diagnoses {"query": "...", "locale": "zh"|"en"}      → 200 DiagnosisResult JSON
    POST /v1/diagnoses?stream=true  (or Accept: text/event-stream) → 200 text/event-stream:
         event: queued | session_started | stage_started | stage_finished | tool_call | result | error
    GET  /v1/sessions?verdict=&output_type=&status=&since=&until=&q=&limit=&offset= → sessions, newest first
    GET  /v1/sessions/{session_id}                                  → the audit chain (= `evigate show --json`)
    GET  /, /sessions, /sessions/{id}, /verify                      → the Trace Workbench (evigate/serve/pages.py)
    GET  /healthz                                                   → {"status": "ok", running, queued, capacity}
    GET  /docs, /openapi.json

Every error is JSON ``{"error": "..."}``: 400 (the body is not JSON), 401 (missing/wrong bearer token), 404
(unknown session or route), 405, 408 (the body came too slowly), 413 (body over the limit), 422 (invalid request: a
blank or invisible query, over 4,000 characters, an unknown field or locale), 503 (queue full or shutting down;
``Retry-After``), 500 (the program failed; the session is recorded as failed). A stream ends with an ``error``
event instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hmac
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from evigate.errors import EvigateError, SessionNotFoundError
from evigate.serve.docs import mount_docs
from evigate.serve.limits import (
    BODY_READ_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_QUERY_CHARS,
    BodyLimitMiddleware,
    has_visible_text,
)
from evigate.serve.pages import mount_pages
from evigate.serve.pool import DiagnosisPool, Job, PoolClosed, PoolFull
from evigate.serve.records import session_record
from evigate.serve.sessions_api import mount_sessions_api
from evigate.signatures import DiagnosisResult

SSE_KEEPALIVE_S = 15.0
RETRY_AFTER_S = 5


class DiagnosisRequest(BaseModel):
    """One incident question."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="the incident question")
    locale: Literal["zh", "en"] | None = Field(default=None, description="answer language (default: settings)")

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not has_visible_text(value):
            raise ValueError("query must not be blank (whitespace and invisible characters only)")
        return value


@dataclass(frozen=True)
class ServeOptions:
    token: str | None = None  # bearer token required on /v1/*; None = no auth (loopback only, checked by the CLI)
    max_body_bytes: int = MAX_BODY_BYTES  # fits a MAX_QUERY_CHARS query however it is escaped
    body_read_timeout_s: float = BODY_READ_TIMEOUT_S  # a body that takes longer to arrive gets 408
    shutdown_wait_s: float = 5.0  # after uvicorn's own graceful wait: last chance before marking interrupted
    # called with the ids of the sessions marked interrupted, after the pool shut down (the CLI closes stores)
    on_shutdown: Callable[[list[str]], None] | None = None


class _Refused(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def create_app(pool: DiagnosisPool, options: ServeOptions | None = None) -> FastAPI:
    """The FastAPI app over ``pool``; the pool is shut down (sessions finished or marked interrupted) on exit."""
    options = options or ServeOptions()

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        _settle_heap()
        yield
        interrupted = await asyncio.to_thread(pool.shutdown, options.shutdown_wait_s)
        if options.on_shutdown is not None:
            options.on_shutdown(interrupted)

    app = FastAPI(
        title="evigate",
        description="Incident answers that cannot show an unproven sentence. Every answer has an audit chain.",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # served below from the installed swagger-ui-bundle: nothing is fetched from a CDN
        redoc_url=None,
    )
    mount_docs(app)
    app.add_middleware(
        BodyLimitMiddleware, max_bytes=options.max_body_bytes, read_timeout_s=options.body_read_timeout_s
    )
    bearer = HTTPBearer(auto_error=False)

    def authorize(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> None:
        if options.token is None:
            return
        given = credentials.credentials if credentials is not None else ""
        if not hmac.compare_digest(given.encode(), options.token.encode()):
            raise _Refused(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})

    _error_handlers(app)
    _api_routes(app, pool, authorize)
    mount_sessions_api(app, lambda: pool.store, authorize, _Refused)
    mount_pages(app, pool, authorize, _Refused)  # the Trace Workbench (evigate/serve/pages.py)
    return app


def _settle_heap() -> None:
    """Collect once, then leave what is alive at start (the modules, the programs, the app: ~170,000 objects)
    out of the collector's scans: a full collection over it pauses whichever request triggers it for ~130 ms on
    2 busy cores. Once per process: a second app in the same process (tests) has nothing new worth freezing."""
    if gc.get_freeze_count() == 0:
        gc.collect()
        gc.freeze()


def _error_handlers(app: FastAPI) -> None:
    """Every error the API returns is JSON ``{"error": …}``: its own refusals, Starlette's, validation, bugs."""
    @app.exception_handler(_Refused)
    async def _refused(_: Request, exc: _Refused) -> JSONResponse:
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        # Starlette's own errors (unknown route 404, wrong method 405, an unreadable body 400) in the API's shape
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:  # logged by Starlette; never a plain-text 500
        return JSONResponse({"error": f"internal error ({type(exc).__name__})"}, status_code=500)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(error.get("type") == "json_invalid" for error in errors):
            return JSONResponse({"error": "the request body is not valid JSON"}, status_code=400)
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors)
        return JSONResponse({"error": f"invalid request: {problems}"}, status_code=422)


def _api_routes(app: FastAPI, pool: DiagnosisPool, authorize: Callable[..., None]) -> None:
    """/healthz, POST /v1/diagnoses (JSON or SSE) and GET /v1/sessions/{id}."""
    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        """Liveness and load; no authentication, no data."""
        return {"status": "ok", **pool.load()}

    @app.post(
        "/v1/diagnoses",
        response_model=DiagnosisResult,
        dependencies=[Depends(authorize)],
        responses={200: {"content": {"text/event-stream": {}}, "description": "result, or progress events"}},
    )
    async def diagnose(body: DiagnosisRequest, request: Request, stream: bool = False) -> Any:
        """Diagnose one question. With ``?stream=true`` or ``Accept: text/event-stream``: progress as SSE."""
        wants_stream = stream or "text/event-stream" in request.headers.get("accept", "")
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()

        def observer(event: Any) -> None:  # called on the worker thread
            loop.call_soon_threadsafe(events.put_nowait, {"event": event.kind, **event.as_dict()})

        job = _submit(pool, body, observer if wants_stream else None)
        if wants_stream:
            return StreamingResponse(
                _event_stream(job, events, pool),
                media_type="text/event-stream",
                headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
            )
        result = await _await_result(job)
        return JSONResponse(result.model_dump(mode="json"))

    @app.get("/v1/sessions/{session_id}", dependencies=[Depends(authorize)])
    async def session(session_id: str) -> dict[str, Any]:
        """The whole audit chain of a session: session row, agent steps, tool invocations."""
        try:
            return await asyncio.to_thread(session_record, pool.store, session_id)
        except SessionNotFoundError:
            raise _Refused(404, f"no session {session_id}") from None


_RETRY = {"Retry-After": str(RETRY_AFTER_S)}


def _submit(pool: DiagnosisPool, body: DiagnosisRequest, observer: Any) -> Job:
    try:
        return pool.submit(body.query, body.locale, observer)
    except PoolFull as exc:
        raise _Refused(503, f"busy: {exc}; retry later", _RETRY) from None
    except PoolClosed as exc:
        raise _Refused(503, str(exc), _RETRY) from None


async def _await_result(job: Job) -> Any:
    try:
        return await asyncio.wrap_future(job.future)
    except PoolClosed as exc:  # shutting down: a queued request never started, a running one was interrupted
        raise _Refused(503, str(exc), _RETRY) from None
    except EvigateError as exc:
        raise _Refused(500, f"diagnosis failed ({type(exc).__name__}): {exc}") from None
    except Exception as exc:
        raise _Refused(500, f"diagnosis failed: {type(exc).__name__}") from None


async def _event_stream(job: Job, events: asyncio.Queue[dict[str, Any]], pool: DiagnosisPool) -> AsyncIterator[str]:
    yield _sse({"event": "queued", **pool.load()})
    waiter = asyncio.ensure_future(asyncio.wrap_future(job.future))
    waiter.add_done_callback(_retrieved)  # a stream cancelled at shutdown never reads its result
    while True:
        getter = asyncio.ensure_future(events.get())
        done, _ = await asyncio.wait({getter, waiter}, timeout=SSE_KEEPALIVE_S, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            yield _sse(getter.result())
            continue
        getter.cancel()
        if waiter in done:
            break
        yield ": keepalive\n\n"
    while not events.empty():  # events the worker emitted just before the result
        yield _sse(events.get_nowait())
    try:
        result = waiter.result()
    except Exception as exc:
        message = str(exc) if isinstance(exc, EvigateError) else type(exc).__name__
        error: dict[str, Any] = {"event": "error", "error": message, "session_id": job.session_id}
        if isinstance(exc, PoolClosed):
            error["retry_after"] = RETRY_AFTER_S
        yield _sse(error)
        return
    yield _sse({"event": "result", **result.model_dump(mode="json")})


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _sse(payload: dict[str, Any]) -> str:
    event = payload["event"]
    data = json.dumps({k: v for k, v in payload.items() if k != "event"}, ensure_ascii=False)
    return f"event: {event}\ndata: {data}\n\n"
