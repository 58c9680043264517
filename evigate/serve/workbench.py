"""The Trace Workbench's view of one session: what the session page shows, built from the audit alone.

Everything here is read from the recorded audit (session row, §23 ``verifier_evaluation``, agent steps, tool
invocations) and the Gatekeeper's own ``binding_spans``; nothing is re-judged. Spans reach the browser as the gate
recorded them (code-point offsets in the whole output); the page script maps them onto the output it loads.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules import contract as field
from evigate.rules.grounding.sentences import split_sentences
from evigate.rules.text.normalize import block_coverage, compact, fold

_BINDING = re.compile(r"^claims\[(\d+)\]\.evidence_bindings\[(\d+)\]")
_CLAIM = re.compile(r"^claims\[(\d+)\]")
LINK_COVERAGE = 0.9
"""Share of a claim's content an answer sentence must carry, in order, to be linked to it."""
DECIDED_BY = {"code": "code-confirmed quote", "model": "Verifier model", "none": "no check (unsupported)"}
BINDING_FAULTS = {"evidence.invocation_ref": "forged", "evidence.misattribution": "misattributed"}


def pretty(value: Any) -> str:
    """JSON for people: indented, non-ASCII kept; "" for nothing."""
    if value in (None, {}, []):
        return ""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def session_view(
    session: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], invocation_rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Everything the session page renders: the session row, its agent steps, and its invocations as
    :meth:`AuditStore.invocation_records` gives them (outputs not needed: they load when opened)."""
    evaluation = (session.get("self_evaluation") or {}).get("verifier_evaluation") or {}
    structured = evaluation.get("executor_structured_output") or {}
    claims_data = [c for c in (structured.get(field.CLAIMS) or []) if isinstance(c, Mapping)]
    errors = list((evaluation.get("gatekeeper_result") or {}).get("errors") or [])
    spans = [s for s in evaluation.get("binding_spans") or [] if isinstance(s, Mapping)]
    invocations = invocation_views(invocation_rows)
    claims = _claims(claims_data, evaluation, errors, spans, invocations)
    answer = str(session.get("answer") or "")
    settings = session.get("settings") or {}
    return {
        "session": session,
        "locale": settings.get("locale") if isinstance(settings, Mapping) else None,
        "domain": settings.get("domain") if isinstance(settings, Mapping) else None,
        "evaluation": evaluation,
        "reading": (session.get("self_evaluation") or {}).get("query_reading") or {},
        "answer_parts": answer_parts(answer, claims),
        "claims": claims,
        "other_errors": [e for e in errors if _claim_index(e.get("target", "")) is None],
        "invocations": invocations,
        "rounds": _rounds(evaluation),
        "composer": _composer(evaluation),
        "timings": _timings(steps, invocations, session),
        "dropped": _dropped(evaluation, claims_data),
    }


def answer_parts(answer: str, claims: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The answer cut into its sentences (and the text between them), each sentence with the claims it states."""
    parts: list[dict[str, Any]] = []
    position = 0
    for sentence in split_sentences(answer):
        if sentence.start > position:
            parts.append({"text": answer[position:sentence.start], "claims": []})
        parts.append({"text": answer[sentence.start:sentence.end], "claims": linked_claims(sentence.text, claims)})
        position = sentence.end
    if position < len(answer):
        parts.append({"text": answer[position:], "claims": []})
    return parts


def linked_claims(sentence: str, claims: Sequence[Mapping[str, Any]]) -> list[str]:
    """Ids of the claims a sentence states: each contained in it (case, spaces and punctuation ignored), or else
    the one claim whose content the sentence covers best, if it covers at least ``LINK_COVERAGE`` of it. A sentence
    that shares a quoted fragment with a claim but not the rest of it states none of it (no link beats a wrong one).
    """
    said = compact(fold(sentence))
    if not said:
        return []
    contained = [c["id"] for c in claims if c["core"] and c["core"] in said]
    if contained:
        return contained
    best, best_coverage = None, LINK_COVERAGE
    for claim in claims:
        if claim["core"]:
            coverage = block_coverage(claim["core"], said)
            if coverage >= best_coverage:
                best, best_coverage = claim["id"], coverage
    return [best] if best else []


