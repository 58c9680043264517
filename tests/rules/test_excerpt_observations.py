"""add_excerpt_observations: the verbatim line a capped claim quotes becomes the tool's own observation, beside it."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import Gatekeeper, ParsedOutput, decide_verdict
from evigate.rules.verdict.ceilings import ceilings_of
from evigate.rules.verdict.confirmation import confirm_by_code
from evigate.rules.verdict.junk_claims import add_excerpt_observations
from evigate.signatures import ClaimCheck, ToolInvocation
from tests.rules.test_confirmation import INVOCATIONS, KB, LOG, ORDER, SESSION, claim, output, session_index

CAUSAL = "ERR_TIMEOUT 是因为 unionpay 通道变慢导致的"


def observed(data: dict[str, Any], index: Any = None) -> tuple[dict[str, Any], list[Any]]:
    result, additions = add_excerpt_observations(data, index or session_index())
    return result, additions


def test_a_causal_claim_quoting_a_log_line_gets_the_whole_line_as_the_tools_observation() -> None:
    data = output(claim(CAUSAL, "upstream unionpay timeout after 5300ms", [2], claim_type="root_cause"))
    result, (addition,) = observed(data)
    original, added = result["claims"]
    assert original == data["claims"][0]  # the Executor's claim is kept as written
    assert added["claim_text"] == f"query_logs 返回：{LOG}" and added["claim_id"] == "claim-1-observed"
    assert (added["claim_type"], added["support_level"]) == ("symptom", "direct")
    assert added["evidence_bindings"][0]["source_invocation_ids"] == [2]
    assert addition.original_text == CAUSAL and addition.why.startswith("added by code")
    assert len(data["claims"]) == 1  # the input is not modified
    judgement = confirm_by_code(result, session_index())
    assert list(judgement.confirmed) == ["claim-1-observed"] and judgement.remaining == ["claim-1"]
    assert ceilings_of(result)["claim-1"].reason == "causal"  # the cause itself stays capped


def test_an_indirect_or_hedged_claim_is_observed_too_and_a_knowledge_quote_is_only_context() -> None:
    indirect = claim("订单 123 的支付超时", ORDER[:40], [1], support="indirect")
    hedged = claim("可能是 unionpay 通道超时", "upstream unionpay timeout", [2], claim_id="claim-2")
    kb = claim("pay-gateway 的上游超时", "调用上游支付通道超时", [3], claim_id="claim-3")  # critical, only a runbook
    result, additions = observed(output(indirect, hedged, kb))
    added = {item["claim_id"]: item for item in result["claims"][3:]}
    assert added["claim-1-observed"]["claim_text"] == f"query_order 返回：{ORDER}"
    assert added["claim-2-observed"]["claim_text"] == f"query_logs 返回：{LOG}"
    assert added["claim-3-observed"]["claim_type"] == "context" and len(additions) == 3
    assert "含义：pay-gateway 调用上游支付通道超时。" in added["claim-3-observed"]["claim_text"]


@pytest.mark.parametrize("case", [
    claim("订单 123 支付失败，错误码 ERR_TIMEOUT", ORDER, [1]),  # a plain paraphrase: the Verifier judges it
    claim(CAUSAL, "order 123: status=PAID", [1], claim_type="root_cause"),  # not what the call returned
    claim(CAUSAL, "upstream unionpay timeout after 5300ms", [4], claim_type="root_cause"),  # a failed call
    claim(CAUSAL, "5300", [2], claim_type="root_cause"),  # too light to be a quote
    claim("这是什么原因？", "upstream unionpay timeout", [2]),  # junk: rewrite_junk_claims' business
])
def test_no_observation_is_added(case: dict[str, Any]) -> None:
    data = output(case)
    assert observed(data) == (data, [])


def test_a_line_with_causal_wording_a_header_or_a_line_already_stated_is_never_added() -> None:
    causal_line = "2026-11-28 14:03:13 WARN pay-gateway retry failed because channel unionpay was slow"
    header = "query_logs order_id=123: 2 matching lines"
    logs = ToolInvocation(id=7, session_id=SESSION, tool_name="query_logs", input={"order_id": 123},
                          output_preview=f"{header}\n{causal_line}")
    index = Gatekeeper.default().session_index([*INVOCATIONS, logs], SESSION)
    for excerpt in ("channel unionpay was slow", "order_id=123: 2 matching lines"):
        data = output({**claim(CAUSAL, excerpt, [2], claim_type="root_cause"),
                       "evidence_bindings": [{"tool_name": "query_logs", "source_invocation_ids": [7],
                                              "evidence_excerpt": excerpt}]})
        assert observed(data, index) == (data, [])
    twice = ToolInvocation(id=8, session_id=SESSION, tool_name="query_logs", input={"order_id": 5},
                           output_preview=f"{LOG}\n{LOG.replace('order=123', 'order=124')}")
    index = Gatekeeper.default().session_index([*INVOCATIONS, twice], SESSION)
    data = output({**claim(CAUSAL, "upstream unionpay timeout", [2], claim_type="root_cause"),
                   "evidence_bindings": [{"tool_name": "query_logs", "source_invocation_ids": [8],
                                          "evidence_excerpt": "upstream unionpay timeout"}]})
    assert observed(data, index) == (data, [])  # two lines hold the excerpt: which one it quotes is unknown
    already = output(claim(CAUSAL, "upstream unionpay timeout", [2], claim_type="root_cause"),
                     claim(f"日志显示 {LOG}", LOG, [2], claim_id="claim-2"))
    assert observed(already) == (already, [])


def test_an_added_observation_never_lifts_a_verdict_or_the_score() -> None:
    """Shown like any claim, judged like any claim, but the verdict is the Executor's own claims' at best."""
    data, _ = observed(output(claim(CAUSAL, "upstream unionpay timeout", [2], claim_type="root_cause")))
    gate = Gatekeeper.default()
    outcome = gate.validate(ParsedOutput("valid", "", data), INVOCATIONS, SESSION)
    assert outcome.result.status != "fail", outcome.result.errors  # the added claim passes every rule
    code = confirm_by_code(data, session_index(), failed_claims=outcome.failed_claims).confirmed
    assert list(code) == ["claim-1-observed"]

    def decide(label: str, observations: tuple[str, ...] = ("claim-1-observed",)) -> Any:
        return decide_verdict(outcome.normalized, [ClaimCheck(claim_id="claim-1", verification=label)],
                              outcome.result, "valid", gate.verdict_impacts, failed_claims=outcome.failed_claims,
                              excluded_claims=outcome.excluded_claims, code_checks=code, observations=observations)

    for label, verdict in (("unsupported", "LOW_CONFID"), ("contradicted", "REJECT"),
                           ("direct_observation", "LOW_CONFID")):  # the cause alone, capped: no PASS
        decision = decide(label)
        assert decision.verdict == verdict, (label, decision.reasons)
        assert decision.effective_checks["claim-1"] != "direct_observation"
        assert decision.effective_checks["claim-1-observed"] == "direct_observation"
        assert decision.label_sources["claim-1-observed"] == "code"
    assert decide("direct_observation").groundedness_score < decide("direct_observation", ()).groundedness_score
    assert decide("direct_observation", ()).verdict == "PASS"  # what an Executor writing both claims itself gets
    assert "do not lift the verdict" in " ".join(decide("direct_observation").reasons)


def test_the_rule_holds_for_any_domains_tools() -> None:
    """No demo name is built in: a Northwind-style shipment tool's line is observed the same way."""
    line = "2026-03-02 08:15:00 ERROR shipping-service shipment=10248 carrier=Speedy Express SHIP_DELAYED 3 days late"
    ship = ToolInvocation(id=9, session_id=SESSION, tool_name="query_shipments", input={"order_id": 10248},
                          output_preview=f"query_shipments order_id=10248: 1 row\n{line}")
    index = Gatekeeper.default().session_index([ship], SESSION)
    data = output({**claim("订单 10248 延迟是因为承运商 Speedy Express 导致", "carrier=Speedy Express SHIP_DELAYED",
                           [1], claim_type="root_cause"),
                   "evidence_bindings": [{"tool_name": "query_shipments", "source_invocation_ids": [9],
                                          "evidence_excerpt": "carrier=Speedy Express SHIP_DELAYED"}]})
    result, _ = add_excerpt_observations(data, index, locale="en")
    assert result["claims"][1]["claim_text"] == f"query_shipments returned: {line}"
    assert list(confirm_by_code(result, index).confirmed) == ["claim-1-observed"]
    assert KB  # the knowledge fixture is shared with test_confirmation


