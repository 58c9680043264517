"""A session's whole audit chain as one JSON document: what `evigate show --json` prints and the API returns."""

from __future__ import annotations

import json
from typing import Any


def session_record(store: Any, session_id: str) -> dict[str, Any]:
    """Session row, agent steps and tool invocations, JSON-ready (timestamps as strings).

    Raises :class:`evigate.errors.SessionNotFoundError` for an unknown id.
    """
    session = store.session(session_id)
    _redact_secrets(session)
    record = {
        "session": session,
        "agent_steps": store.steps(session_id),
        "tool_invocations": [invocation.model_dump() for invocation in store.invocations(session_id)],
    }
    return json.loads(json.dumps(record, ensure_ascii=False, default=str))


def _redact_secrets(session: dict[str, Any]) -> None:
    """Sessions written before api_key became a secret hold it in their settings snapshot: never print or serve it."""
    models = (session.get("settings") or {}).get("models")
    if isinstance(models, dict) and models.get("api_key"):
        models["api_key"] = "**********"