def invocation_views(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Invocations as shown: arguments, success, timing, output length and (where read) the whole output."""
    return [{
        "id": row.get("id"), "round": row.get("round"), "tool_name": row.get("tool_name"),
        "input": pretty(row.get("input")), "success": row.get("success"), "error": row.get("error"),
        "is_evidence": row.get("is_evidence"), "latency_ms": row.get("latency_ms"), "started_at": row.get("started_at"),
        "output_chars": row.get("output_chars") or 0, "output": row.get("output"),
        "details": pretty(row.get("retrieval_details")),
    } for row in rows]


def _claims(
    claims_data: Sequence[Mapping[str, Any]], evaluation: Mapping[str, Any], errors: Sequence[Mapping[str, Any]],
    spans: Sequence[Mapping[str, Any]], invocations: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    checks = {c.get("claim_id"): c for c in evaluation.get("claim_checks") or [] if isinstance(c, Mapping)}
    confirmation = evaluation.get("code_confirmation") or {}
    sources = confirmation.get("label_sources") or {}
    capped = confirmation.get("capped") or {}
    sizes = {inv["id"]: inv["output_chars"] for inv in invocations}
    views = []
    for index, claim in enumerate(claims_data):
        claim_id = claim.get(field.CLAIM_ID) if isinstance(claim.get(field.CLAIM_ID), str) else f"claims[{index}]"
        check = checks.get(claim_id) or {}
        source = sources.get(claim_id, "none" if not check else "model")
        claim_errors = [e for e in errors if _claim_index(e.get("target", "")) == index]
        bindings = [
            _binding(index, position, binding, claim_errors, spans, sizes)
            for position, binding in enumerate(claim.get(field.BINDINGS) or []) if isinstance(binding, Mapping)
        ]
        text = str(claim.get(field.CLAIM_TEXT) or "")
        views.append({
            "id": claim_id, "index": index, "text": text, "core": compact(fold(text)),
            "type": claim.get(field.CLAIM_TYPE), "support_level": claim.get(field.SUPPORT_LEVEL),
            "label": check.get("verification", "unsupported"), "reason": check.get("detail", ""),
            "decided_by": "cap" if claim_id in capped else source,
            "decided_by_text": f"capped by code: {capped[claim_id]}" if claim_id in capped
            else DECIDED_BY.get(source, source),
            "model_source": DECIDED_BY.get(source, source),
            "errors": [e for e in claim_errors if not _BINDING.match(e.get("target", ""))],
            "bindings": bindings,
        })
    return views


def _binding(
    claim_index: int, position: int, binding: Mapping[str, Any], claim_errors: Sequence[Mapping[str, Any]],
    spans: Sequence[Mapping[str, Any]], sizes: Mapping[Any, int],
) -> dict[str, Any]:
    target = f"claims[{claim_index}].evidence_bindings[{position}]"
    errors = [e for e in claim_errors if e.get("target", "").startswith(target)]
    failed = [e for e in errors if e.get("level") == "fail"]
    faults = sorted({BINDING_FAULTS[e["rule_id"]] for e in failed if e.get("rule_id") in BINDING_FAULTS})
    # a span no recorded output of this session holds is shown as no span, never as a wrong highlight
    located = [span for span in spans if span.get("target") == target and span.get("invocation_id") in sizes
               and 0 <= span.get("start", -1) <= span.get("end", -1) <= sizes[span["invocation_id"]]]
    ids = binding.get(field.INVOCATION_IDS)
    ids = ids if isinstance(ids, list) else [ids] if ids is not None else []
    if faults:
        status = " and ".join(faults)
    elif failed:
        status = "rejected"
    elif located:
        status = "matched"
    else:
        status = "no span in the output"
    return {"target": target, "tool_name": binding.get(field.TOOL_NAME), "ids": ids,
            "known_ids": [i for i in ids if i in sizes], "excerpt": str(binding.get(field.EXCERPT) or ""),
            "errors": errors, "status": status, "spans": located,
            "spans_json": json.dumps([{"invocation": s["invocation_id"], "start": s["start"], "end": s["end"]}
                                      for s in located])}


def _claim_index(target: str) -> int | None:
    match = _CLAIM.match(target)
    return int(match.group(1)) if match else None


def _rounds(evaluation: Mapping[str, Any]) -> list[dict[str, Any]]:
    rounds = []
    for item in [*list(evaluation.get("history") or []), evaluation]:
        gate = item.get("gatekeeper_result") or {}
        rounds.append({
            "round": item.get("round"), "verdict": item.get("verdict"), "model_verdict": item.get("model_verdict"),
            "groundedness": item.get("groundedness_score"), "gate_status": gate.get("status"),
            "failed_rules": gate.get("failed_rules") or [], "warnings": gate.get("warnings") or [],
            "reasons": item.get("reasons") or [], "retry_context": pretty(item.get("retry_context")),
        })
    return rounds


def _composer(evaluation: Mapping[str, Any]) -> dict[str, Any]:
    output = evaluation.get("composer_output")
    violations = list(evaluation.get("composer_violations") or [])
    if violations:
        fate = "replaced: the guard refused the Composer's text; the answer was rendered from the template"
    elif output:
        fate = "shown: the guard accepted the Composer's text"
    else:
        fate = "not called: the answer was rendered from the template by code"
    return {"input": pretty(evaluation.get("composer_input")), "output": pretty(output),
            "violations": violations, "fate": fate}


def _timings(
    steps: Sequence[Mapping[str, Any]], invocations: Sequence[Mapping[str, Any]], session: Mapping[str, Any]
) -> dict[str, Any]:
    rows = [{"round": s.get("round"), "agent": s.get("agent"), "latency_ms": s.get("latency_ms"),
             "status": s.get("status"), "thought": s.get("thought"), "error": s.get("error")} for s in steps]
    tools_ms = sum(float(i.get("latency_ms") or 0.0) for i in invocations)
    return {"steps": rows, "tools_ms": tools_ms, "created_at": session.get("created_at"),
            "finished_at": session.get("finished_at")}


def _dropped(evaluation: Mapping[str, Any], claims_data: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """What code removed from the answer or rewrote, each with the reason it recorded."""
    confirmation = evaluation.get("code_confirmation") or {}
    items = [{"what": f"claim {r.get('claim_id')} rewritten: {r.get('original_text')} → {r.get('new_text')}",
              "why": str(r.get("why") or "")} for r in confirmation.get("rewritten") or []]
    items += [{"what": f"claim {claim_id} label capped", "why": str(why)}
              for claim_id, why in (confirmation.get("capped") or {}).items()]
    allowed = {c.get("claim_id") for c in (evaluation.get("composer_input") or {}).get("allowed_claims") or []}
    checks = {c.get("claim_id"): c for c in evaluation.get("claim_checks") or [] if isinstance(c, Mapping)}
    if evaluation.get("composer_input"):
        for index, claim in enumerate(claims_data):
            claim_id = claim.get(field.CLAIM_ID) or f"claims[{index}]"
            if claim_id not in allowed:
                label = (checks.get(claim_id) or {}).get("verification", "unsupported")
                items.append({"what": f"claim {claim_id} left out of the answer: {claim.get(field.CLAIM_TEXT, '')}",
                              "why": f"labelled {label}; only supported claims reach the Composer"})
    return items
