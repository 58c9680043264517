"""Issue 18: a confirmed claim is about the question; a NORMAL answer confirms something the question asked about."""

from __future__ import annotations

from typing import Any

from evigate.rules import Gatekeeper, decide_verdict
from evigate.rules.answer.composer_input import assemble_composer_input
from evigate.rules.answer.render import render_deterministic
from evigate.rules.verdict.relevance import off_topic_claims
from evigate.signatures import ClaimCheck, ToolInvocation

SESSION = "s-rel"
SMS_TALLY = "by error_code: ERR_SMS_PROVIDER=67"
POOL = "2026-11-28 09:30:34 ERROR payment-service HikariCP 连接池耗尽 Connection is not available"
GATEWAY = "2026-11-28 16:31:02 WARN pay-gateway trace=7f3a9c2e1b4d upstream timeout after 5300ms"
PAYMENT = "2026-11-28 16:31:03 ERROR payment-service trace=7f3a9c2e1b4d order=8812 ERR_TIMEOUT"
RUNBOOK = "ERR_SMS_PROVIDER：短信服务商熔断，用户收不到通知短信"


def _invocations() -> list[ToolInvocation]:
    return [
        ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "notification-service"},
                       output_preview=f"notification-service 06:00-07:00\n{SMS_TALLY}"),
        ToolInvocation(id=2, session_id=SESSION, tool_name="query_logs", input={"service": "payment-service"},
                       output_preview=POOL),
        ToolInvocation(id=3, session_id=SESSION, tool_name="query_logs", input={"service": "pay-gateway"},
                       output_preview=GATEWAY),
        ToolInvocation(id=4, session_id=SESSION, tool_name="query_logs", input={"service": "payment-service"},
                       output_preview=PAYMENT),
        ToolInvocation(id=5, session_id=SESSION, tool_name="lookup_knowledge", input={"query": "短信"},
                       output_preview=RUNBOOK),
    ]


def _claim(text: str, invocation: int, excerpt: str, claim_id: str = "claim-1") -> dict[str, Any]:
    return {"claim_id": claim_id, "claim_type": "symptom", "claim_text": text, "support_level": "direct",
            "evidence_bindings": [{"source_type": "tool_trace", "tool_name": "query_logs",
                                   "source_invocation_ids": [invocation], "evidence_excerpt": excerpt}]}


def _data(*claims: dict[str, Any]) -> dict[str, Any]:
    return {"answer_version": "executor_evidence_v2", "claims": list(claims)}


def _off(query: str, *claims: dict[str, Any]) -> dict[str, str]:
    index = Gatekeeper.default().session_index(_invocations(), SESSION, query=query)
    return off_topic_claims(_data(*claims), index)


SMS_CLAIM = _claim(f"query_logs（notification-service）返回：{SMS_TALLY}", 1, SMS_TALLY)


def test_another_incidents_tally_is_not_about_a_payment_question() -> None:
    """Measured (issue 18): two payment questions got 已确认 = this line, and the answers were NORMAL."""
    for query in ("payment-service 下午大量支付失败，是怎么回事？", "今天下午用户付款一直失败，什么原因？",
                  "Why are payments failing on payment-service this afternoon?"):
        assert set(_off(query, SMS_CLAIM)) == {"claim-1"}, query


def test_a_pool_line_is_not_about_a_slow_sql_question() -> None:
    claim = _claim("HikariCP 连接池耗尽", 2, "HikariCP 连接池耗尽")
    assert set(_off("settlement-service 凌晨的对账任务为什么跑得这么慢？", claim)) == {"claim-1"}


def test_a_claim_naming_the_questions_service_code_order_or_words_is_about_it() -> None:
    assert _off("payment-service 为什么报 ERR_TIMEOUT？", _claim(PAYMENT, 4, PAYMENT)) == {}
    assert _off("订单 8812 为什么失败？", _claim(PAYMENT, 4, PAYMENT)) == {}
    # By symptom only: the runbook line links ERR_SMS_PROVIDER to the user's own words (收不到通知短信).
    assert _off("今天早上 6 点多用户收不到通知短信，是怎么回事？", SMS_CLAIM) == {}
    # The call was about the question's service, so its line is too, whether or not the line says so.
    assert _off("payment-service 的连接池怎么了？", _claim("HikariCP 连接池耗尽", 2, "HikariCP 连接池耗尽")) == {}


def test_an_entity_the_evidence_links_to_the_question_makes_a_claim_about_it() -> None:
    """The gateway's line names the same trace id as payment-service's line: it is about the payment question."""
    claim = _claim(GATEWAY, 3, GATEWAY)
    assert _off("payment-service 下午大量 ERR_TIMEOUT，原因是什么？", claim) == {}
    assert set(_off("settlement-service 对账很慢", claim)) == {"claim-1"}


def test_no_question_judges_nothing_and_a_question_naming_nothing_confirms_nothing() -> None:
    assert _off("", SMS_CLAIM) == {}
    assert set(_off("怎么了？", SMS_CLAIM)) == {"claim-1"}


def _decide(query: str, *claims: dict[str, Any]) -> Any:
    data = _data(*claims)
    index = Gatekeeper.default().session_index(_invocations(), SESSION, query=query)
    checks = [ClaimCheck(claim_id=c["claim_id"], verification="direct_observation") for c in claims]
    decision = decide_verdict(data, checks, None, "valid", {}, off_topic=off_topic_claims(data, index))
    return decision, assemble_composer_input(query, data, None, decision)


def test_an_off_topic_confirmed_claim_makes_no_normal_answer_and_is_never_confirmed() -> None:
    decision, material = _decide("payment-service 下午大量支付失败，是怎么回事？", SMS_CLAIM)
    assert decision.verdict == "LOW_CONFID" and decision.rows[0].code == "off_topic"
    assert material.composer_input.allowed_claims == []
    assert SMS_TALLY not in render_deterministic(material.composer_input)
    assert [d.field for d in material.dropped] == ["claims[claim-1]"]


def test_one_on_topic_direct_claim_keeps_the_pass_and_the_other_is_left_out() -> None:
    decision, material = _decide("payment-service 为什么报 ERR_TIMEOUT？", _claim(PAYMENT, 4, PAYMENT),
                                 {**SMS_CLAIM, "claim_id": "claim-2"})
    assert decision.verdict == "PASS" and decision.off_topic.keys() == {"claim-2"}
    assert [c.claim_id for c in material.composer_input.allowed_claims] == ["claim-1"]
