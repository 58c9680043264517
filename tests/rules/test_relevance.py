"""Issue 18: a confirmed claim is about the question; a NORMAL answer confirms something the question asked about."""

from __future__ import annotations

from typing import Any

from evigate.rules import Gatekeeper, decide_verdict
from evigate.rules.answer.composer_input import assemble_composer_input
from evigate.rules.answer.render import render_deterministic
from evigate.rules.verdict.relevance import off_topic_claims, off_topic_items
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


def _session(*outputs: tuple[str, dict[str, Any], str]) -> list[ToolInvocation]:
    return [ToolInvocation(id=number, session_id=SESSION, tool_name=tool, input=args, output_preview=text)
            for number, (tool, args, text) in enumerate(outputs, start=1)]


def test_an_http_status_the_question_names_links_the_lines_that_name_it_as_a_status() -> None:
    """Measured on train (right-guess-zh-06, 0.5B default): for "四点半的 429 …", the api-gateway tally of
    ERR_RATE_LIMITED was dropped as not about the question though its every line said "HTTP 429"; the answer
    confirmed nothing. A value equal to the number (rejected=429) still names no status."""
    tally = "by error_code: ERR_RATE_LIMITED=90"
    status_line = "2026-11-28 16:30:10 WARN api-gateway ERR_RATE_LIMITED HTTP 429 Too Many Requests rejected=247"
    value_line = "2026-11-28 16:30:10 WARN api-gateway ERR_RATE_LIMITED limit exceeded rejected=429"
    claim = _claim(f"query_logs 返回：{tally}", 1, tally)
    query = "四点半的 429 是不是因为 order-service 一直重试把流量放大了？"
    for line, off in ((status_line, set()), (value_line, {"claim-1"})):
        calls = _session(("query_logs", {"error_code": "ERR_RATE_LIMITED"}, f"{tally}\n{line}"))
        index = Gatekeeper.default().session_index(calls, SESSION, query=query)
        assert set(off_topic_claims(_data(claim), index)) == off, line
    # only an error status (4xx, 5xx) is read as one: order 123 is not named by "HTTP 123"
    calls = _session(("query_logs", {}, f"{tally}\nERROR api-gateway ERR_RATE_LIMITED HTTP 123"))
    index = Gatekeeper.default().session_index(calls, SESSION, query="订单 123 为什么失败？")
    assert set(off_topic_claims(_data(claim), index)) == {"claim-1"}


def test_a_records_field_names_link_nothing_its_prose_does() -> None:
    """Measured on train (complaint-en-04, 0.5B default): for a flash-sale question naming no service, code, id or
    time, the SMS tally was confirmed and the answer NORMAL, linked through "order" in the fields "order=55539" and
    "template=ORDER_PAID" of an SMS line. A field labels a value; the line's prose says what happened."""
    query = "Shoppers say they won the flash sale but the order failed. Why?"
    sms_line = ("2026-11-28 06:10:18 ERROR notification-service trace=27d4b9ad order=55539 ERR_SMS_PROVIDER "
                "sms-vendor-a returned 503 template=ORDER_PAID")
    stock_line = "2026-11-28 11:02:10 ERROR inventory-service ERR_DEADLOCK order failed: deadlock on t_stock"
    for line, code, off in ((sms_line, "ERR_SMS_PROVIDER", {"claim-1"}), (stock_line, "ERR_DEADLOCK", set())):
        tally = f"by error_code: {code}=98"
        calls = _session(("query_logs", {"level": "WARN"}, f"{tally}\n{line}"))
        index = Gatekeeper.default().session_index(calls, SESSION, query=query)
        assert set(off_topic_claims(_data(_claim(f"query_logs 返回：{tally}", 1, tally)), index)) == off, code


def test_another_service_is_tied_to_the_questions_service_by_an_anchor_not_by_a_shared_word() -> None:
    """Measured on train (none-near-en-06, 0.5B default): "Was api-gateway rate limiting requests at 8 am?" confirmed a
    pay-gateway ERR_SIGN_INVALID line as NORMAL, tied through "rate" in the header of pay-gateway's error_rate series.
    A question by symptom alone still links a service through its words; a line naming both services still ties."""
    callback = "2026-11-28 07:38:34 WARN pay-gateway ERR_SIGN_INVALID callback signature mismatch"
    header = "query_metrics pay-gateway error_rate (%) 2026-11-28 07:30 → 2026-11-28 08:30"
    claim = _claim(f"query_logs 返回：{callback}", 1, callback)
    calls = [("query_logs", {"service": "pay-gateway"}, callback),
             ("query_metrics", {"service": "pay-gateway", "metric": "error_rate"}, header)]
    both = ("query_logs", {}, "2026-11-28 07:38:35 WARN api-gateway upstream pay-gateway rejected the callback")

    def off(query: str, *outputs: tuple[str, dict[str, Any], str]) -> set[str]:
        index = Gatekeeper.default().session_index(_session(*outputs), SESSION, query=query)
        return set(off_topic_claims(_data(claim), index))

    assert off("Was api-gateway rate limiting requests at 8 am?", *calls) == {"claim-1"}
    assert off("Why were payment callbacks rate limited at 8 am?", *calls) == set()
    assert off("Was api-gateway rate limiting requests at 8 am?", *calls, both) == set()


