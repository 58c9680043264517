"""decide_verdict: the §17 matrix in code, with the groundedness mapping and facts_checked of ARCHITECTURE.md.

The Verifier model proposes ``claim_checks``; this code decides. A weak or manipulated Verifier can lower a verdict,
never raise it past what the evidence allows: a claim a fail-level Gatekeeper error targets counts as
``unsupported`` at best, a claim with no check counts as ``unsupported``, and checks naming unknown claims are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, ValidationError

from evigate.rules.contract import claim_key, claim_text, claim_type, iter_claims
from evigate.rules.engine.gatekeeper import claim_ids_of_targets
from evigate.rules.gate.parsing import ParsedOutput
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.ceilings import cap, ceilings_of
from evigate.rules.verdict.confirmation import KNOWLEDGE_TOOLS
from evigate.rules.verdict.rows import SUMMARY_OF, MatrixRow, matrix_rows
from evigate.signatures import (
    CRITICAL_CLAIM_TYPES,
    FACT_VERIFICATION_OF,
    ClaimCheck,
    ClaimVerification,
    ExecutorOutputParseStatus,
    FactChecked,
    GatekeeperResult,
    GateStatus,
    ParseStatusValue,
    Verdict,
)

SCORE_OF: dict[str, float] = THRESHOLDS.scoring.label_scores
ALLOWED_VERIFICATIONS = frozenset({"direct_observation", "reasonable_inference"})
# Least favourable first: when a model checks one claim twice, the worse judgement stands.
SEVERITY_ORDER = ("contradicted", "external_unknown", "unsupported", "overstated", "reasonable_inference",
                  "direct_observation")
NON_CRITICAL_TYPES = frozenset({"context", "remediation"})
VERDICTS = ("PASS", "LOW_CONFID", "REJECT")

LabelSource = Literal["code", "model", "none"]


class VerdictDecision(BaseModel):
    """The code's decision for one round, with everything the audit and the Composer input need."""

    verdict: Verdict
    model_verdict: Verdict | None = None
    groundedness_score: float = Field(ge=0.0, le=1.0)
    facts_checked: list[FactChecked] = Field(default_factory=list)
    critical_fact_count: int = 0
    reasons: list[str] = Field(default_factory=list)
    effective_checks: dict[str, ClaimVerification] = Field(default_factory=dict)
    ignored_checks: list[ClaimCheck] = Field(default_factory=list)
    claim_checks: dict[str, ClaimCheck] = Field(default_factory=dict, description="the check each claim was judged by")
    excluded_claims: list[str] = Field(default_factory=list)
    failed_claims: list[str] = Field(default_factory=list)
    critical_claims: list[str] = Field(default_factory=list)
    parse_status: ParseStatusValue = "valid"
    gate_status: GateStatus = "pass"
    summary: str = Field(default="", description="the deciding matrix row in plain Chinese, free of ids")
    rows: list[MatrixRow] = Field(default_factory=list, description="the §17 rows that fired, deciding row first")
    label_sources: dict[str, LabelSource] = Field(
        default_factory=dict, description="claim id → who labelled it: code (confirmed quote), model, none (no check)")
    capped: dict[str, str] = Field(default_factory=dict, description="claim id → why code lowered the model's label")
    off_topic: dict[str, str] = Field(
        default_factory=dict, description="claim id → why it is not about the question: never shown as confirmed")
    off_topic_items: dict[str, str] = Field(
        default_factory=dict, description="hypothesis, gap or action (\"hypotheses[0]\") → why it is not about the "
                                          "question: never shown")

    @property
    def code_confirmed(self) -> list[str]:
        """Claims code labelled direct_observation (they restate a cited output)."""
        return [key for key, source in self.label_sources.items()
                if source == "code" and self.claim_checks.get(key) is not None
                and self.claim_checks[key].verification == "direct_observation"]


