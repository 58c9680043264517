"""decide_verdict: the §17 matrix in code, with the groundedness mapping and facts_checked of ARCHITECTURE.md.

The Verifier model proposes ``claim_checks``; this code decides. A weak or manipulated Verifier can lower a verdict,
never raise it past what the evidence allows: a claim a fail-level Gatekeeper error targets counts as
``unsupported`` at best, a claim with no check counts as ``unsupported``, and checks naming unknown claims are ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from evigate.rules.gate.gatekeeper import claim_ids_of_targets
from evigate.rules.gate.parsing import ParsedOutput
from evigate.rules.gate.session import claim_key, iter_claims, text_of
from evigate.rules.text.entities import extract_entities
from evigate.rules.verdict.confirmation import KNOWLEDGE_TOOLS, cap, ceilings_of
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
BLOCKS_PASS = frozenset({"overstated", "unsupported", "external_unknown", "contradicted"})
ALLOWED_VERIFICATIONS = frozenset({"direct_observation", "reasonable_inference"})
# Least favourable first: when a model checks one claim twice, the worse judgement stands.
SEVERITY_ORDER = ("contradicted", "external_unknown", "unsupported", "overstated", "reasonable_inference",
                  "direct_observation")
NON_CRITICAL_TYPES = frozenset({"context", "remediation"})
KEY_ENTITY_KINDS = frozenset({"service", "identifier", "error_code", "time"})
VERDICTS = ("PASS", "LOW_CONFID", "REJECT")

ReasonCode = Literal[
    "parse_failed", "contradicted_critical", "external_root_cause", "external_entity", "forged_evidence",
    "gate_failed", "external_unknown", "overstated", "unsupported", "contradicted", "no_claims",
    "no_direct_critical", "pass",
]
LabelSource = Literal["code", "model", "none"]


class MatrixRow(BaseModel):
    """One §17 row that fired: a typed code (what control flow and the summary key on) and its text (the audit's)."""

    code: ReasonCode
    text: str
    claim_id: str | None = None


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


def _names_key_entity(text: str) -> str | None:
    for entity in extract_entities(text):
        if entity.kind in KEY_ENTITY_KINDS or (entity.kind == "number" and entity.is_key_value):
            return entity.text
    return None


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
) -> VerdictDecision:
    """Decide PASS / LOW_CONFID / REJECT and the groundedness score; ``reasons`` name the matrix rows that fired.

    ``failed_claims`` / ``excluded_claims`` default to what ``gate_result.errors`` targets (``GateOutcome`` carries
    both). ``code_checks`` are the labels code decided (``confirm_by_code``): they stand instead of the model's.
    Every label, code's or the model's, is then capped (``ceilings_of``) and overridden by fail-level Gatekeeper
    errors, so code-confirmed labels never make a verdict more favourable than §17 allows. ``observations`` are
    claims code added beside a capped claim (``add_excerpt_observations``): they are judged and shown like any claim,
    but the verdict and score are never more favourable than without them. Never raises on data.
    """
    reasons: list[str] = []
    model = model_verdict if model_verdict in VERDICTS else None
    status = _parse_status_value(parse_status)
    gate = _gate(gate_result)
    if status != "valid" or not isinstance(normalized, Mapping):
        what = f"parse status is '{status}'" if status != "valid" else "is not a JSON object"
        reasons.append(f"§15.4 LOW_CONFID: executor output {what}: score 0, no claims to judge")
        row = MatrixRow(code="parse_failed", text=reasons[0])
        return VerdictDecision(verdict="LOW_CONFID", model_verdict=model, groundedness_score=0.0, reasons=reasons,
                               summary=SUMMARY_OF["parse_failed"], rows=[row],
                               parse_status=status if status != "valid" else "malformed",  # type: ignore[arg-type]
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
        check = chosen.get(key)
        verification: ClaimVerification = check.verification if check else "unsupported"
        if check is None:
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
            is_critical=critical, evidence_refs=list(check.evidence_refs) if check else [],
        ))

    verdict, rows = _matrix(claims, effective, critical_keys, gate, impacts)
    added = set(observations) & known
    own_claims = [(key, claim) for key, claim in claims if key not in added]
    own_critical = [key for key in critical_keys if key not in added]
    if added and own_claims:
        own_verdict, own_rows = _matrix(own_claims, effective, own_critical, gate, impacts)
        if VERDICTS.index(own_verdict) > VERDICTS.index(verdict):
            reasons.append(f"claims added by code ({', '.join(sorted(added))}) do not lift the verdict: "
                           f"{own_verdict} without them")
            verdict, rows = own_verdict, own_rows
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
        label_sources={key: sources.get(key, "none") for key, _ in claims}, capped=capped,
    )