def test_a_reading_within_its_threshold_is_context_never_a_symptom() -> None:
    """Measured on train (none-healthy-en-03, 0.5B default): "Did order-service have trouble at 7 pm?" was NORMAL on
    one minute of a pool series its tool had found within threshold ("no breach in window"). As context (the pool
    was fine) it stands; as a symptom it says what did not happen. A breached series is a symptom as before."""
    bucket = "2026-11-28 19:00..19:01 pool_active avg=7.5 max=8"
    query = "Did order-service have trouble at 7 pm?"
    for within, off in ((True, {"claim-1"}), (False, set())):
        calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="query_metrics",
                                input={"service": "order-service", "metric": "pool_active"},
                                output_preview=f"query_metrics order-service pool_active\n{bucket}",
                                retrieval_details={"within_threshold": within})]
        index = Gatekeeper.default().session_index(calls, SESSION, query=query)
        symptom = _claim(f"query_metrics (order-service) returned: {bucket}", 1, bucket)
        symptom["evidence_bindings"][0]["tool_name"] = "query_metrics"
        assert set(off_topic_claims(_data(symptom), index)) == off, within
        assert off_topic_claims(_data({**symptom, "claim_type": "context"}), index) == {}


def test_an_order_the_evidence_never_names_is_not_linked_through_other_orders() -> None:
    """Measured on train (none-unknown-en-03): for "Order 88888888 failed to pay", the SMS tally was 已确认 and the
    answer NORMAL, linked through "order=55539" on a notification-service line: the word that labels the question's
    record is no content term of its own."""
    sms_line = "2026-11-28 06:10:18 ERROR notification-service trace=27d4b9ad order=55539 ERR_SMS_PROVIDER 503"
    calls = _session(("query_logs", {"service": "notification-service"}, f"{SMS_TALLY}\n{sms_line}"))
    for query in ("Order 88888888 failed to pay. What happened?", "订单 88888888 支付失败了，怎么回事？"):
        index = Gatekeeper.default().session_index(calls, SESSION, query=query)
        assert set(off_topic_claims(_data(SMS_CLAIM), index)) == {"claim-1"}, query
    # The order the evidence does name still makes its line about the question.
    index = Gatekeeper.default().session_index(calls, SESSION, query="Order 55539 got no SMS. What happened?")
    assert off_topic_claims(_data(_claim(sms_line, 1, sms_line)), index) == {}


def test_a_knowledge_line_sharing_one_word_with_the_question_links_nothing() -> None:
    """Measured on train (colloquial-zh-03, 0.5B default): for "刚发完版支付就挂了一片", the planner model took the
    notification runbook, and its line "支付成功后 notification-service 发送 ORDER_PAID 短信" tied the SMS tally to the
    question through "支付" alone: 已确认, and the answer NORMAL on another incident's fact. A runbook describes the
    system; one shared word is the system's topic, not this question's."""
    describing = "支付成功后 notification-service 发送 ORDER_PAID 短信"
    query = "刚发完版支付就挂了一片，是不是新版本有坑？"
    tally = ("query_logs", {"service": "notification-service"}, SMS_TALLY)
    index = Gatekeeper.default().session_index(
        _session(tally, ("lookup_knowledge", {"query": "短信"}, describing)), SESSION, query=query)
    assert set(off_topic_claims(_data(SMS_CLAIM), index)) == {"claim-1"}
    hypothesis = {"hypotheses": [{"hypothesis_text": "notification-service 在发版后报错", "basis": SMS_TALLY}]}
    assert set(off_topic_items(hypothesis, index)) == {"hypotheses[0]"}
    # A log line is this incident's own: the same one word on it still links.
    logged = "2026-11-28 06:10:18 ERROR notification-service 支付通知发送失败 ERR_SMS_PROVIDER"
    index = Gatekeeper.default().session_index(
        _session(tally, ("query_logs", {"service": "notification-service"}, logged)), SESSION, query=query)
    assert off_topic_claims(_data(SMS_CLAIM), index) == {}
    # A knowledge line naming two of the question's words, or its anchor, links.
    for line, asked in ((describing, "支付成功后短信没发出来，怎么回事？"),
                        ("ERR_SMS_PROVIDER 见于 notification-service", "ERR_SMS_PROVIDER 是什么？")):
        index = Gatekeeper.default().session_index(
            _session(tally, ("lookup_knowledge", {"query": "短信"}, line)), SESSION, query=asked)
        assert off_topic_claims(_data(SMS_CLAIM), index) == {}, asked