METRIC_HEADER = "query_metrics payment-service pool_active (conn) 2026-11-28 00:00 → 2026-11-28 23:59, 1440 points"
BREACH = "threshold > 45: first breach 2026-11-28 09:26 (pool_active=50), 26 of 1440 minutes in breach"
BREACH_START = BREACH.split(", 26")[0]


def metric_index() -> Any:
    metrics = ToolInvocation(id=11, session_id=SESSION, tool_name="query_metrics",
                             input={"service": "payment-service", "metric": "pool_active", "limit": 30},
                             output_preview=f"{METRIC_HEADER}\nstats: min=2 max=50\n{BREACH}")
    return Gatekeeper.default().session_index([*INVOCATIONS, metrics], SESSION)


def test_a_metric_line_names_what_the_call_was_about_and_is_still_confirmed_by_code() -> None:
    """Measured on the 0.5B default: it quoted a breach line that, alone, does not say which service it is about."""
    from evigate.rules.verdict.junk_claims import rewrite_junk_claims

    index = metric_index()
    asked = "订单 456 支付失败，ERR_DB_POOL_EXHAUSTED 是什么原因？"
    question = {**claim(asked, BREACH_START, [1], claim_type="context"),
                "evidence_bindings": [{"tool_name": "query_metrics", "source_invocation_ids": [11],
                                       "evidence_excerpt": BREACH_START}]}
    rewritten, _ = rewrite_junk_claims(output(question), index)
    (new,) = rewritten["claims"]
    assert new["claim_text"] == f"query_metrics（payment-service）返回：{BREACH_START}"
    assert new["claim_type"] == "symptom"  # an incident tool's record, whatever type the junk text had
    assert list(confirm_by_code(rewritten, index).confirmed) == ["claim-1"]
    causal = {**question, "claim_text": "连接池耗尽是因为 pool_active 达到上限", "claim_type": "root_cause"}
    added, _ = add_excerpt_observations(output(causal), index, locale="en")
    assert added["claims"][1]["claim_text"] == f"query_metrics (payment-service) returned: {BREACH}"
    assert list(confirm_by_code(added, index).confirmed) == ["claim-1-observed"]