def is_critical(claim: Mapping[str, Any]) -> bool:
    """§16.1.1: root_cause / symptom / impact / risk are critical; an unknown type is treated as critical too."""
    kind = claim_type(claim)
    return kind in CRITICAL_CLAIM_TYPES or kind not in NON_CRITICAL_TYPES


def _parse_status_value(parse_status: Any) -> str:
    if isinstance(parse_status, ExecutorOutputParseStatus | ParsedOutput):
        return parse_status.status
    if isinstance(parse_status, Mapping):
        return str(parse_status.get("status", "malformed"))
    return str(parse_status) if parse_status in ("valid", "missing", "malformed") else "malformed"


def _gate(gate_result: Any) -> GatekeeperResult:
    if isinstance(gate_result, GatekeeperResult):
        return gate_result
    if gate_result is None:
        return GatekeeperResult()
    try:
        return GatekeeperResult.model_validate(gate_result)
    except ValidationError:  # an unreadable gate result must not open the gate
        return GatekeeperResult(status="fail", failed_rules=["gatekeeper.result"])


def _checks(claim_checks: Iterable[Any] | None, reasons: list[str]) -> list[ClaimCheck]:
    checks = []
    for position, item in enumerate(claim_checks or ()):
        try:
            checks.append(item if isinstance(item, ClaimCheck) else ClaimCheck.model_validate(item))
        except ValidationError:
            reasons.append(f"ignored claim_checks[{position}]: not a valid claim check")
    return checks


def decide_verdict(
    normalized: Mapping[str, Any] | None,
    claim_checks: Iterable[ClaimCheck | Mapping[str, Any]] | None,
    gate_result: GatekeeperResult | Mapping[str, Any] | None,
    parse_status: ParseStatusValue | ExecutorOutputParseStatus | ParsedOutput | str,
    verdict_impacts: Mapping[str, str],
    *,
    model_verdict: str | None = None,
    failed_claims: Iterable[str] | None = None,
    excluded_claims: Iterable[str] | None = None,
    code_checks: Mapping[str, ClaimCheck] | None = None,
    knowledge_tools: Iterable[str] = KNOWLEDGE_TOOLS,
    observations: Iterable[str] = (),
    off_topic: Mapping[str, str] | None = None,
    off_topic_items: Mapping[str, str] | None = None,
) -> VerdictDecision:
    """Decide PASS / LOW_CONFID / REJECT and the groundedness score; ``reasons`` name the matrix rows that fired.

    ``failed_claims`` / ``excluded_claims`` default to what ``gate_result.errors`` targets. ``code_checks`` (code's
    labels) stand instead of the model's; every label is then capped and overridden by fail-level Gatekeeper errors,
    so code never makes a verdict more favourable than §17 allows. ``observations`` (claims code added) never make
    verdict or score more favourable. ``off_topic`` claims are never confirmed, and PASS needs a directly observed
    critical claim outside them (else LOW_CONFID, row ``off_topic``). ``off_topic_items`` (hypotheses, gaps and
    actions about something else) are recorded for the Composer input, which leaves them out. Never raises on data.
    """
    reasons: list[str] = []
    model = cast(Verdict, model_verdict) if model_verdict in VERDICTS else None
    status = _parse_status_value(parse_status)
    gate = _gate(gate_result)
    if status != "valid" or not isinstance(normalized, Mapping):
        return _parse_failure(status, model, gate)
    impacts = dict(verdict_impacts or {})
    failed, excluded = _targeted(normalized, gate, impacts, failed_claims, excluded_claims)
    claims = [(claim_key(claim, index), claim) for index, claim in iter_claims(normalized)]
    known = {key for key, _ in claims}
    chosen, ignored, sources = _chosen_checks(known, claim_checks, code_checks, reasons)
    labels = _effective_labels(claims, chosen, sources, ceilings_of(normalized, knowledge_tools), failed | excluded,
                               reasons)
    verdict, rows, scored = _matrix(claims, labels, gate, impacts, set(observations) & known, reasons)
    unrelated = {key: why for key, why in (off_topic or {}).items() if key in known}
    reasons += [f"claim {key} is not about the question ({why}): never shown as confirmed"
                for key, why in sorted(unrelated.items())]
    if verdict == "PASS" and unrelated and not any(
            labels.effective[key] == "direct_observation" and key not in unrelated for key in labels.critical):
        verdict, rows = "LOW_CONFID", [MatrixRow(code="off_topic", text=(
            "§17 LOW_CONFID (issue 18): no directly observed critical claim is about the question; "
            + "; ".join(f"{key}: {why}" for key, why in sorted(unrelated.items()))))]
    reasons[:0] = [row.text for row in rows]
    score = 0.0 if verdict == "REJECT" or not scored else (
        sum(SCORE_OF[labels.effective[k]] for k in scored) / len(scored))
    if model is not None and model != verdict:
        reasons.append(f"the Verifier proposed {model}; the code decided {verdict}")
    return VerdictDecision(
        verdict=verdict, model_verdict=model, groundedness_score=round(min(1.0, max(0.0, score)), 4),
        facts_checked=labels.facts, critical_fact_count=len(labels.critical), reasons=reasons,
        effective_checks=labels.effective, ignored_checks=ignored, claim_checks=chosen,
        excluded_claims=[k for k, _ in claims if k in excluded], failed_claims=[k for k, _ in claims if k in failed],
        critical_claims=labels.critical, parse_status="valid", gate_status=gate.status,
        summary=SUMMARY_OF[rows[0].code], rows=rows, label_sources={key: sources.get(key, "none") for key, _ in claims},
        capped=labels.capped, off_topic=unrelated, off_topic_items=dict(off_topic_items or {}),
    )


