"""Composer input (§19.2.1), output guard, code-assembled answer (V1 用户侧输出协议), retry context, rule score."""

from __future__ import annotations

from typing import Any

import pytest
from rules_casekit import WORLD, world_invocations

from evigate.rules import (
    OUTPUT_TYPE_OF_VERDICT,
    Gatekeeper,
    build_composer_input,
    build_retry_context,
    check_composer_output,
    decide_verdict,
    parse_executor_output,
    render_answer,
    render_parse_failure,
    score_rule_evaluation,
)
from evigate.signatures import ComposerOutput

QUERY = WORLD["query"]
CLAIMS = [
    {
        "claim_id": "claim-1",
        "claim_type": "symptom",
        "claim_text": "payment-service 出现 ERR_TIMEOUT，请求耗时 5.3 秒",
        "support_level": "direct",
        "evidence_bindings": [
            {
                "tool_name": "query_logs",
                "source_invocation_ids": [394],
                "evidence_excerpt": "ERR_TIMEOUT request timeout after 5300ms",
            }
        ],
    },
    {
        "claim_id": "claim-2",
        "claim_type": "symptom",
        "claim_text": "payment-service CPU 使用率 92%",
        "support_level": "direct",
        "evidence_bindings": [
            {"tool_name": "query_metrics", "source_invocation_ids": [395], "evidence_excerpt": '"cpu_usage": "92%"'}
        ],
    },
    {
        "claim_id": "claim-3",
        "claim_type": "root_cause",
        "claim_text": "CPU 过高是支付超时的唯一根因",
        "support_level": "indirect",
        "evidence_bindings": [
            {"tool_name": "query_metrics", "source_invocation_ids": [395], "evidence_excerpt": '"cpu_usage": "92%"'}
        ],
    },
    {
        "claim_id": "claim-4",
        "claim_type": "symptom",
        "claim_text": "redis-cluster 主节点故障",
        "support_level": "direct",
        "evidence_bindings": [
            {
                "tool_name": "query_logs",
                "source_invocation_ids": [394],
                "evidence_excerpt": "ERR_TIMEOUT request timeout",
            }
        ],
    },
    {
        "claim_id": "claim-5",
        "claim_type": "impact",
        "claim_text": "订单 123 支付失败",
        "support_level": "direct",
        "evidence_bindings": [
            {"tool_name": "query_order", "source_invocation_ids": [397], "evidence_excerpt": '"status": "FAILED"'}
        ],
    },
]
OUTPUT = {
    "answer_version": "executor_evidence_v2",
    "claims": CLAIMS,
    "hypotheses": [
        {"hypothesis_text": "连接池压力可能参与了超时问题", "basis": "缺少指标", "needed_evidence": ["HikariCP 指标"]},
        {"hypothesis_text": "网关超时阈值偏低", "basis": "无", "needed_evidence": []},
    ],
    "recommended_actions": [
        {"action_text": "补充查询连接池 active/idle/pending 指标", "reason": "确认连接池是否达到上限"},
        {"action_text": "重启 payment-service", "reason": "快速恢复"},
    ],
    "missing_info": ["缺少连接池指标，无法确认连接池耗尽是根因。"],
}


def run(checks: dict[str, str], output: dict[str, Any] | None = None, hypothesis_checks: list | None = None):
    gatekeeper = Gatekeeper.default()
    parsed = parse_executor_output(output or OUTPUT)
    gate = gatekeeper.validate(parsed, world_invocations(), WORLD["session_id"], query=QUERY)
    verifier = {
        "verdict": "PASS",
        "rationale": "证据充分。",
        "claim_checks": [{"claim_id": k, "verification": v} for k, v in checks.items()],
        "hypothesis_checks": hypothesis_checks or [],
    }
    decision = decide_verdict(
        gate.normalized,
        verifier["claim_checks"],
        gate.result,
        parsed.status,
        gatekeeper.verdict_impacts,
        model_verdict="PASS",
        failed_claims=gate.failed_claims,
        excluded_claims=gate.excluded_claims,
    )
    return gate, decision, build_composer_input(QUERY, gate.normalized, verifier, decision)


DIRECT = {
    "claim-1": "direct_observation",
    "claim-2": "direct_observation",
    "claim-3": "overstated",
    "claim-4": "direct_observation",
    "claim-5": "direct_observation",
}


