"""Gatekeeper behaviour beyond single rules: §12 result shape, fail-closed rules, session indexes across rounds."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from rules_casekit import WORLD, world_invocations

from evigate.rules import Gatekeeper, Rule, RuleContext, RuleFinding, RuleParams, parse_executor_output
from evigate.rules.builtin import RULE_CLASSES
from evigate.signatures import ToolInvocation

OUTPUT = {
    "answer_version": "executor_evidence_v2",
    "claims": [
        {
            "claim_id": "claim-1",
            "claim_type": "symptom",
            "claim_text": "payment-service 出现 ERR_TIMEOUT",
            "support_level": "direct",
            "evidence_bindings": [
                {
                    "tool_name": "query_logs",
                    "source_invocation_ids": [394],
                    "evidence_excerpt": "ERR_TIMEOUT request timeout after 5300ms",
                },
                {"tool_name": "query_logs", "source_invocation_ids": [4242], "evidence_excerpt": "x"},
            ],
        },
    ],
}


def test_result_shape_follows_section_12() -> None:
    outcome = Gatekeeper.default().validate(parse_executor_output(OUTPUT), world_invocations(), "s-1")
    result = outcome.result
    assert result.status == "fail" and result.failed_rules == ["evidence.invocation_ref"]
    assert [(e.rule_id, e.target, e.level) for e in result.errors] == [
        ("evidence.invocation_ref", "claims[0].evidence_bindings[1]", "fail")
    ]
    assert outcome.excluded_claims == outcome.failed_claims == ["claim-1"]
    assert outcome.parse_status is not None and outcome.parse_status.status == "valid"
    assert set(result.model_dump()) == {"status", "failed_rules", "warnings", "errors"}


def test_raw_text_dicts_and_row_mappings_are_accepted() -> None:
    rows = [item.model_dump() for item in world_invocations()] + [{"id": "not-an-id"}, "garbage"]
    trace = [
        {
            "trace_ref": "t1",
            "tool_name": "query_logs",
            "success": True,
            "input_summary": "i",
            "output_summary": "o",
            "evidence_level": "direct",
            "source_invocation_ids": [394],
        },
        {"bad": 1},
    ]
    gatekeeper = Gatekeeper.default()
    for parsed in ('```json\n{"answer_version": "executor_evidence_v2", "claims": []}\n```', OUTPUT):
        outcome = gatekeeper.validate(parsed, rows, "s-1", trace, query=WORLD["query"])
        assert outcome.normalized is not None


class _Exploding(Rule):
    """A rule with a bug."""

    id = "test.exploding"
    Params = RuleParams

    def validate(self, context: RuleContext, params: RuleParams) -> list[RuleFinding]:
        raise ZeroDivisionError("boom")


def test_a_crashing_rule_fails_closed() -> None:
    base = Gatekeeper.default()
    spec = base.rules[0].model_copy(update={"id": "test.exploding", "verdict_impact": "low_confid_on_fail"})
    gatekeeper = Gatekeeper({"test.exploding": spec}, {**RULE_CLASSES, "test.exploding": _Exploding})
    outcome = gatekeeper.validate(OUTPUT, [], "s-1")
    assert outcome.result.status == "fail"
    assert "rule could not run: ZeroDivisionError: boom" in outcome.result.errors[0].message
    assert gatekeeper.with_overrides({}).rule_class("test.exploding") is _Exploding


def test_session_index_is_reused_across_rounds() -> None:
    gatekeeper = Gatekeeper.default()
    round_one = world_invocations()
    first = gatekeeper.session_index(round_one, "s-1")
    assert gatekeeper.session_index(round_one, "s-1") is first
    extra = ToolInvocation(id=500, session_id="s-1", tool_name="query_logs", output_preview="round two")
    second = gatekeeper.session_index([*round_one, extra], "s-1")
    assert second is not first
    assert second.by_id[394] is first.by_id[394]  # round 1's texts are not rebuilt
    assert 500 in second.by_id and 500 not in first.by_id


def test_equal_but_different_invocations_are_not_confused() -> None:
    gatekeeper = Gatekeeper.default()
    old = [ToolInvocation(id=1, session_id="s", tool_name="query_logs", output_preview="ERR_TIMEOUT seen")]
    new = [ToolInvocation(id=1, session_id="s", tool_name="query_logs", output_preview="nothing here")]
    claim = {
        "answer_version": "executor_evidence_v2",
        "claims": [
            {
                "claim_id": "c",
                "claim_type": "symptom",
                "claim_text": "出现 ERR_TIMEOUT",
                "support_level": "direct",
                "evidence_bindings": [
                    {"tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": "ERR_TIMEOUT seen"}
                ],
            }
        ],
    }
    assert gatekeeper.validate(claim, old, "s").result.status == "pass"
    assert gatekeeper.validate(claim, new, "s").result.status == "fail"


def test_one_gatekeeper_serves_parallel_validations() -> None:
    gatekeeper = Gatekeeper.default()

    def run(index: int) -> str:
        invocations = [item.model_copy() for item in world_invocations()]
        return gatekeeper.validate(OUTPUT, invocations, "s-1").result.status

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert set(pool.map(run, range(24))) == {"fail"}