def test_a_breach_line_copied_verbatim_up_to_a_translated_tail_keeps_only_its_verbatim_start() -> None:
    """Measured on the 0.5B default: "threshold > 45: first breach … (pool_active=50), 26 of 1440分钟 in"."""
    from evigate.rules.verdict.junk_claims import rewrite_junk_claims

    def junk(excerpt: str) -> dict[str, Any]:
        return output({**claim("这是什么原因？", excerpt, [1]), "evidence_bindings": [
            {"tool_name": "query_metrics", "source_invocation_ids": [11], "evidence_excerpt": excerpt}]})

    index = metric_index()
    mangled = f"{BREACH_START}, 26 of 1440分钟 in"
    rewritten, (rewrite,) = rewrite_junk_claims(junk(mangled), index)
    (new,) = rewritten["claims"]
    assert new["claim_text"] == f"query_metrics（payment-service）返回：{BREACH_START}, 26 of"  # its verbatim start
    assert new["evidence_bindings"][0]["evidence_excerpt"] == f"{BREACH_START}, 26 of"
    assert rewrite.original_text == "这是什么原因？"
    assert list(confirm_by_code(rewritten, index).confirmed) == ["claim-1"]
    for changed in (f"{BREACH_START}, 31 of 1440 minutes", f"{BREACH_START}, because the pool leaked"):
        assert rewrite_junk_claims(junk(changed), index)[1] == []  # a changed value or a cause: never kept


