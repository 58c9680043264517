"""Counts a claim states against what the evidence counts, and questions asked inside statements (issue 18).

Measured on the 0.5B default: "网关拒绝了 16:30 到 16:50 … 95 个下单请求", citing a query_logs call whose line says
"rejected=95 in last 10s" (its excerpt left the number out), was labelled direct_observation and made a NORMAL answer.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.rules import Gatekeeper, decide_verdict
from evigate.rules.text.counts import drops_window, identifier_counted, windowed_counts
from evigate.rules.text.phrases import is_question
from evigate.rules.verdict.ceilings import ceilings_of
from evigate.rules.verdict.confirmation import confirm_by_code
from evigate.rules.verdict.junk_claims import add_excerpt_observations
from evigate.signatures import ToolInvocation

SESSION = "s-window"
LINE = ("2026-11-28 16:30:00 WARN api-gateway ERR_RATE_LIMITED HTTP 429 Too Many Requests: rate limit 2000 req/s "
        "exceeded route=/api/v1/orders rejected=95 in last 10s")
LOGS = ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "api-gateway"},
                      output_preview=f"{LINE}\n2026-11-28 16:30:10 WARN api-gateway ERR_RATE_LIMITED rejected=247 in "
                                     "last 10s")
EXCERPT = "2026-11-28 16:30:00 WARN api-gateway ERR_RATE_LIMITED HTTP 429 Too Many Requests"


def output(text: str, excerpt: str = EXCERPT) -> dict[str, object]:
    return {"answer_version": "executor_evidence_v2", "missing_info": [], "hypotheses": [], "recommended_actions": [],
            "claims": [{"claim_id": "claim-1", "claim_type": "symptom", "claim_text": text, "support_level": "direct",
                        "evidence_bindings": [{"tool_name": "query_logs", "source_invocation_ids": [1],
                                               "evidence_excerpt": excerpt}]}]}


@pytest.mark.parametrize(("text", "counts"), [
    ("rejected=95 in last 10s", {95.0: 10.0}),
    ("95 requests in the past 5 minutes", {95.0: 300.0}),
    ("3 restarts in the last hour", {3.0: 3600.0}),
    ("最近 10 秒内拒绝 95 个请求", {95.0: 10.0}),
    ("rate limit 2000 req/s exceeded", {}),
    ("120 matching lines between 16:30 and 16:50", {}),
])
def test_windowed_counts(text: str, counts: dict[float, float]) -> None:
    assert windowed_counts(text) == counts


@pytest.mark.parametrize(("claim", "dropped"), [
    ("网关拒绝了 16:30 到 16:50 网关拒绝了 95 个下单请求。", True),
    ("api-gateway rejected 95 order requests between 16:30 and 16:50", True),
    ("16:30 的 10 秒内网关拒绝了 95 个请求", False),  # the window stated in other units of the same length
    ("api-gateway rejected 95 requests in the last 10s at 16:30", False),
    ("每 10 秒最多拒绝 247 个请求", False),  # per-window wording
    ("api-gateway 限流阈值 2000 req/s", False),  # a rate, not a windowed count
    ("api-gateway 在 16:30 返回 HTTP 429", False),  # no count of a window
])
def test_a_claim_drops_the_window_of_its_count(claim: str, dropped: bool) -> None:
    assert drops_window(claim, [LINE]) is dropped


@given(count=st.integers(min_value=2, max_value=100_000), seconds=st.sampled_from([5, 10, 30, 60]))
def test_the_count_alone_always_drops_and_with_its_window_never(count: int, seconds: int) -> None:
    evidence = [f"route=/api/v1/orders rejected={count} in last {seconds}s"]
    assert drops_window(f"网关共拒绝了 {count} 个请求", evidence)
    assert not drops_window(f"网关在 {seconds} 秒内拒绝了 {count} 个请求", evidence)
    assert not drops_window(f"网关共拒绝了 {count + 1} 个请求", evidence)


def test_code_reads_the_count_in_the_cited_output_and_says_overstated() -> None:
    session = Gatekeeper.default().session_index([LOGS], SESSION)
    data = output("网关拒绝了 16:30 到 16:50 网关拒绝了 95 个下单请求。")
    assert "claim-1" not in ceilings_of(data)  # the excerpt alone does not hold the count
    assert ceilings_of(data, session=session)["claim-1"].reason == "window"
    judgement = confirm_by_code(data, session)
    assert judgement.confirmed["claim-1"].verification == "overstated" and not judgement.remaining
    decision = decide_verdict(data, [{"claim_id": "claim-1", "verification": "direct_observation"}], None, "valid",
                              Gatekeeper.default().verdict_impacts, code_checks=judgement.confirmed)
    assert decision.verdict != "PASS" and decision.effective_checks["claim-1"] == "overstated"


def test_the_line_it_quotes_is_stated_by_code_instead() -> None:
    session = Gatekeeper.default().session_index([LOGS], SESSION)
    result, (addition,) = add_excerpt_observations(output("网关拒绝了 95 个下单请求。"), session)
    assert result["claims"][1]["claim_text"] == f"query_logs 返回：{LINE}" and addition.why.startswith("added by code")


def test_a_claim_keeping_the_window_is_left_to_the_verifier() -> None:
    session = Gatekeeper.default().session_index([LOGS], SESSION)
    data = output("16:30:00 前 10 秒内 api-gateway 拒绝了 95 个下单请求")
    assert ceilings_of(data, session=session) == {}


ORDER_LINE = ("2026-11-28 20:00:20 ERROR order-service trace=5fefb5f62d30c29d order=88412 ERR_UPSTREAM_TIMEOUT call "
              "product-service GET /products/SKU-10003 timeout after 2000ms")


@pytest.mark.parametrize(("claim", "evidence", "counted"), [
    ("商品服务的上游超时次数是 88412 次。", [ORDER_LINE], True),  # measured on train (tally-zh-07)
    ("order-service saw 88412 timeouts", [ORDER_LINE], True),
    ("上游超时 43 次", [ORDER_LINE, "by error_code: ERR_UPSTREAM_TIMEOUT=43"], False),  # an amount the tally gives
    ("订单 88412 上游超时", [ORDER_LINE], False),  # named as the order it is
    ("88412 次超时", [ORDER_LINE, "timeouts: 88412"], False),  # also given as an amount
])
def test_an_identifier_is_no_count(claim: str, evidence: list[str], counted: bool) -> None:
    assert identifier_counted(claim, evidence) is counted


def test_code_says_unsupported_for_an_identifier_counted() -> None:
    logs = ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "order-service"},
                          output_preview=ORDER_LINE)
    session = Gatekeeper.default().session_index([logs], SESSION)
    data = output("商品服务的上游超时次数是 88412 次。", ORDER_LINE[:60])
    assert confirm_by_code(data, session).confirmed["claim-1"].verification == "unsupported"


@pytest.mark.parametrize(("text", "asks"), [
    ("Leadership wants to know why checkout requests were being rejected around half past four.", True),
    ("The on-call asked whether order 456 was refunded", True),
    ("Check whether the pool is full", False),  # a step, not a question
    ("The logs show the pool was exhausted", False),
])
def test_a_question_asked_inside_a_statement_is_a_question(text: str, asks: bool) -> None:
    assert is_question(text) is asks
