"""A team's own incidents as fixtures: a recorded session as a case to label, and labelled cases read back.

``evigate label SESSION_ID`` writes :func:`label_skeleton` of the session's audit record: one YAML document that is a
Verifier case (the query, the invocations, the Executor's claims as the Verifier saw them) whose gold labels are left
empty beside code's labels as suggestions, plus the Composer input under ``composer``. A reviewer fills ``split``,
``gold_labels``, ``gold_verdict`` and ``composer.must_contain`` / ``must_not_contain``; ``eval --data`` and
``optimize --data`` then read the file (:func:`case_view`) as a Verifier case and, when the session reached the
Composer, as a Composer case. A field left empty is an error naming the file, the line and the field.
"""

from __future__ import annotations

import json
from typing import Any

from evigate.errors import DatasetError

SESSION_KEYS = ("suggested_labels", "suggested_verdict", "composer")
"""Keys of a labelled session that are no field of a Verifier case."""
OWN_SOURCE = "own"


def label_skeleton(record: dict[str, Any]) -> dict[str, Any]:
    """The fixture skeleton of one session's audit record (``session_record``: session, steps, invocations)."""
    session = record["session"]
    session_id = str(session.get("session_id"))
    evaluation = (session.get("self_evaluation") or {}).get("verifier_evaluation") or {}
    structured = evaluation.get("executor_structured_output")
    status = evaluation.get("executor_output_parse_status")
    claims = structured.get("claims") if isinstance(structured, dict) else None
    if not claims or not status:
        raise DatasetError(f"session {session_id} has no parsed Executor claims to label (status "
                           f"{session.get('status')!r}, verdict {session.get('verdict')!r})")
    claim_ids = [str(claim.get("claim_id")) for claim in claims if isinstance(claim, dict)]
    suggested = {check["claim_id"]: check["verification"] for check in evaluation.get("claim_checks") or []
                 if check.get("claim_id") in claim_ids}
    composer_input = evaluation.get("composer_input")
    return {
        "case_id": f"session-{session_id}",
        "source": OWN_SOURCE,
        "split": None,
        "session_id": session_id,
        "tags": [],
        "notes": {},
        "verifier_input": {
            "original_query": session.get("query") or "",
            "executor_raw_output": _executor_output(record, evaluation.get("round") or 1) or json.dumps(
                structured, ensure_ascii=False),
            "executor_structured_output": structured,
            "executor_output_parse_status": status,
            "tool_trace_summary": evaluation.get("tool_trace_summary") or [],
            "gatekeeper_result": evaluation.get("gatekeeper_result") or {},
        },
        "invocations": record.get("tool_invocations") or [],
        "gold_labels": dict.fromkeys(claim_ids),
        "suggested_labels": suggested,
        "gold_verdict": None,
        "suggested_verdict": evaluation.get("verdict") or session.get("verdict"),
        "composer": {"composer_input": composer_input, "must_contain": [], "must_not_contain": []}
        if composer_input else None,
    }


def _executor_output(record: dict[str, Any], round_number: int) -> str:
    """The Executor's raw text of the round the Verifier judged (the last executor step of that round)."""
    steps = [step for step in record.get("agent_steps") or []
             if step.get("agent") == "executor" and step.get("round") == round_number and step.get("status") == "ok"]
    return str(steps[-1].get("model_output") or "") if steps else ""


def is_labelled_session(raw: dict[str, Any]) -> bool:
    return any(key in raw for key in SESSION_KEYS)


def case_view(raw: dict[str, Any], kind: str, where: str) -> dict[str, Any] | None:
    """The raw fields of a ``kind`` ("verifier" or "composer") case in one fixture document, or None when the
    document holds no such case (a Composer case file read for the Verifier, a session that never reached the
    Composer). Raises :class:`DatasetError` naming ``where`` and the field a reviewer has not filled yet."""
    session = is_labelled_session(raw)
    if kind == "verifier":
        if "verifier_input" not in raw:
            return None
        if session:
            _require_filled(raw, where)
        return {key: value for key, value in raw.items() if key not in SESSION_KEYS}
    if "composer_input" in raw:
        return raw
    composer = raw.get("composer") if session else None
    if not isinstance(composer, dict) or composer.get("composer_input") is None:
        return None
    if raw.get("split") is None:
        raise DatasetError(f"{where}: split is not filled in (train, dev or test)")
    return {"case_id": raw.get("case_id"), "split": raw.get("split"), "tags": raw.get("tags") or [],
            **{key: value for key, value in composer.items()}}


def _require_filled(raw: dict[str, Any], where: str) -> None:
    empty: list[str] = []
    if raw.get("split") is None:
        empty.append("split (train, dev or test)")
    labels = raw.get("gold_labels")
    suggested = raw.get("suggested_labels") or {}
    if isinstance(labels, dict):
        empty.extend(f"gold_labels.{claim_id} (code suggests {suggested.get(claim_id) or 'nothing'})"
                     for claim_id, label in labels.items() if label is None)
    if raw.get("gold_verdict") is None:
        empty.append(f"gold_verdict (the session's verdict was {raw.get('suggested_verdict')})")
    if empty:
        raise DatasetError(f"{where}: not labelled yet: {'; '.join(empty)}")