def test_forged_claim_is_dropped_from_everything_a_user_sees() -> None:
    gate, decision, composer_input = run(DIRECT)
    assert gate.excluded_claims == ["claim-4"]  # redis-cluster occurs nowhere: claim.external_entity
    assert decision.verdict == "REJECT"
    text = composer_input.model_dump_json()
    assert "redis-cluster" not in text
    assert "部分说法引用的证据无法核实，已不予采用" in composer_input.missing_info
    assert "redis-cluster" not in render_answer(composer_input, None)
    retry = build_retry_context(decision, gate.normalized, 1, [])
    assert not any("redis-cluster" in gap for gap in retry.missing_evidence_facts)


def test_reject_input_has_no_hypotheses_no_root_cause_and_only_evidence_actions() -> None:
    _, decision, composer_input = run(DIRECT)
    assert decision.verdict == "REJECT" and composer_input.verdict == "REJECT"
    assert composer_input.allowed_hypotheses == []
    assert all(claim.claim_type != "root_cause" for claim in composer_input.allowed_claims)
    actions = [action.action_text for action in composer_input.recommended_actions]
    assert "重启 payment-service" not in actions
    assert "补充查询连接池 active/idle/pending 指标" in actions
    assert any("人工复核" in action for action in actions)
    assert any("说法超出了现有证据" in gap for gap in composer_input.missing_info)  # overstated → gap under REJECT


def test_low_confid_input_downgrades_overstated_claims_to_hypotheses() -> None:
    output = {**OUTPUT, "claims": [c for c in CLAIMS if c["claim_id"] != "claim-4"]}
    checks = {k: v for k, v in DIRECT.items() if k != "claim-4"}
    _, decision, composer_input = run(checks, output)
    assert decision.verdict == "LOW_CONFID"
    assert [claim.claim_id for claim in composer_input.allowed_claims] == ["claim-1", "claim-2", "claim-5"]
    hypotheses = [h.hypothesis_text for h in composer_input.allowed_hypotheses]
    assert hypotheses == ["CPU 过高是支付超时的唯一根因", "连接池压力可能参与了超时问题", "网关超时阈值偏低"]
    assert "重启 payment-service" in [a.action_text for a in composer_input.recommended_actions]
    assert composer_input.rationale.startswith(
        "系统按证据规则判定为“低置信”（部分说法超出了现有证据），与 Verifier 的“证据充分”不同。"
    )
    assert composer_input.rationale.endswith("证据充分。")


def test_hypothesis_checks_filter_hypotheses() -> None:
    output = {**OUTPUT, "claims": CLAIMS[:2]}
    _, _, composer_input = run(
        {"claim-1": "direct_observation", "claim-2": "reasonable_inference"},
        output,
        [
            {"hypothesis_index": 1, "verification": "overstated_as_fact"},
            {"hypothesis_index": 0, "verification": "reasonable_hypothesis"},
        ],
    )
    assert [h.hypothesis_text for h in composer_input.allowed_hypotheses] == ["连接池压力可能参与了超时问题"]


def test_unsupported_and_external_claims_become_gaps_and_contradicted_ones_are_not_quoted() -> None:
    output = {**OUTPUT, "claims": [c for c in CLAIMS if c["claim_id"] != "claim-4"]}
    checks = {
        "claim-1": "direct_observation",
        "claim-2": "unsupported",
        "claim-3": "external_unknown",
        "claim-5": "contradicted",
    }
    _, decision, composer_input = run(checks, output)
    assert decision.verdict == "REJECT"  # claim-5 (impact) is a critical contradicted claim
    gaps = composer_input.missing_info
    assert "“payment-service CPU 使用率 92%”缺少直接证据，尚未确认" in gaps
    assert any("涉及证据之外的信息" in gap and "唯一根因" in gap for gap in gaps)
    assert "部分说法与工具证据相矛盾，已不予采用" in gaps
    assert not any("订单 123 支付失败" in gap for gap in gaps)
    assert "缺少连接池指标，无法确认连接池耗尽是根因。" in gaps


def test_pass_input_and_answer() -> None:
    output = {**OUTPUT, "claims": CLAIMS[:2], "missing_info": []}
    _, decision, composer_input = run({"claim-1": "direct_observation", "claim-2": "reasonable_inference"}, output)
    assert decision.verdict == "PASS" and composer_input.rationale == "证据充分。"
    good = ComposerOutput(
        answer_summary="payment-service 超时",
        user_facing_answer="payment-service 出现 ERR_TIMEOUT，请求耗时 5.3 秒，CPU 使用率 92%。",
    )
    assert check_composer_output(composer_input, good) == []
    assert render_answer(composer_input, good) == good.user_facing_answer
    forged = good.model_copy(update={"user_facing_answer": "payment-service 因 ERR_DB_DEADLOCK 超时。"})
    fallback = render_answer(composer_input, forged)
    assert "ERR_DB_DEADLOCK" not in fallback and "payment-service 出现 ERR_TIMEOUT" in fallback