def _parse_failure(status: str, model: Verdict | None, gate: GatekeeperResult) -> VerdictDecision:
    """§15.4: an output that is missing or malformed has no claims to judge: LOW_CONFID, score 0."""
    what = f"parse status is '{status}'" if status != "valid" else "is not a JSON object"
    reason = f"§15.4 LOW_CONFID: executor output {what}: score 0, no claims to judge"
    return VerdictDecision(verdict="LOW_CONFID", model_verdict=model, groundedness_score=0.0, reasons=[reason],
                           summary=SUMMARY_OF["parse_failed"], rows=[MatrixRow(code="parse_failed", text=reason)],
                           parse_status=cast(ParseStatusValue, status if status != "valid" else "malformed"),
                           gate_status=gate.status)


def _targeted(normalized: Mapping[str, Any], gate: GatekeeperResult, impacts: Mapping[str, str],
              failed_claims: Iterable[str] | None, excluded_claims: Iterable[str] | None) -> tuple[set[str], set[str]]:
    """Claims a fail-level Gatekeeper error targets, and those of them a ``reject_on_fail`` rule excludes."""
    failed = set(failed_claims) if failed_claims is not None else set(
        claim_ids_of_targets(normalized, gate.errors, lambda e: e.level == "fail"))
    excluded = set(excluded_claims) if excluded_claims is not None else set(claim_ids_of_targets(
        normalized, gate.errors, lambda e: e.level == "fail" and impacts.get(e.rule_id) == "reject_on_fail"))
    return failed, excluded


