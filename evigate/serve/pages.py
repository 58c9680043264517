"""The Trace Workbench pages of ``evigate serve``: ask, sessions, one session's evidence, verify.

Authentication, the way the API has it (a bearer token in the ``Authorization`` header, never in a URL or a
cookie): a page (``/``, ``/sessions``, ``/sessions/{id}``, ``/verify``) is a shell that holds no data — static
HTML, our own script and style. The script fetches the data as server-rendered HTML fragments from
``/fragments/…`` with the token the user typed into the page's login form (kept in ``sessionStorage``, so it
lives as long as the tab) as an ``Authorization`` header. The fragments are refused without it exactly like
``/v1/*`` (401); on loopback without a configured token no header is needed. No cookie is ever set, so no other
site can make a browser send the token (no CSRF), and ``/v1/*`` stays header-only.

Every value is escaped by Jinja2's autoescape; every response carries a Content-Security-Policy that allows only
this server's own script and style files (no inline script or style, no other origin).

Speed (issue 20: every page under 300 ms, ``bench/workbench.py``): the templates are compiled when the pages are
mounted, not by a first request; a page's store reads share one opening of the store's file; the static files are
served from memory, named by their content and kept by the browser (``evigate/serve/assets.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path as FilePath
from typing import Any

from fastapi import Body, Depends, FastAPI, Path
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape
from pydantic import BaseModel, ConfigDict, Field

from evigate.errors import SessionNotFoundError, StoreError
from evigate.serve.assets import mount_assets
from evigate.serve.sessions_api import find_sessions, session_query
from evigate.serve.workbench import invocation_views, session_view

HERE = FilePath(__file__).parent
MAX_ID = 2**63 - 1
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_PASSAGES = 20
VERIFY_CONTEXT_CHARS = 240
"""Characters of a passage shown on either side of a sentence's highlighted span."""

_ENV = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(("html",), default_for_string=True, default=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


class VerifyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=20_000)
    passages: list[str] = Field(min_length=1, max_length=MAX_PASSAGES)


PAGE_SCRIPTS = {"ask": "ask", "sessions": "sessions", "session": "session", "verify": "verify"}
"""Each page's own script in static/, beside workbench.js (what every page shares)."""


def render(template: str, **values: Any) -> HTMLResponse:
    if "page" in values:  # a page shell (a fragment has no page of its own)
        values["page_script"] = PAGE_SCRIPTS[values["page"]]
    return HTMLResponse(_ENV.get_template(template).render(**values), headers=SECURITY_HEADERS)


def _settings_of(pool: Any) -> dict[str, Any]:
    settings = getattr(pool, "program_settings", None)
    return {"domain": getattr(settings, "domain", None), "locale": getattr(settings, "locale", None)}


def _prepare(app: FastAPI, refuse: Callable[[int, str], Exception]) -> None:
    """``/static`` (evigate/serve/assets.py), and every template compiled now: the first page to need one would
    otherwise wait for it (~90 ms for the session fragment)."""
    _ENV.globals["asset"] = mount_assets(app, HERE / "static", refuse)
    for name in _ENV.list_templates():
        _ENV.get_template(name)