def test_low_confid_answer_is_disclaimer_plus_composer_text_plus_gaps() -> None:
    output = {**OUTPUT, "claims": CLAIMS[:2]}
    _, decision, composer_input = run({"claim-1": "direct_observation", "claim-2": "unsupported"}, output)
    assert decision.verdict == "LOW_CONFID"
    composed = ComposerOutput(
        answer_summary="超时",
        user_facing_answer="payment-service 出现 ERR_TIMEOUT，耗时 5.3 秒；"
        "连接池是否耗尽尚未确认，建议补充连接池指标。",
    )
    answer = render_answer(composer_input, composed)
    assert answer.startswith(
        "以下结论基于当前已获取证据，仍存在部分证据缺口，请谨慎参考。\n\n" + composed.user_facing_answer
    )
    assert "当前缺口：\n• “payment-service CPU 使用率 92%”缺少直接证据，尚未确认" in answer


def test_degraded_answer_is_fully_code_rendered() -> None:
    _, _, composer_input = run(DIRECT)
    composer_text = ComposerOutput(answer_summary="x", user_facing_answer="根因是 CPU 过高。")
    answer = render_answer(composer_input, composer_text)
    assert answer.startswith("当前无法基于已获取证据生成可靠结论，建议人工介入。")
    assert "已确认信息：" in answer and "证据缺口：" in answer and "建议下一步：" in answer
    assert "根因是 CPU 过高" not in answer
    assert check_composer_output(composer_input, ComposerOutput(answer_summary="", user_facing_answer=answer)) == []
    english = render_answer(composer_input, None, locale="en")
    assert english.startswith("A reliable conclusion cannot be drawn") and "Evidence gaps:" in english


def test_deterministic_renderer_marks_causal_claims_as_unconfirmed() -> None:
    claim = {**CLAIMS[0], "claim_text": "日志显示 payment-service 因为 ERR_TIMEOUT 导致支付失败"}
    output = {**OUTPUT, "claims": [claim, CLAIMS[1]]}
    _, decision, composer_input = run({"claim-1": "direct_observation", "claim-2": "unsupported"}, output)
    answer = render_answer(composer_input, None)
    assert decision.verdict == "LOW_CONFID"
    assert "• 待确认：日志显示 payment-service 因为 ERR_TIMEOUT 导致支付失败" in answer
    assert check_composer_output(composer_input, ComposerOutput(answer_summary="", user_facing_answer=answer)) == []


def test_parse_failure_template() -> None:
    text = render_parse_failure("订单 123 **支付**失败\n# 为什么", "malformed")
    assert text.startswith("以下结论基于当前已获取证据")
    assert "执行器输出格式错误" in text and "#" not in text.replace("＃", "") and "**" not in text
    assert "executor output was missing" in render_parse_failure("q", "missing", locale="en")


def test_output_type_of_verdict() -> None:
    assert OUTPUT_TYPE_OF_VERDICT == {
        "PASS": "NORMAL",
        "LOW_CONFID": "LOW_CONFID_WITH_DISCLAIMER",
        "REJECT": "DEGRADED",
    }


def test_retry_context_lists_critical_gaps_in_v1_phrasing() -> None:
    output = {**OUTPUT, "claims": [c for c in CLAIMS if c["claim_id"] != "claim-4"]}
    gate, decision, _ = run(
        {"claim-1": "direct_observation", "claim-2": "reasonable_inference", "claim-5": "unsupported"}, output
    )
    retry = build_retry_context(decision, gate.normalized, 1, ["query_logs(service=payment-service)"])
    assert retry.missing_evidence_facts == [
        "“payment-service CPU 使用率 92%”只有间接支持",
        "“CPU 过高是支付超时的唯一根因”缺少直接证据",
        "“订单 123 支付失败”缺少直接证据",
    ]
    assert retry.round == 1 and retry.completed_queries == ["query_logs(service=payment-service)"]
    assert retry.instruction == "仅补充以上断言相关证据，不要重复已完成检索"


def test_rule_evaluation_factors() -> None:
    gate, _, _ = run(DIRECT)
    evaluation = score_rule_evaluation(gate.normalized, world_invocations(), gate.result)
    names = [factor.name for factor in evaluation.factors]
    assert names == [
        "bound_claim_ratio",
        "excerpt_similarity",
        "invocation_success_ratio",
        "evidence_tool_diversity",
        "gatekeeper_status",
    ]
    assert 0 <= evaluation.evidence_score <= 100
    assert evaluation.factors[-1].points == 0.0  # the gate failed
    empty = score_rule_evaluation(None, [], None)
    assert empty.evidence_score == 10  # only a passing (empty) gate scores