def _chosen_checks(
    known: set[str], claim_checks: Iterable[Any] | None, code_checks: Mapping[str, ClaimCheck] | None,
    reasons: list[str],
) -> tuple[dict[str, ClaimCheck], list[ClaimCheck], dict[str, LabelSource]]:
    """One check per known claim: the model's (the less favourable of two), replaced by code's where code decided."""
    chosen: dict[str, ClaimCheck] = {}
    ignored: list[ClaimCheck] = []
    for check in _checks(claim_checks, reasons):
        if check.claim_id not in known:
            ignored.append(check)
            reasons.append(f"ignored check for unknown claim '{check.claim_id[:80]}'")
        elif check.claim_id in chosen:
            worse = min(chosen[check.claim_id], check, key=lambda c: SEVERITY_ORDER.index(c.verification))
            reasons.append(f"claim {check.claim_id} was checked twice; the less favourable judgement stands")
            chosen[check.claim_id] = worse
        else:
            chosen[check.claim_id] = check
    sources: dict[str, LabelSource] = {key: "model" for key in chosen}
    for key, check in (code_checks or {}).items():
        if key in known:
            chosen[key] = check
            sources[key] = "code"
    return chosen, ignored, sources


@dataclass
class _Labels:
    """Each claim's label after caps and Gatekeeper failures, with what the decision reports of them."""

    effective: dict[str, ClaimVerification] = field(default_factory=dict)
    critical: list[str] = field(default_factory=list)
    facts: list[FactChecked] = field(default_factory=list)
    capped: dict[str, str] = field(default_factory=dict)


def _effective_labels(
    claims: Sequence[tuple[str, Mapping[str, Any]]], chosen: Mapping[str, ClaimCheck], sources: Mapping[str, str],
    ceilings: Mapping[str, Any], targeted: set[str], reasons: list[str],
) -> _Labels:
    """No check is unsupported; a ceiling caps a label; a fail-level Gatekeeper error makes it unsupported (§15.3)."""
    labels = _Labels()
    for key, claim in claims:
        chosen_check = chosen.get(key)
        verification: ClaimVerification = chosen_check.verification if chosen_check else "unsupported"
        if chosen_check is None:
            reasons.append(f"claim {key} has no check: counted as unsupported")
        capped_to = cap(verification, ceilings.get(key))
        if capped_to != verification:
            why = ceilings[key].why
            labels.capped[key] = why
            reasons.append(f"claim {key}: {sources.get(key, 'model')} said {verification}; {why}: "
                           f"counted as {capped_to} at most")
            verification = capped_to
        if key in targeted and verification in ("direct_observation", "reasonable_inference", "overstated"):
            reasons.append(f"claim {key}: verifier said {verification}, a fail-level Gatekeeper error targets it: "
                           "counted as unsupported (§15.3)")
            verification = "unsupported"
        labels.effective[key] = verification
        critical = is_critical(claim)
        if critical:
            labels.critical.append(key)
        labels.facts.append(FactChecked(
            fact=f"{key}: {claim_text(claim)}", verification=FACT_VERIFICATION_OF[verification],
            is_critical=critical, evidence_refs=list(chosen_check.evidence_refs) if chosen_check else [],
        ))
    return labels


def _matrix(
    claims: Sequence[tuple[str, Mapping[str, Any]]], labels: _Labels, gate: GatekeeperResult,
    impacts: Mapping[str, str], added: set[str], reasons: list[str],
) -> tuple[Verdict, list[MatrixRow], list[str]]:
    """The §17 rows over every claim, and the claims the score averages; claims code added (observations) never
    make the verdict or the score more favourable than the Executor's own claims alone."""
    verdict, rows = matrix_rows(claims, labels.effective, labels.critical, gate, impacts)
    own_claims = [(key, claim) for key, claim in claims if key not in added]
    own_critical = [key for key in labels.critical if key not in added]
    if added and own_claims:
        own_verdict, own_rows = matrix_rows(own_claims, labels.effective, own_critical, gate, impacts)
        if VERDICTS.index(own_verdict) > VERDICTS.index(verdict):
            reasons.append(f"claims added by code ({', '.join(sorted(added))}) do not lift the verdict: "
                           f"{own_verdict} without them")
            verdict, rows = own_verdict, own_rows
        return verdict, rows, own_critical or [key for key, _ in own_claims]
    return verdict, rows, labels.critical or [key for key, _ in claims]
