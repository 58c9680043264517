"""Assemble a :class:`VerifierCase` from tool invocations and hand-labelled claims.

Both Verifier sets are built here, so they see the same pipeline the program runs: the executor output is
serialised to raw JSON, parsed by :func:`evigate.rules.parse_executor_output`, summarised by
:func:`evigate.modules.build_tool_trace_summary` and validated by the default Gatekeeper. The fixture therefore holds
exactly the Verifier input the model would get, and the Gatekeeper result a metric recomputes must match it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.datasets.fixtures import Split, VerifierCase
from evigate.errors import DatasetError
from evigate.signatures import (
    ExecutorOutputParseStatus,
    ToolInvocation,
    VerifierInput,
)

SPLIT_WEIGHTS: tuple[tuple[Split, int], ...] = (("train", 50), ("dev", 25), ("test", 25))


@dataclass(frozen=True)
class Evidence:
    """One evidence binding: invocation ids, the quoted excerpt, and the tool name the claim attributes it to.

    ``tool_name`` defaults to the tool of the first invocation; set it to build a tool-name-mismatch case, and list
    ids that do not exist to build a forged-reference case.
    """

    invocation_ids: tuple[int, ...]
    excerpt: str
    tool_name: str | None = None


@dataclass(frozen=True)
class ClaimSpec:
    """A claim as the Executor would write it, plus its gold verification and why."""

    claim_id: str
    claim_type: str
    text: str
    support_level: str
    evidence: tuple[Evidence, ...]
    label: str
    acceptable: tuple[str, ...] = ()
    note: str = ""


@dataclass
class CaseSpec:
    """Everything that identifies one Verifier input before the pipeline runs on it."""

    case_id: str
    source: str
    split: Split
    query: str
    session_id: str
    invocations: list[ToolInvocation]
    claims: list[ClaimSpec]
    gold_verdict: str
    tags: list[str] = field(default_factory=list)
    hypotheses: list[dict[str, Any]] = field(default_factory=list)
    recommended_actions: list[dict[str, Any]] = field(default_factory=list)
    missing_info: list[str] = field(default_factory=list)
    extra_notes: dict[str, str] = field(default_factory=dict)


def stable_split(group_key: str) -> Split:
    """Deterministic train/dev/test bucket of a group (50/25/25 by SHA-256), so regenerating never reshuffles."""
    bucket = int(hashlib.sha256(group_key.encode("utf-8")).hexdigest()[:8], 16) % 100
    threshold = 0
    for split, weight in SPLIT_WEIGHTS:
        threshold += weight
        if bucket < threshold:
            return split
    return SPLIT_WEIGHTS[-1][0]


def executor_output(spec: CaseSpec) -> dict[str, Any]:
    """The §2 executor_evidence_v2 object the case's claims make."""
    by_id = {inv.id: inv for inv in spec.invocations}
    claims = []
    for claim in spec.claims:
        bindings = []
        for evidence in claim.evidence:
            first = by_id.get(evidence.invocation_ids[0]) if evidence.invocation_ids else None
            tool_name = evidence.tool_name or (first.tool_name if first else None)
            if tool_name is None:
                raise DatasetError(f"{spec.case_id}: {claim.claim_id} cites unknown invocation without a tool_name")
            bindings.append(
                {
                    "source_type": "tool_trace",
                    "tool_name": tool_name,
                    "source_invocation_ids": list(evidence.invocation_ids),
                    "evidence_excerpt": evidence.excerpt,
                }
            )
        claims.append(
            {
                "claim_id": claim.claim_id,
                "claim_type": claim.claim_type,
                "claim_text": claim.text,
                "support_level": claim.support_level,
                "evidence_bindings": bindings,
            }
        )
    return {
        "answer_version": "executor_evidence_v2",
        "claims": claims,
        "hypotheses": spec.hypotheses,
        "recommended_actions": spec.recommended_actions,
        "missing_info": spec.missing_info,
    }


def build_case(spec: CaseSpec) -> VerifierCase:
    """Run parse → trace summary → Gatekeeper on the spec and return the labelled fixture case."""
    from evigate.modules.trace_summary import build_tool_trace_summary
    from evigate.rules import Gatekeeper, parse_executor_output

    output = executor_output(spec)
    # The summary's priorities depend on which invocations claims cite, not on binding source ids, so one
    # summary serves both to fill source_id (the trace_ref a binding points at) and as the Verifier's index.
    trace = build_tool_trace_summary(spec.invocations, output)
    trace_refs = _trace_refs(trace)
    for claim in output["claims"]:
        for binding in claim["evidence_bindings"]:
            refs = {trace_refs[i] for i in binding["source_invocation_ids"] if i in trace_refs}
            if len(refs) == 1:
                binding["source_id"] = refs.pop()
    raw = json.dumps(output, ensure_ascii=False)
    parsed = parse_executor_output(raw)
    gate = Gatekeeper.default().validate(parsed, spec.invocations, spec.session_id, trace_summary=trace,
                                         query=spec.query)
    verifier_input = VerifierInput(
        original_query=spec.query,
        executor_raw_output=raw,
        executor_structured_output=gate.normalized,
        executor_output_parse_status=ExecutorOutputParseStatus(status=parsed.status, detail=parsed.detail),
        tool_trace_summary=trace,
        gatekeeper_result=gate.result,
    )
    notes = {claim.claim_id: claim.note for claim in spec.claims if claim.note} | spec.extra_notes
    try:
        return VerifierCase(
            case_id=spec.case_id,
            split=spec.split,
            tags=spec.tags,
            notes=notes,
            source=spec.source,
            session_id=spec.session_id,
            verifier_input=verifier_input,
            invocations=spec.invocations,
            gold_labels={claim.claim_id: claim.label for claim in spec.claims},
            acceptable_labels={claim.claim_id: list(claim.acceptable) for claim in spec.claims if claim.acceptable},
            gold_verdict=spec.gold_verdict,
        )
    except ValueError as exc:
        raise DatasetError(f"{spec.case_id}: {exc}") from exc


def _trace_refs(entries: Sequence[Any]) -> dict[int, str]:
    return {inv_id: entry.trace_ref for entry in entries for inv_id in entry.source_invocation_ids}
