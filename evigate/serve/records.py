"""A session's whole audit chain as one JSON document: what `evigate show --json` prints and the API returns."""

from __future__ import annotations

import json
from typing import Any

from evigate.redaction import redact_value


def session_record(store: Any, session_id: str) -> dict[str, Any]:
    """Session row, agent steps and tool invocations, JSON-ready (timestamps as strings).

    Credentials are redacted on the way out too (`evigate.redaction`): rows written before redaction covered
    tool outputs and errors, or settings snapshots holding an api_key, must not be printed or served either.
    Raises :class:`evigate.errors.SessionNotFoundError` for an unknown id.
    """
    record = {
        "session": store.session(session_id),
        "agent_steps": store.steps(session_id),
        "tool_invocations": [invocation.model_dump() for invocation in store.invocations(session_id)],
    }
    return redact_value(json.loads(json.dumps(record, ensure_ascii=False, default=str)))