SUMMARY_OF: dict[ReasonCode, str] = {
    "parse_failed": "执行器输出无法解析，没有可核对的结构化证据",
    "contradicted_critical": "存在与工具证据相矛盾的关键说法",
    "external_root_cause": "存在证据之外的根因",
    "external_entity": "存在证据之外的关键实体",
    "forged_evidence": "部分说法引用的证据无法核实",
    "gate_failed": "结构化输出未通过确定性校验",
    "external_unknown": "部分说法涉及证据之外的信息",
    "overstated": "部分说法超出了现有证据",
    "unsupported": "部分说法缺少证据支持",
    "contradicted": "部分说法与工具证据相矛盾",
    "no_claims": "没有可确认的说法",
    "no_direct_critical": "关键说法缺少直接证据",
    "pass": "关键说法均有直接证据",
}
"""The deciding row in words a Composer may repeat: no claim ids, no rule ids, no entities."""
SUMMARY_PARSE = SUMMARY_OF["parse_failed"]


def _matrix(
    claims: list[tuple[str, Mapping[str, Any]]],
    effective: Mapping[str, ClaimVerification],
    critical_keys: list[str],
    gate: GatekeeperResult,
    impacts: Mapping[str, str],
) -> tuple[Verdict, list[MatrixRow]]:
    """The §17 rows that fire, REJECT first, then what keeps the output from PASS."""
    critical = set(critical_keys)
    reject: list[MatrixRow] = []
    for key, claim in claims:
        verification = effective[key]
        if key in critical and verification == "contradicted":
            reject.append(MatrixRow(code="contradicted_critical", claim_id=key,
                                    text=f"§17 REJECT: critical claim {key} is contradicted by the evidence"))
        if key in critical and verification == "external_unknown":
            named = _names_key_entity(text_of(claim, "claim_text"))
            if claim.get("claim_type") == "root_cause":
                reject.append(MatrixRow(code="external_root_cause", claim_id=key, text=(
                    f"§17 REJECT: critical claim {key} brings a root cause from outside the evidence")))
            elif named:
                reject.append(MatrixRow(code="external_entity", claim_id=key, text=(
                    f"§17 REJECT: critical claim {key} is external_unknown and names '{named}'")))
    forged = [rule for rule in gate.failed_rules if impacts.get(rule) == "reject_on_fail"]
    if gate.status == "fail" and forged:
        reject.append(MatrixRow(code="forged_evidence", text=(
            f"§17 REJECT: Gatekeeper rule(s) {', '.join(forged)} (reject_on_fail) failed: forged evidence")))
    if reject:
        return "REJECT", reject

    low: list[MatrixRow] = []
    if gate.status == "fail":
        low.append(MatrixRow(code="gate_failed", text=(
            f"§17 LOW_CONFID: Gatekeeper failed ({', '.join(gate.failed_rules) or 'unknown rule'}), "
            "not as forgery; a failure forbids PASS")))
    for key, _ in claims:
        if effective[key] in BLOCKS_PASS:
            low.append(MatrixRow(code=effective[key], claim_id=key,  # type: ignore[arg-type]
                                 text=f"§17 LOW_CONFID: claim {key} is {effective[key]}"))
    if not claims:
        low.append(MatrixRow(code="no_claims", text="§17 LOW_CONFID: the output has no claims"))
    elif not any(effective[key] == "direct_observation" for key in critical_keys):
        low.append(MatrixRow(code="no_direct_critical", text=(
            "§17 LOW_CONFID: no critical claim is a direct_observation"
            + (" (critical claims are only reasonable_inference)" if critical_keys else " (no critical claims)"))))
    if low:
        return "LOW_CONFID", low
    direct = sum(1 for key in critical_keys if effective[key] == "direct_observation")
    return "PASS", [MatrixRow(code="pass", text=(
        f"§17 PASS: Gatekeeper did not fail, every claim is direct_observation or reasonable_inference, "
        f"{direct} critical claim(s) directly observed"))]
