"""The rows :class:`~evigate.store.audit.AuditStore` writes: argument checks, cleaning and parameter lists.

Kept apart from the store's lifecycle and backends: what goes into an audit row (and what a caller gets back) is
decided here, the same for DuckDB and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel

from evigate.errors import AuditValueError
from evigate.redaction import redact_value
from evigate.signatures import SELF_EVALUATION_SLOTS, ToolInvocation
from evigate.store.codec import clean_text, clean_value, from_json_text, require_finite, to_json_text
from evigate.store.preview import make_preview

SESSION_STATUSES = ("running", "finished", "failed", "interrupted")
"""Every ``diagnosis_session.status``: ``running`` until :meth:`AuditStore.finish_session` sets one of the others
(``interrupted``: the process was stopped — Ctrl-C, a server shutdown — before the session could finish)."""

THOUGHT_CHARS = 1000
"""``agent_step.thought`` is concise by design (V1 "Observability adjustment"); longer text is cut and marked."""


def utc_now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _none() -> None:
    return None


SESSION_JSON_COLUMNS = {"settings": _none, "self_evaluation": dict}
INVOCATION_JSON_COLUMNS = {"input": dict, "retrieval_details": _none}


def finish_params(
    session_id: str, *, output_type: str | None, verdict: str | None, answer: str, rounds: int,
    groundedness_score: float | None, error: str | None, status: str,
) -> list[Any]:
    """The ``FINISH_SESSION`` parameters, after checking the status and the score."""
    if status not in SESSION_STATUSES[1:]:
        raise AuditValueError(f"a session finishes as one of {list(SESSION_STATUSES[1:])}, got {status!r}")
    score = None if groundedness_score is None else require_finite(groundedness_score, "groundedness_score")
    if score is not None and score > 1.0:
        raise AuditValueError(f"groundedness_score must lie in [0, 1], got {groundedness_score!r}")
    return [status, utc_now(), output_type, verdict, answer, rounds, score, error, session_id]


def self_evaluation_json(slot: str, value: dict) -> str:
    """One ``self_evaluation`` slot's value as JSON text, after checking the slot and the value's type."""
    if slot not in SELF_EVALUATION_SLOTS:
        raise AuditValueError(f"unknown self_evaluation slot {slot!r}; valid slots: {list(SELF_EVALUATION_SLOTS)}")
    if not isinstance(value, Mapping | BaseModel):
        raise AuditValueError(f"self_evaluation.{slot} must be a JSON object (dict), got {type(value).__name__}")
    return to_json_text(value if isinstance(value, BaseModel) else dict(value), f"self_evaluation.{slot}")


def invocation_params(
    session_id: str, round: int, tool_name: str, input: dict, output: str, *,
    retrieval_details: dict | list | None, success: bool, error: str | None, is_evidence: bool,
    latency_ms: float, preview_chars: int,
) -> list[Any]:
    """The ``INSERT_INVOCATION`` parameters: text cleaned, a capped preview, ``started_at`` = now - latency."""
    if not isinstance(input, Mapping):
        raise AuditValueError(f"tool input must be a dict, got {type(input).__name__}")
    if not isinstance(output, str):
        raise AuditValueError(f"tool output must be a str, got {type(output).__name__}")
    latency = require_finite(latency_ms, "latency_ms")
    tool_name, output = clean_text(str(tool_name)), clean_text(output)
    error = None if error is None else clean_text(str(error))
    preview = make_preview(output, preview_chars)
    input_json = to_json_text(dict(input), "tool input")
    details_json = None if retrieval_details is None else to_json_text(retrieval_details, "retrieval_details")
    started_at = utc_now() - timedelta(milliseconds=latency)
    return [session_id, round, tool_name, input_json, preview, output, details_json, bool(success), error,
            bool(is_evidence), started_at, latency]


def recorded_invocation(invocation_id: int, params: Sequence[Any]) -> ToolInvocation:
    """The invocation stored with ``params`` (from :func:`invocation_params`), as the Gatekeeper sees it."""
    session_id, round, tool_name, input_json, preview, output, details_json, success, error, is_evidence, _, _ = params
    return ToolInvocation(
        id=invocation_id,
        session_id=session_id,
        round=round,
        tool_name=tool_name,
        input=from_json_text(input_json),
        output_preview=preview,
        retrieval_details=from_json_text(details_json),
        success=success,
        error=error,
        is_evidence=is_evidence,
        output=None if preview == output else output,
    )


def redacted(value: Any) -> Any:
    """``value`` with every credential (a URL's password, ``api_key``/``token``/``password`` values) replaced."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    return redact_value(clean_value(value))
