"""premise_reason: the user's question written back as a finding is never confirmed as written (issue 18)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import Gatekeeper
from evigate.rules.answer.composer_guard import check_composer_output
from evigate.rules.answer.composer_input import assemble_composer_input
from evigate.rules.verdict.code_claims import add_code_claims
from evigate.rules.verdict.matrix import VerdictDecision
from evigate.rules.verdict.premise import PREMISE_WHY, premise_reason
from evigate.rules.verdict.relevance import off_topic_claims
from evigate.signatures import ComposerInput, ComposerOutput, ToolInvocation
from tests.rules.test_confirmation import INVOCATIONS, ORDER, SESSION, claim, output, session_index

THROTTLE_Q = "Why did the API gateway start throttling orders after 4:30 pm?"
GUESS_Q = "Were the 2 pm payment timeouts caused by the connection pool filling up?"
METRIC = "api-gateway http_429_count: 2026-11-28 16:25 3, 2026-11-28 16:30 794, 2026-11-28 16:35 812"
POOL = "payment-service pool_pending: 2026-11-28 14:00 0, 2026-11-28 14:05 0"
CALLS = [
    *INVOCATIONS,
    ToolInvocation(id=7, session_id=SESSION, tool_name="query_metrics", input={"service": "api-gateway"},
                   output_preview=METRIC),
    ToolInvocation(id=8, session_id=SESSION, tool_name="query_metrics", input={"service": "payment-service"},
                   output_preview=POOL),
]


def metric_claim(text: str, excerpt: str, invocation: int, claim_type: str = "symptom") -> dict[str, object]:
    return {**claim(text, excerpt, [1], claim_type=claim_type), "evidence_bindings": [{
        "tool_name": "query_metrics", "source_invocation_ids": [invocation], "evidence_excerpt": excerpt,
        "source_type": "tool_trace"}]}


def _index(query: str) -> object:
    return Gatekeeper.default().session_index(CALLS, SESSION, None, query)


def test_the_dev_examples_are_the_question_restated() -> None:
    """Measured on dev (0.5B default): both were kept as written; the first made a NORMAL answer of the question."""
    throttle = metric_claim("API gateway throttling orders after 4:30 pm", "2026-11-28 16:30 794", 7)
    guess = metric_claim("2 pm payment timeouts caused by the connection pool filling up", "2026-11-28 14:00 0", 8,
                         claim_type="root_cause")
    assert premise_reason(throttle, _index(THROTTLE_Q), THROTTLE_Q) == PREMISE_WHY  # 4:30 is only the question's
    assert premise_reason(guess, _index(GUESS_Q), GUESS_Q) == PREMISE_WHY  # names nothing a tool returned


def test_the_users_guess_with_its_verb_conjugated_is_the_question_restated() -> None:
    """Measured on dev (0.5B default): "Redis went down" for "Did Redis go down?", cited to a timeout line and called
    observed, made a NORMAL answer; by characters only 69 % of it is the question's."""
    query = "Product pages timed out at 8 pm. Did Redis go down?"
    guess = metric_claim("Redis went down", "2026-11-28 16:30 794", 7)
    assert premise_reason(guess, _index(query), query) == PREMISE_WHY
    # One word of the question is a subject an answer may name, not the question again.
    assert premise_reason(metric_claim("Redis returned 794 errors", "2026-11-28 16:30 794", 7), _index(query),
                          query) is None


def test_the_users_words_with_a_word_added_and_naming_nothing_are_the_question_restated() -> None:
    """Measured on train (0.5B default, tally-zh-07): "上游超时次数上游超时", half its terms the question's, was
    labelled observed by the Verifier model and shown as confirmed."""
    query = "晚上 8 点那会儿商品服务有多少次上游超时？"
    garbled = metric_claim("上游超时次数上游超时", "2026-11-28 16:30 794", 7)
    assert premise_reason(garbled, _index(query), query) == PREMISE_WHY
    # A knowledge line naming nothing, about the question's subject in its own words, is no restatement of it.
    sms = "早上 6 点很多用户说没收到支付成功短信，怎么回事？"
    context = claim("短信失败不影响订单与支付状态，只影响用户通知。", "短信失败不影响订单与支付状态", [3],
                    claim_type="context")
    assert premise_reason(context, _index(sms), sms) is None


def test_a_report_the_cited_record_shows_in_full_stands() -> None:
    query = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
    report = claim("订单 123 支付失败，错误码 ERR_TIMEOUT", ORDER, [1])
    assert premise_reason(report, session_index(), query) is None
    assert premise_reason(claim("pay-gateway 调用 unionpay 超时", "x", [2]), session_index(), query) is None