def test_a_particle_of_the_question_links_nothing() -> None:
    """Measured on train (none-unknown-en-06): "Did the Elasticsearch cluster run out of disk today?" confirmed a
    payment-service pool_active breach, linked through "out" on a line that "timed out"."""
    breach = "threshold > 45: first breach 2026-11-28 09:26 (pool_active=50), 26 of 1440"
    calls = _session(
        ("query_metrics", {"service": "payment-service", "metric": "pool_active"}, breach),
        ("query_logs", {"service": "payment-service"},
         "2026-11-28 09:30:03 ERROR payment-service pool_active=50 Connection is not available, request timed out"))
    index = Gatekeeper.default().session_index(
        calls, SESSION, query="Did the Elasticsearch cluster run out of disk today?")
    claim = _claim(f"query_metrics (payment-service) returned: {breach}", 1, breach)
    assert set(off_topic_claims(_data(claim), index)) == {"claim-1"}


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


def _items(query: str, data: dict[str, Any], calls: list[ToolInvocation] | None = None) -> dict[str, str]:
    index = Gatekeeper.default().session_index(calls or _invocations(), SESSION, query=query)
    return off_topic_items(data, index)


KAFKA = "What caused the ERR_KAFKA_LAG alerts on order-service?"
SMS_OUTPUT = {"answer_version": "executor_evidence_v2", "claims": [],
              "hypotheses": [{"hypothesis_text": "ERR_SMS_PROVIDER 短信服务商 熔断", "basis": SMS_TALLY,
                              "needed_evidence": ["notification-service WARN logs"]}],
              "recommended_actions": [{"action_text": "确认 ERR_SMS_PROVIDER 熔断后是否已切换到备用短信服务商"}],
              "missing_info": ["ERR_SMS_PROVIDER 的持续时间"]}


def test_a_hypothesis_gap_or_action_naming_another_incident_is_not_shown() -> None:
    """Measured on train (none-unknown-en-02/04): the planner's runbook query "ERR_SMS_PROVIDER 短信服务商 熔断" was
    offered as a direction, a gap and an action for questions about Kafka lag and a recommendation engine."""
    off = _items(KAFKA, SMS_OUTPUT)
    assert set(off) == {"hypotheses[0]", "recommended_actions[0]", "missing_info[0]"}
    assert all("ERR_SMS_PROVIDER" in why for why in off.values())
    # Asked about the SMS symptom, the runbook line links the code to the question's words: all of it may be shown.
    assert _items("今天早上 6 点多用户收不到通知短信，是怎么回事？", SMS_OUTPUT) == {}
    # A basis and the evidence a hypothesis still needs are not shown: they may name what was not looked at yet.
    quiet = {"hypotheses": [{"hypothesis_text": "order-service 消费延迟", "basis": SMS_TALLY,
                             "needed_evidence": ["ERR_SMS_PROVIDER"]}]}
    assert _items(KAFKA, quiet) == {}


def test_items_about_something_else_are_left_out_of_the_composer_input_with_their_reason() -> None:
    index = Gatekeeper.default().session_index(_invocations(), SESSION, query=KAFKA)
    decision = decide_verdict(SMS_OUTPUT, [], None, "valid", {}, off_topic_items=off_topic_items(SMS_OUTPUT, index))
    material = assemble_composer_input(KAFKA, SMS_OUTPUT, None, decision, locale="en")
    shown = render_deterministic(material.composer_input)
    assert "ERR_SMS_PROVIDER" not in shown
    assert {d.field for d in material.dropped} >= {"hypotheses[0]", "recommended_actions[0]", "missing_info[0]"}


def test_a_trace_the_evidence_never_names_is_not_linked_through_a_knowledge_calls_details() -> None:
    """Measured on train (none-unknown-en-05): "pay-gateway 调用上游支付通道超时" offered for a trace no record names,
    linked through the one JSON line of a knowledge call's details (its echoed query beside every hit)."""
    calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="lookup_knowledge",
                            input={"query": "ERR_TIMEOUT 支付网关超时"}, output_preview="## ERR_TIMEOUT 含义：上游超时",
                            retrieval_details={"query": "ERR_TIMEOUT 支付网关超时", "hits": [
                                {"excerpt": "pay-gateway 调用上游支付通道超时, trace 见日志"}]})]
    data = {"hypotheses": [{"hypothesis_text": "pay-gateway 调用上游支付通道超时", "basis": "上游超时"}]}
    assert set(_items("Look into trace 0f0f0f0f1e1e1e1e, the checkout hung there.", data, calls)) == {"hypotheses[0]"}