def mount_pages(
    app: FastAPI, pool: Any, authorize: Callable[..., None], refuse: Callable[[int, str], Exception]
) -> None:
    """Register the pages, their fragments and ``/static`` on ``app``."""
    _prepare(app, refuse)
    auth = [Depends(authorize)]

    async def read(function: Callable[..., Any], *args: Any) -> Any:
        """``function(store, *args)`` on a thread, under one lease of the store; a store that fails (locked,
        gone) is a clear 503, never a traceback."""
        try:
            return await asyncio.to_thread(_under_one_lease, pool.store, function, *args)
        except SessionNotFoundError:
            raise
        except StoreError as exc:
            raise refuse(503, f"audit store unavailable: {exc}") from None

    @app.get("/", include_in_schema=False)
    async def ask_page() -> Response:
        return render("ask.html", page="ask", **_settings_of(pool))

    @app.get("/sessions", include_in_schema=False)
    async def sessions_page() -> Response:
        return render("sessions.html", page="sessions")

    @app.get("/sessions/{session_id}", include_in_schema=False)
    async def session_page(session_id: str) -> Response:
        return render("session.html", page="session", session_id=session_id)

    @app.get("/verify", include_in_schema=False)
    async def verify_page() -> Response:
        return render("verify.html", page="verify")

    @app.get("/fragments/sessions", include_in_schema=False, dependencies=auth)
    async def sessions_fragment(params: dict[str, Any] = Depends(session_query)) -> Response:
        listing = await read(find_sessions, params, refuse)
        return render("_sessions.html", listing=listing)

    @app.get("/fragments/sessions/{session_id}", include_in_schema=False, dependencies=auth)
    async def session_fragment(session_id: str) -> Response:
        try:
            view = await read(_session_view, session_id)
        except SessionNotFoundError:
            raise refuse(404, f"no session {session_id}") from None
        return render("_session.html", **view)

    @app.get("/fragments/sessions/{session_id}/invocations/{invocation_id}", include_in_schema=False,
             dependencies=auth)
    async def invocation_fragment(session_id: str, invocation_id: int = Path(ge=0, le=MAX_ID)) -> Response:
        """One invocation's arguments and whole output: loaded when opened, so a session page stays light."""
        record = await read(_invocation_view, session_id, invocation_id)
        if record is None:
            raise refuse(404, f"no invocation {invocation_id} in session {session_id}")
        return render("_invocation.html", inv=record)

    @app.post("/fragments/verify", include_in_schema=False, dependencies=auth)
    async def verify_fragment(request: VerifyRequest = Body(...)) -> Response:
        sentences = await asyncio.to_thread(_verify, request)
        return render("_verify.html", **sentences)


def _under_one_lease(store: Any, function: Callable[..., Any], *args: Any) -> Any:
    """``function(store, *args)`` with the store's DuckDB file held from its first read to its last.

    Each store read leases the file by itself, and a lease released once the file has been open for a second
    (``MAX_HOLD_SECONDS``) closes it and lets no one of this process reopen it for ``COURTESY_SECONDS`` (another
    process's turn). Between two reads of one page that cost a pause and a reopening (~250 ms on 2 busy cores:
    bench/workbench.py's slowest loads); held here, a page opens the file at most once.
    """
    hold = store.cursor() if store.backend == "duckdb" else contextlib.nullcontext()
    with hold:
        return function(store, *args)


def _session_view(store: Any, session_id: str) -> dict[str, Any]:
    session = store.session(session_id)  # SessionNotFoundError for an unknown id
    return session_view(session, store.steps(session_id), store.invocation_records(session_id, with_output=False))


def _invocation_view(store: Any, session_id: str, invocation_id: int) -> dict[str, Any] | None:
    rows = store.invocation_records(session_id, invocation_id=invocation_id)
    return invocation_views(rows)[0] if rows else None


def _verify(request: VerifyRequest) -> dict[str, Any]:
    """``evigate.verify`` (code only, as ``evigate verify`` without ``--model``) and each span with its context."""
    from evigate.verification import verify

    names = [f"passage {number}" for number in range(1, len(request.passages) + 1)]
    passages = dict(zip(names, request.passages, strict=True))
    result = verify(request.answer, passages)
    rows = []
    for sentence in result.sentences:
        shown = None
        if sentence.passage in passages and sentence.span:
            text = passages[sentence.passage]
            start, end = sentence.span
            if 0 <= start <= end <= len(text):
                shown = {"before": text[max(0, start - VERIFY_CONTEXT_CHARS):start], "match": text[start:end],
                         "after": text[end:end + VERIFY_CONTEXT_CHARS],
                         "cut_before": start > VERIFY_CONTEXT_CHARS,
                         "cut_after": end + VERIFY_CONTEXT_CHARS < len(text)}
        rows.append({"sentence": sentence, "shown": shown})
    return {"result": result, "rows": rows}
