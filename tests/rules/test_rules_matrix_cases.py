"""Data cases of the verdict matrix (cases/verdict_matrix.yaml) and the composer guard (cases/composer_guard.yaml)."""

from __future__ import annotations

from typing import Any

import pytest
from rules_casekit import load_yaml

from evigate.rules import Gatekeeper, check_composer_output, decide_verdict
from evigate.signatures import ComposerInput, ComposerOutput

VERDICT = load_yaml("verdict_matrix.yaml")
GUARD = load_yaml("composer_guard.yaml")


def _normalized(case: dict[str, Any]) -> dict[str, Any]:
    claims = [
        {
            "claim_id": item["id"],
            "claim_type": item.get("type", "symptom"),
            "claim_text": item.get("text", f"{item['id']} 的事实"),
            "support_level": "direct",
            "evidence_bindings": [
                {"tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": item.get("excerpt", "x")}
            ],
        }
        for item in case["claims"]
    ]
    return {
        "answer_version": "executor_evidence_v2",
        "claims": claims,
        "hypotheses": [],
        "recommended_actions": [],
        "missing_info": [],
    }


@pytest.mark.parametrize("case", VERDICT["cases"], ids=lambda case: case["name"])
def test_verdict_case(case: dict[str, Any]) -> None:
    checks = case.get("check_list") or [
        {"claim_id": claim_id, "verification": verification} for claim_id, verification in case["checks"].items()
    ]
    decision = decide_verdict(
        _normalized(case),
        checks,
        case.get("gate"),
        case.get("parse_status", "valid"),
        Gatekeeper.default().verdict_impacts,
        model_verdict=case.get("model_verdict"),
    )
    expect = case["expect"]
    assert decision.verdict == expect["verdict"], decision.reasons
    if "score" in expect:
        assert decision.groundedness_score == pytest.approx(expect["score"], abs=1e-4)
    for fragment in expect.get("reasons_contain", []):
        assert any(fragment in reason for reason in decision.reasons), (fragment, decision.reasons)
    for claim_id, verification in (expect.get("effective") or {}).items():
        assert decision.effective_checks[claim_id] == verification
    if "excluded" in expect:
        assert decision.excluded_claims == expect["excluded"]
    if "ignored" in expect:
        assert [check.claim_id for check in decision.ignored_checks] == expect["ignored"]
    if "facts" in expect:
        assert [[f.fact, f.verification, f.is_critical] for f in decision.facts_checked] == expect["facts"]
    if "summary" in expect:
        assert decision.summary == expect["summary"]
    if "critical_fact_count" in expect:
        assert decision.critical_fact_count == expect["critical_fact_count"]
    if decision.verdict == "REJECT":
        assert decision.groundedness_score == 0.0


@pytest.mark.parametrize("case", GUARD["cases"], ids=lambda case: case["name"])
def test_composer_guard_case(case: dict[str, Any]) -> None:
    composer_input = ComposerInput.model_validate(case.get("input", GUARD["input"]))
    output = case.get("output") or ComposerOutput(answer_summary="", user_facing_answer=case["answer"])
    violations = check_composer_output(composer_input, output)
    expected = case["violations"]
    if not expected:
        assert violations == []
    for fragment in expected:
        assert any(fragment in violation for violation in violations), (fragment, violations)
    assert len(violations) >= len(expected)
