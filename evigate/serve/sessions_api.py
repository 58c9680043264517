"""``GET /v1/sessions``: past sessions, filtered and paginated, newest first (the same query as ``show --list``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI, Query

from evigate.errors import AuditValueError, StoreError
from evigate.store.listing import MAX_PAGE, SessionQuery


def session_query(
    verdict: str | None = Query(None, description="PASS | LOW_CONFID | REJECT"),
    output_type: str | None = Query(None, description="NORMAL | LOW_CONFID_WITH_DISCLAIMER | DEGRADED"),
    status: str | None = Query(None, description="running | finished | failed | interrupted"),
    since: str | None = Query(None, description="created at or after (ISO 8601; UTC unless an offset is given)"),
    until: str | None = Query(None, description="created before (ISO 8601)"),
    q: str | None = Query(None, description="text in the question, the answer or the session id"),
    limit: int = Query(20, ge=1, le=MAX_PAGE),
    offset: int = Query(0, ge=0),
) -> dict[str, Any]:
    """The listing's query parameters, shared by the JSON endpoint and the workbench's list fragment."""
    return {"verdict": verdict or None, "output_type": output_type or None, "status": status or None,
            "since": since or None, "until": until or None, "text": q, "limit": limit, "offset": offset}


def find_sessions(store: Any, params: dict[str, Any], refuse: Callable[[int, str], Exception]) -> dict[str, Any]:
    """One page of sessions, JSON-ready; an invalid filter is refused with 422, a failing store with 503."""
    try:
        query = SessionQuery(**params)
    except AuditValueError as exc:
        raise refuse(422, f"invalid request: {exc}") from None
    try:
        page = store.find_sessions(query)
    except StoreError as exc:
        raise refuse(503, f"audit store unavailable: {exc}") from None
    for row in page["sessions"]:
        for key in ("created_at", "finished_at"):
            if row.get(key) is not None:
                row[key] = str(row[key])  # what `evigate show --list --json` prints
    return page


def mount_sessions_api(
    app: FastAPI, store: Callable[[], Any], authorize: Callable[..., None], refuse: Callable[[int, str], Exception]
) -> None:
    @app.get("/v1/sessions", dependencies=[Depends(authorize)])
    async def sessions(params: dict[str, Any] = Depends(session_query)) -> dict[str, Any]:
        """Past sessions, newest first: ``{"sessions": [...], "total", "limit", "offset"}``."""
        return await asyncio.to_thread(find_sessions, store(), params, refuse)