def test_a_symptom_in_the_users_words_is_not_confirmed_by_a_value_it_mentions() -> None:
    """Measured on train (colloquial-zh-06, 0.5B default): "网关突然开始疯狂 429 了，流量也没做活动啊", the question
    less its first word, cited to a line holding 429, was labelled observed: a NORMAL answer whose only confirmed fact
    was the question. Every value it names was observed, but it reports on no record."""
    query = "网关怎么突然开始疯狂 429 了，流量也没做活动啊"
    line = "2026-11-28 16:31:02 WARN api-gateway status=429 rate limit exceeded route=/api/order"
    calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "api-gateway"},
                            output_preview=line)]
    echo = {**claim("网关突然开始疯狂 429 了，流量也没做活动啊", line, [1]), "evidence_bindings": [{
        "tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": line,
        "source_type": "tool_trace"}]}
    index = Gatekeeper.default().session_index(calls, SESSION, None, query)
    assert premise_reason(echo, index, query) == PREMISE_WHY
    added = add_code_claims(output(echo), index, query=query)
    assert added.data is not None and added.data["claims"][0]["claim_text"] == f"query_logs 返回：{line}"
    # A finding about the 429s in words of its own is no echo, and stands.
    assert premise_reason({**echo, "claim_text": "api-gateway 限流返回 429，route=/api/order"}, index, query) is None


def test_code_rewrites_it_into_what_it_cites_and_never_confirms_it_as_written() -> None:
    data = output(metric_claim("API gateway throttling orders after 4:30 pm", "2026-11-28 16:30 794", 7))
    index = _index(THROTTLE_Q)
    added = add_code_claims(data, index, query=THROTTLE_Q, locale="en")
    texts = [item["claim_text"] for item in added.data["claims"]]
    assert texts[0].startswith("query_metrics") and "16:30 794" in texts[0] and "4:30 pm" not in texts[0]
    assert added.rewrites[0].why == PREMISE_WHY
    # Where nothing it cites can be quoted, it stays, but is no finding: never confirmed, and no "unrelated" gap.
    stuck = output(metric_claim("API gateway throttling orders after 4:30 pm", "no such text", 7))
    off = off_topic_claims(stuck, index, THROTTLE_Q)
    assert off == {"claim-1": f"not a finding: {PREMISE_WHY}"}
    decision = VerdictDecision(verdict="LOW_CONFID", groundedness_score=0.5,
                               effective_checks={"claim-1": "direct_observation"}, off_topic=off)
    material = assemble_composer_input(THROTTLE_Q, stuck, None, decision, locale="en")
    assert material.composer_input.allowed_claims == []
    assert not any("unrelated" in gap for gap in material.composer_input.missing_info)


def test_the_guard_refuses_prose_made_of_the_question_but_not_an_allowed_claim() -> None:
    composer_input = ComposerInput(original_query=THROTTLE_Q, verdict="PASS", allowed_claims=[
        {"claim_id": "c1", "claim_type": "symptom", "claim_text": f"query_metrics returned: {METRIC}",
         "support_level": "direct"}])
    echo = ComposerOutput(answer_summary="x", user_facing_answer="API gateway throttling orders after 4:30 pm is a")
    assert any("restates the question" in problem for problem in check_composer_output(composer_input, echo))
    asked = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
    report = ComposerInput(original_query=asked, verdict="PASS", allowed_claims=[
        {"claim_id": "c1", "claim_type": "symptom", "claim_text": "订单 123 支付失败，错误码 ERR_TIMEOUT",
         "support_level": "direct"}])
    said = ComposerOutput(answer_summary="x", user_facing_answer="订单 123 支付失败，错误码 ERR_TIMEOUT。")
    assert not any("restates the question" in problem for problem in check_composer_output(report, said))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30), st.integers(12, 60))
def test_any_piece_of_a_question_naming_nothing_the_evidence_shows_is_no_finding(start: int, size: int) -> None:
    query = "Why did checkout requests keep failing for mobile users in the evening rush after the release?"
    piece = query[start:start + size].strip(" ?")
    data = output(metric_claim(piece, METRIC[:20], 7))
    reason = premise_reason(data["claims"][0], _index(query), query)
    from evigate.rules.text.junk import echoes

    assert (reason == PREMISE_WHY) == echoes(piece, query)


