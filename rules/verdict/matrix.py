"""decide_verdict: the §17 matrix in code, with the groundedness mapping and facts_checked of ARCHITECTURE.md.

The Verifier model proposes ``claim_checks``; this code decides. A weak or manipulated Verifier can lower a verdict,
never raise it past what the evidence allows: a claim a fail-level Gatekeeper error targets counts as
``unsupported`` at best, a claim with no check counts as ``unsupported``, and checks naming unknown claims are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, ValidationError

from evigate.rules.engine.gatekeeper import claim_ids_of_targets
from evigate.rules.gate.parsing import ParsedOutput
from evigate.rules.gate.session import claim_key, iter_claims, text_of
from evigate.rules.verdict.confirmation import KNOWLEDGE_TOOLS, cap, ceilings_of
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

SCORE_OF: dict[str, float] = {
    "direct_observation": 1.0, "reasonable_inference": 0.6, "overstated": 0.6,
    "unsupported": 0.0, "external_unknown": 0.0, "contradicted": 0.0,
}
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

    @property
    def code_confirmed(self) -> list[str]:
        """Claims code labelled direct_observation (they restate a cited output)."""
        return [key for key, source in self.label_sources.items()
                if source == "code" and self.claim_checks.get(key) is not None
                and self.claim_checks[key].verification == "direct_observation"]


def is_critical(claim: Mapping[str, Any]) -> bool:
    """§16.1.1: root_cause / symptom / impact / risk are critical; an unknown type is treated as critical too."""
    claim_type = claim.get("claim_type")
    return claim_type in CRITICAL_CLAIM_TYPES or claim_type not in NON_CRITICAL_TYPES


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
) -> VerdictDecision:
    """Decide PASS / LOW_CONFID / REJECT and the groundedness score; ``reasons`` name the matrix rows that fired.

    ``failed_claims`` / ``excluded_claims`` default to what ``gate_result.errors`` targets (``GateOutcome`` carries
    both). ``code_checks`` are the labels code decided (``confirm_by_code``): they stand instead of the model's.
    Every label, code's or the model's, is then capped (``ceilings_of``) and overridden by fail-level Gatekeeper
    errors, so code-confirmed labels never make a verdict more favourable than §17 allows. ``observations`` are
    claims code added beside a capped claim (``add_excerpt_observations``): they are judged and shown like any claim,
    but the verdict and score are never more favourable than without them. ``off_topic`` (claim id → why,
    ``off_topic_claims``) names claims that are not about the question: they are never shown as confirmed, and a
    PASS needs a directly observed critical claim outside it (else LOW_CONFID, row ``off_topic``). Never raises on
    data.
    """
    reasons: list[str] = []
    model = cast(Verdict, model_verdict) if model_verdict in VERDICTS else None
    status = _parse_status_value(parse_status)
    gate = _gate(gate_result)
    if status != "valid" or not isinstance(normalized, Mapping):
        what = f"parse status is '{status}'" if status != "valid" else "is not a JSON object"
        reasons.append(f"§15.4 LOW_CONFID: executor output {what}: score 0, no claims to judge")
        row = MatrixRow(code="parse_failed", text=reasons[0])
        return VerdictDecision(verdict="LOW_CONFID", model_verdict=model, groundedness_score=0.0, reasons=reasons,
                               summary=SUMMARY_OF["parse_failed"], rows=[row],
                               parse_status=cast(ParseStatusValue, status if status != "valid" else "malformed"),
                               gate_status=gate.status)
    impacts = dict(verdict_impacts or {})
    failed = set(failed_claims) if failed_claims is not None else set(
        claim_ids_of_targets(normalized, gate.errors, lambda e: e.level == "fail"))
    excluded = set(excluded_claims) if excluded_claims is not None else set(claim_ids_of_targets(
        normalized, gate.errors, lambda e: e.level == "fail" and impacts.get(e.rule_id) == "reject_on_fail"))

    claims = [(claim_key(claim, index), claim) for index, claim in iter_claims(normalized)]
    known = {key for key, _ in claims}
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
    ceilings = ceilings_of(normalized, knowledge_tools)
    capped: dict[str, str] = {}

    effective: dict[str, ClaimVerification] = {}
    critical_keys: list[str] = []
    facts: list[FactChecked] = []
    for key, claim in claims:
        chosen_check = chosen.get(key)
        verification: ClaimVerification = chosen_check.verification if chosen_check else "unsupported"
        if chosen_check is None:
            reasons.append(f"claim {key} has no check: counted as unsupported")
        capped_to = cap(verification, ceilings.get(key))
        if capped_to != verification:
            why = ceilings[key].why
            capped[key] = why
            reasons.append(f"claim {key}: {sources.get(key, 'model')} said {verification}; {why}: "
                           f"counted as {capped_to} at most")
            verification = capped_to
        if (key in failed or key in excluded) and verification in ("direct_observation", "reasonable_inference",
                                                                      "overstated"):
            reasons.append(f"claim {key}: verifier said {verification}, a fail-level Gatekeeper error targets it: "
                           "counted as unsupported (§15.3)")
            verification = "unsupported"
        effective[key] = verification
        critical = is_critical(claim)
        if critical:
            critical_keys.append(key)
        facts.append(FactChecked(
            fact=f"{key}: {text_of(claim, 'claim_text')}", verification=FACT_VERIFICATION_OF[verification],
            is_critical=critical, evidence_refs=list(chosen_check.evidence_refs) if chosen_check else [],
        ))

    verdict, rows = matrix_rows(claims, effective, critical_keys, gate, impacts)
    added = set(observations) & known
    own_claims = [(key, claim) for key, claim in claims if key not in added]
    own_critical = [key for key in critical_keys if key not in added]
    if added and own_claims:
        own_verdict, own_rows = matrix_rows(own_claims, effective, own_critical, gate, impacts)
        if VERDICTS.index(own_verdict) > VERDICTS.index(verdict):
            reasons.append(f"claims added by code ({', '.join(sorted(added))}) do not lift the verdict: "
                           f"{own_verdict} without them")
            verdict, rows = own_verdict, own_rows
    unrelated = {key: why for key, why in (off_topic or {}).items() if key in known}
    reasons += [f"claim {key} is not about the question ({why}): never shown as confirmed"
                for key, why in sorted(unrelated.items())]
    if verdict == "PASS" and unrelated and not any(
            effective[key] == "direct_observation" and key not in unrelated for key in critical_keys):
        verdict, rows = "LOW_CONFID", [MatrixRow(code="off_topic", text=(
            "§17 LOW_CONFID (issue 18): no directly observed critical claim is about the question; "
            + "; ".join(f"{key}: {why}" for key, why in sorted(unrelated.items()))))]
    reasons[:0] = [row.text for row in rows]
    # The score, too, is the Executor's own claims': an added observation never raises it.
    scored = (own_critical or [key for key, _ in own_claims]) if added and own_claims else (
        critical_keys or [key for key, _ in claims])
    score = 0.0 if verdict == "REJECT" or not scored else sum(SCORE_OF[effective[k]] for k in scored) / len(scored)
    if model is not None and model != verdict:
        reasons.append(f"the Verifier proposed {model}; the code decided {verdict}")
    return VerdictDecision(
        verdict=verdict, model_verdict=model, groundedness_score=round(min(1.0, max(0.0, score)), 4),
        facts_checked=facts, critical_fact_count=len(critical_keys), reasons=reasons, effective_checks=effective,
        ignored_checks=ignored, claim_checks=chosen, excluded_claims=[k for k, _ in claims if k in excluded],
        failed_claims=[k for k, _ in claims if k in failed], critical_claims=critical_keys, parse_status="valid",
        gate_status=gate.status, summary=SUMMARY_OF[rows[0].code], rows=rows,
        label_sources={key: sources.get(key, "none") for key, _ in claims}, capped=capped, off_topic=unrelated,
    )
