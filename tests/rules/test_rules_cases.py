"""Every named case in tests/rules/cases/<rule id>.yaml, run through the default Gatekeeper (sqlfluff style).

A case states what one rule must conclude (pass / warn / fail, targets, message fragments) and may add what the
whole chain must decide: gate status, excluded and failed claims, and the verdict. Unless a case gives
``claim_checks``, the Verifier is played as the most favourable possible model (every claim direct_observation,
proposing PASS), so a verdict expectation shows what code alone guarantees.
"""

from __future__ import annotations

import pytest
from rules_casekit import WORLD, RuleCase, executor_output, rule_cases

from evigate.rules import Gatekeeper, decide_verdict, parse_executor_output
from evigate.rules.gate.session import claim_key, iter_claims

CASES = rule_cases()


def test_every_rule_has_a_case_file() -> None:
    assert {case.rule for case in CASES} == {spec.id for spec in Gatekeeper.default().rules}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_rule_case(case: RuleCase) -> None:
    gatekeeper = Gatekeeper.with_overrides(case.overrides()).with_vocabulary(case.vocabulary())
    spec = next(spec for spec in gatekeeper.rules if spec.id == case.rule)
    expect = case.data["expect"]
    parsed = parse_executor_output(executor_output(case.data))
    outcome = gatekeeper.validate(
        parsed,
        case.invocations(),
        case.data.get("session_id", WORLD["session_id"]),
        case.trace_summary(),
        query=case.data.get("query", WORLD["query"]),
    )
    result = outcome.result
    errors = [error for error in result.errors if error.rule_id == case.rule]
    status = "fail" if case.rule in result.failed_rules else "warn" if case.rule in result.warnings else "pass"
    assert spec.enabled or status == "pass"
    assert status == expect["result"], [error.message for error in errors]
    if "targets" in expect:
        assert sorted({error.target for error in errors}) == sorted(expect["targets"])
    for fragment in expect.get("message_contains", []):
        assert any(fragment in error.message for error in errors), (fragment, [e.message for e in errors])
    if "gate" in expect:
        assert result.status == expect["gate"], [(e.rule_id, e.message) for e in result.errors]
    if "excluded" in expect:
        assert outcome.excluded_claims == expect["excluded"]
    if "failed_claims" in expect:
        assert outcome.failed_claims == expect["failed_claims"]
    for key, value in (expect.get("normalized") or {}).items():
        assert outcome.normalized is not None and outcome.normalized[key] == value
    if "verdict" in expect:
        checks = case.data.get("claim_checks") or [
            {"claim_id": claim_key(claim, index), "verification": "direct_observation"}
            for index, claim in iter_claims(outcome.normalized)
        ]
        decision = decide_verdict(
            outcome.normalized,
            checks,
            result,
            parsed.status,
            gatekeeper.verdict_impacts,
            model_verdict=case.data.get("model_verdict", "PASS"),
            failed_claims=outcome.failed_claims,
            excluded_claims=outcome.excluded_claims,
        )
        assert decision.verdict == expect["verdict"], decision.reasons
