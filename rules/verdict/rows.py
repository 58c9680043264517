"""The §17 verdict matrix itself: which rows fire for the effective labels and the Gatekeeper result.

Pure code. ``decide_verdict`` (matrix.py) works out the effective label of every claim (code's, the model's, the
caps) and hands them here; this module only reads the table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

from pydantic import BaseModel

from evigate.rules.contract import claim_text, claim_type
from evigate.rules.text.entities import extract_entities
from evigate.signatures import ClaimVerification, GatekeeperResult, Verdict

BLOCKS_PASS = frozenset({"overstated", "unsupported", "external_unknown", "contradicted"})
KEY_ENTITY_KINDS = frozenset({"service", "identifier", "error_code", "time"})

ReasonCode = Literal[
    "parse_failed", "contradicted_critical", "external_root_cause", "external_entity", "forged_evidence",
    "gate_failed", "external_unknown", "overstated", "unsupported", "contradicted", "no_claims",
    "no_direct_critical", "off_topic", "pass",
]
class MatrixRow(BaseModel):
    """One §17 row that fired: a typed code (what control flow and the summary key on) and its text (the audit's)."""

    code: ReasonCode
    text: str
    claim_id: str | None = None


def names_key_entity(text: str) -> str | None:
    for entity in extract_entities(text):
        if entity.kind in KEY_ENTITY_KINDS or (entity.kind == "number" and entity.is_key_value):
            return entity.text
    return None


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
    "off_topic": "直接观察到的关键说法都与所问的问题无关",
    "pass": "关键说法均有直接证据",
}
"""The deciding row in words a Composer may repeat: no claim ids, no rule ids, no entities."""


def matrix_rows(
    claims: Sequence[tuple[str, Mapping[str, Any]]],
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
            named = names_key_entity(claim_text(claim))
            if claim_type(claim) == "root_cause":
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
            low.append(MatrixRow(code=cast(ReasonCode, effective[key]), claim_id=key,
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