def test_a_runbook_line_no_observation_names_is_not_even_a_direction() -> None:
    """Measured on dev: "pay-gateway 调用上游支付通道超时" from the ERR_TIMEOUT runbook, shown as a possible
    direction for a day without a single record."""
    from evigate.rules.verdict.relevance import RUNBOOK_ONLY_WHY

    query = "What broke payment-service on 2026-11-20 at 10:00?"
    runbook = "## ERR_TIMEOUT\n含义：pay-gateway 调用上游支付通道超时。"
    empty = ("query_logs start=2026-11-20 09:45:00 end=2026-11-20 10:15:00 service=pay-gateway level=WARN: no rows "
             "(0 matching log lines)")
    calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="lookup_knowledge", input={"query": "ERR_TIMEOUT"},
                            output_preview=runbook),
             ToolInvocation(id=2, session_id=SESSION, tool_name="query_logs", input={"service": "pay-gateway"},
                            output_preview=empty)]
    line = "pay-gateway 调用上游支付通道超时"
    guess = {**claim(line, line, [1]), "evidence_bindings": [{
        "tool_name": "lookup_knowledge", "source_invocation_ids": [1], "evidence_excerpt": line,
        "source_type": "tool_trace"}]}
    index = Gatekeeper.default().session_index(calls, SESSION, None, query)
    assert off_topic_claims(output(guess), index, query) == {"claim-1": RUNBOOK_ONLY_WHY}
    decision = VerdictDecision(verdict="LOW_CONFID", groundedness_score=0.5, effective_checks={"claim-1": "overstated"},
                               off_topic={"claim-1": RUNBOOK_ONLY_WHY})
    shown = assemble_composer_input(query, output(guess), None, decision, locale="en").composer_input
    assert not shown.allowed_hypotheses and not any("pay-gateway" in gap for gap in shown.missing_info)
    # A day whose logs show pay-gateway timing out: the runbook explains what was observed, and may stand.
    seen = [calls[0], calls[1].model_copy(update={"output_preview": "2026-11-20 10:01:02 ERROR pay-gateway upstream "
                                                                     "unionpay timeout after 5300ms"})]
    index = Gatekeeper.default().session_index(seen, SESSION, None, query)
    assert off_topic_claims(output(guess), index, query).get("claim-1") != RUNBOOK_ONLY_WHY


def test_a_call_that_only_writes_its_own_arguments_back_observes_nothing() -> None:
    """Measured on dev: "notification-service failed yesterday morning" cited to an empty query_logs whose details
    hold its filters ("service": "notification-service"), and the answer was NORMAL."""
    query = "Why did notification-service fail yesterday morning?"
    empty = ToolInvocation(
        id=1, session_id=SESSION, tool_name="query_logs",
        input={"service": "notification-service", "time_window": "2026-11-27 06:00/2026-11-27 12:00"},
        output_preview="query_logs service=notification-service: no rows (0 matching log lines)",
        retrieval_details={"matched": 0, "filters": {"service": "notification-service"}})
    echo = {**claim("notification-service failed yesterday morning", "no rows", [1]), "evidence_bindings": [{
        "tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": "no rows",
        "source_type": "tool_trace"}]}
    index = Gatekeeper.default().session_index([empty], SESSION, None, query)
    assert premise_reason(echo, index, query) == PREMISE_WHY
    assert off_topic_claims(output(echo), index, query) == {"claim-1": f"not a finding: {PREMISE_WHY}"}


def test_a_claim_about_what_a_call_was_asked_is_no_finding() -> None:
    """Measured on dev: a runbook's "pay-gateway 调用上游支付通道超时" cited to the header of an empty query_logs call
    for pay-gateway, labelled observed by the Verifier model."""
    from evigate.rules.verdict.premise import UNOBSERVED_WHY, unobserved_reason

    query = "What broke payment-service on 2026-11-20 at 10:00?"
    header = "query_logs start=2026-11-20 09:45:00 end=2026-11-20 10:15:00 service=pay-gateway"
    empty = ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "pay-gateway"},
                           output_preview=f"{header} level=WARN: no rows (0 matching log lines)",
                           retrieval_details={"matched": 0, "filters": {"service": "pay-gateway"}})
    guess = {**claim("pay-gateway 调用上游支付通道超时", header, [1]), "evidence_bindings": [{
        "tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": header,
        "source_type": "tool_trace"}]}
    index = Gatekeeper.default().session_index([empty], SESSION, None, query)
    assert unobserved_reason(guess, index) == UNOBSERVED_WHY
    assert off_topic_claims(output(guess), index, query) == {"claim-1": f"not a finding: {UNOBSERVED_WHY}"}
    # The same words cited to a log line that shows pay-gateway timing out are an observation.
    seen = empty.model_copy(update={"output_preview": "2026-11-20 10:01:02 ERROR pay-gateway upstream timeout"})
    assert unobserved_reason(guess, Gatekeeper.default().session_index([seen], SESSION, None, query)) is None