@pytest.mark.parametrize("verdict", ["PASS", "LOW_CONFID", "REJECT"])
def test_rendered_answers_never_contain_json_or_markdown(verdict: str) -> None:
    _, _decision, composer_input = run(DIRECT)
    composer_input = composer_input.model_copy(
        update={
            "verdict": verdict,
            "allowed_claims": [
                *composer_input.allowed_claims,
                composer_input.allowed_claims[0].model_copy(
                    update={"claim_text": '# 标题 **粗体** {"a": 1} `x` | y |'}
                ),
            ],
        }
    )
    answer = render_answer(composer_input, None)
    violations = check_composer_output(composer_input, ComposerOutput(answer_summary="", user_facing_answer=answer))
    assert not [v for v in violations if "Markdown" in v or "JSON" in v or "code" in v], violations


def test_composer_output_as_mapping_or_json_text_and_malformed_output() -> None:
    output = {**OUTPUT, "claims": CLAIMS[:2], "missing_info": []}
    _, _, composer_input = run({"claim-1": "direct_observation", "claim-2": "direct_observation"}, output)
    answer = {
        "answer_summary": "s",
        "recommended_actions": [],
        "user_facing_answer": "payment-service 出现 ERR_TIMEOUT。",
    }
    # The text, then the confirmed facts it left out (the 5.3 s of claim-1, claim-2's CPU), listed by code.
    rendered = render_answer(composer_input, answer)
    assert rendered.startswith(answer["user_facing_answer"] + "\n\n根据已获取的证据：") and "92%" in rendered
    malformed = render_answer(composer_input, {"user_facing_answer": 42})
    assert malformed.startswith("根据已获取的证据：") and "42" not in malformed
    raw_json = '{"answer_summary": "s", "user_facing_answer": "payment-service 出现 ERR_TIMEOUT。"}'
    assert check_composer_output(composer_input, raw_json) == []


def test_an_action_reason_that_only_repeats_the_action_is_not_printed_twice() -> None:
    actions = [
        {"action_text": "检查网关与通道的超时配置", "reason": "检查网关和通道的超时配置"},
        {"action_text": "检查网关超时配置", "reason": "确认阈值是否低于 5300ms"},
    ]
    output = {**OUTPUT, "recommended_actions": [{**a, "evidence_bindings": []} for a in actions]}
    _, _, composer_input = run({"claim-1": "direct_observation", "claim-2": "unsupported"}, output)
    answer = render_answer(composer_input, None)
    assert "• 检查网关与通道的超时配置\n" in answer + "\n"
    assert "（检查网关和通道的超时配置）" not in answer
    assert "检查网关超时配置（确认阈值是否低于 5300ms）" in answer


def test_round_two_instruction_copied_as_an_action_is_no_step_for_the_user() -> None:
    actions = [{"action_text": "补足以上断言相关证据，不要重复已完成检索", "reason": "仅补充以上断言相关证据"}]
    output = {**OUTPUT, "recommended_actions": [{**a, "evidence_bindings": []} for a in actions]}
    _, _, composer_input = run({"claim-1": "direct_observation", "claim-2": "unsupported"}, output)
    assert all("不要重复已完成检索" not in action.action_text for action in composer_input.recommended_actions)
    assert composer_input.recommended_actions  # LOW_CONFID still names a next step (the code's own)


def test_questions_reach_the_user_neither_as_findings_nor_as_directions_or_gaps() -> None:
    question = {**CLAIMS[1], "claim_text": "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"}
    output = {
        **OUTPUT,
        "claims": [CLAIMS[0], question],
        "hypotheses": [
            {"hypothesis_text": "ERR_TIMEOUT 是什么原因", "basis": "b", "needed_evidence": []},
            {"hypothesis_text": "网关超时阈值是否过低", "basis": "b", "needed_evidence": ["网关配置"]},
        ],
    }
    _, decision, composer_input = run({"claim-1": "direct_observation", "claim-2": "direct_observation"}, output)
    assert decision.verdict == "LOW_CONFID"  # claim.question_echo failed claim-2
    assert [claim.claim_id for claim in composer_input.allowed_claims] == ["claim-1"]
    assert [h.hypothesis_text for h in composer_input.allowed_hypotheses] == ["网关超时阈值是否过低"]
    assert not any("是什么原因" in gap for gap in composer_input.missing_info)