@pytest.mark.parametrize("cut", ["26 of 144", "26 of 14", "26 of 1440 min"])
def test_an_excerpt_cut_inside_a_value_is_never_stated_with_the_half_value(cut: str) -> None:
    """Measured on train (when-zh-07, 0.5B default): "… 14 of 144" copied from "… 14 of 1440 minutes in breach" was
    stated by code as the tool's observation; the entity rules failed its '144' as forged evidence, and the answer
    was REJECT. What stands is the excerpt up to the last whole word, which names no value the tool did not return."""
    from evigate.rules.verdict.junk_claims import rewrite_junk_claims

    excerpt = f"{BREACH_START}, {cut}"
    data = output({**claim("这是什么原因？", excerpt, [1]), "evidence_bindings": [
        {"tool_name": "query_metrics", "source_invocation_ids": [11], "evidence_excerpt": excerpt}]})
    index = metric_index()
    rewritten, (_,) = rewrite_junk_claims(data, index)
    kept = rewritten["claims"][0]["evidence_bindings"][0]["evidence_excerpt"]
    assert BREACH.startswith(kept) and BREACH[len(kept)] == " ", kept  # ends where a word of the line ends
    invocations = [view.invocation for view in index.in_session]
    gate = Gatekeeper.default().validate(ParsedOutput(status="valid", detail="", data=rewritten), invocations, SESSION)
    assert gate.result.status != "fail", gate.result.errors


@settings(max_examples=60, deadline=None)
@given(end=st.integers(min_value=len(BREACH_START) + 2, max_value=len(BREACH)))
def test_whatever_prefix_of_a_line_is_copied_what_code_states_ends_where_a_word_of_it_ends(end: int) -> None:
    from evigate.rules.verdict.junk_claims import verbatim_start

    kept = verbatim_start(BREACH[:end], list(metric_index().in_session))
    assert kept is not None and BREACH.startswith(kept)
    assert len(kept) == len(BREACH) or not (BREACH[len(kept) - 1].isalnum() and BREACH[len(kept)].isalnum()), kept


def test_a_claim_that_only_restates_what_a_call_was_asked_never_passes_whatever_the_model_says() -> None:
    """Measured on the 0.5B default (en run): "重试风暴 退避 429 限流", lookup_knowledge's query, made a PASS."""
    asked = "重试风暴 退避 429 限流"
    kb = ToolInvocation(id=12, session_id=SESSION, tool_name="lookup_knowledge", input={"query": asked},
                        output_preview=f'lookup_knowledge "{asked}": 1 section\n## 限流\n429 表示请求被限流。')
    index = Gatekeeper.default().session_index([*INVOCATIONS, kb], SESSION)
    data = output({**claim(asked, "429 表示请求被限流。", [1]), "evidence_bindings": [
        {"tool_name": "lookup_knowledge", "source_invocation_ids": [12], "evidence_excerpt": "429 表示请求被限流。"}]})
    code = confirm_by_code(data, index)
    assert code.remaining == [] and code.confirmed["claim-1"].verification == "unsupported"
    decision = decide_verdict(data, [ClaimCheck(claim_id="claim-1", verification="direct_observation")], None,
                              "valid", {}, code_checks=code.confirmed)
    assert decision.verdict == "LOW_CONFID" and decision.code_confirmed == []


def test_a_claim_restating_another_calls_query_is_no_finding_either() -> None:
    """Measured on the 0.5B default: lookup_knowledge's query cited to a query_logs call made a PASS (INC-03)."""
    asked = "HikariCP 连接池耗尽 Connection is not available"
    kb = ToolInvocation(id=12, session_id=SESSION, tool_name="lookup_knowledge", input={"query": asked},
                        output_preview="## HikariCP\\nConnection is not available 表示连接池已满。")
    index = Gatekeeper.default().session_index([*INVOCATIONS, kb], SESSION)
    data = output(claim(asked, "upstream unionpay timeout", [2]))
    code = confirm_by_code(data, index)
    assert code.confirmed["claim-1"].verification == "unsupported"
    assert "#12 lookup_knowledge was asked" in code.confirmed["claim-1"].detail