def test_a_runbooks_words_cited_to_an_evidence_call_are_no_finding() -> None:
    """Measured on dev (0.5B default): "pay-gateway 调用上游支付通道超时", the runbook's definition of ERR_TIMEOUT,
    and a runbook's section title, each cited to a real log line, were labelled observed by the Verifier model:
    NORMAL answers whose confirmed fact was the runbook speaking."""
    from evigate.rules.verdict.premise import BORROWED_WHY, borrowed_reason

    query = "pay-gateway 14:10 前后是什么状况？"
    index = Gatekeeper.default().session_index(INVOCATIONS, SESSION, None, query)
    log_line = "ERROR pay-gateway trace=3f9a7c2e5b8d1046 order=123 ERR_TIMEOUT upstream unionpay"
    borrowed = claim("pay-gateway 调用上游支付通道超时", log_line, [2])
    titled = claim("“ERR_TIMEOUT 含义：pay-gateway 调用上游支付通道超时”，", log_line, [2])
    assert borrowed_reason(borrowed, index) == BORROWED_WHY and borrowed_reason(titled, index) == BORROWED_WHY
    assert off_topic_claims(output(borrowed), index)["claim-1"].endswith(BORROWED_WHY)
    # Code states what the cited call did return instead, and that is about the question.
    added = add_code_claims(output(borrowed), index, query=query)
    assert added.data is not None and added.data["claims"][0]["claim_text"] == f"query_logs 返回：{log_line}"
    # Not borrowed: the cited output says it too; the runbook itself is cited (its caps decide); no runbook says it.
    assert borrowed_reason(claim("upstream unionpay timeout after 5300ms", log_line, [2]), index) is None
    assert borrowed_reason(claim("pay-gateway 调用上游支付通道超时", "调用上游支付通道超时", [3]), index) is None
    assert borrowed_reason(claim("pay-gateway 的通道整体超时了", log_line, [2]), index) is None


def test_a_runbooks_words_rearranged_are_still_no_finding() -> None:
    """Measured on train (0.5B default): "短信服务商 短信服务商 熔断", a runbook title's words written twice and cited
    to an English log line, was labelled observed by the Verifier model and shown under 已确认. Doubled, the text was
    no runbook's verbatim, so the whole-text test let it pass."""
    from evigate.rules.verdict.premise import BORROWED_WHY, borrowed_reason

    query = "pay-gateway 14:10 前后是什么状况？"
    index = Gatekeeper.default().session_index(INVOCATIONS, SESSION, None, query)
    log_line = "ERROR pay-gateway trace=3f9a7c2e5b8d1046 order=123 ERR_TIMEOUT upstream unionpay"
    doubled = claim("上游支付通道 上游支付通道 超时", log_line, [2])
    assert borrowed_reason(doubled, index) == BORROWED_WHY
    assert off_topic_claims(output(doubled), index)["claim-1"].endswith(BORROWED_WHY)
    # A word of the line beside the runbook's words is the runbook's reading of the line, not an observation.
    assert borrowed_reason(claim("unionpay 上游支付通道 超时", log_line, [2]), index) == BORROWED_WHY
    # Not borrowed: a value it names is what the cited call returned; it adds one word to the line's.
    assert borrowed_reason(claim("上游支付通道 超时 5300ms", log_line, [2]), index) is None
    assert borrowed_reason(claim("unionpay upstream 超时", log_line, [2]), index) is None


def test_a_runbooks_explanation_beside_a_word_of_the_line_is_no_finding() -> None:
    """The Verifier model (0.5B default) labels a claim observed when it shares words with its cited line, though
    the rest of it is a runbook's explanation: "数据库索引失效 全表扫描" beside a slow-query line that says "全表扫描"
    and nothing of an index. Code states the line instead."""
    from evigate.rules.verdict.premise import BORROWED_WHY, borrowed_reason

    slow = "2026-11-28 02:14:09 WARN settlement-service SLOW_SQL 全表扫描 table=settlement_records cost=8200ms"
    runbook = "## SLOW_SQL\n含义：索引列上使用函数导致数据库索引失效，查询退化为全表扫描。"
    calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "settlement-service"},
                            output_preview=slow),
             ToolInvocation(id=2, session_id=SESSION, tool_name="lookup_knowledge", input={"query": "SLOW_SQL"},
                            output_preview=runbook)]
    query = "凌晨对账为什么这么慢？"
    index = Gatekeeper.default().session_index(calls, SESSION, None, query)
    explained = metric_claim("数据库索引失效 全表扫描", slow, 1) | {"evidence_bindings": [{
        "tool_name": "query_logs", "source_invocation_ids": [1], "evidence_excerpt": slow,
        "source_type": "tool_trace"}]}
    assert borrowed_reason(explained, index) == BORROWED_WHY
    assert off_topic_claims(output(explained), index)["claim-1"].endswith(BORROWED_WHY)
    added = add_code_claims(output(explained), index, query=query)
    assert added.data is not None and added.data["claims"][0]["claim_text"] == f"query_logs 返回：{slow}"
    # What the line says in its own words, or with a value it holds, stays the Executor's finding.
    for text in ("SLOW_SQL 全表扫描 settlement_records", "全表扫描 耗时 8200ms", "慢查询 全表扫描"):
        kept = {**explained, "claim_text": text}
        assert borrowed_reason(kept, index) is None, text
