"""Code confirms quotes, caps what a model may call observed, and rewrites junk claims (rules/verdict/)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from evigate.rules import Gatekeeper, decide_verdict
from evigate.rules.verdict.ceilings import ceilings_of
from evigate.rules.verdict.confirmation import confirm_by_code, strip_attribution
from evigate.rules.verdict.junk_claims import junk_reason, rewrite_junk_claims
from evigate.signatures import ClaimCheck, ToolInvocation

SESSION = "s-confirm"
ORDER = "order 123: status=FAILED error_code=ERR_TIMEOUT created_at=2026-11-28 14:03:05"
LOG = ("2026-11-28 14:03:12 ERROR pay-gateway trace=3f9a7c2e5b8d1046 order=123 ERR_TIMEOUT upstream unionpay "
       "timeout after 5300ms (timeout=3000ms)")
KB = "## ERR_TIMEOUT\n含义：pay-gateway 调用上游支付通道超时。\n处理：检查通道耗时。"
INVOCATIONS = [
    ToolInvocation(id=1, session_id=SESSION, tool_name="query_order", input={"order_id": 123}, output_preview=ORDER),
    ToolInvocation(id=2, session_id=SESSION, tool_name="query_logs", input={"order_id": 123}, output_preview=LOG),
    ToolInvocation(id=3, session_id=SESSION, tool_name="lookup_knowledge", input={"query": "ERR_TIMEOUT"},
                   output_preview=KB),
    ToolInvocation(id=4, session_id=SESSION, tool_name="query_logs", input={"order_id": 9}, output_preview=LOG,
                   success=False, error="timed out"),
]
TOOL_OF = {inv.id: inv.tool_name for inv in INVOCATIONS}


def claim(text: str, excerpt: str, ids: list[int], *, claim_type: str = "symptom", support: str = "direct",
          claim_id: str = "claim-1") -> dict[str, Any]:
    return {"claim_id": claim_id, "claim_type": claim_type, "claim_text": text, "support_level": support,
            "evidence_bindings": [{"tool_name": TOOL_OF[ids[0]], "source_invocation_ids": ids,
                                   "evidence_excerpt": excerpt, "source_type": "tool_trace"}]}


def output(*claims: dict[str, Any]) -> dict[str, Any]:
    return {"answer_version": "executor_evidence_v2", "claims": list(claims), "hypotheses": [],
            "recommended_actions": [], "missing_info": []}


def session_index() -> Any:
    return Gatekeeper.default().session_index(INVOCATIONS, SESSION)


def confirmed(*claims: dict[str, Any]) -> list[str]:
    return list(confirm_by_code(output(*claims), session_index()).confirmed)


@pytest.mark.parametrize(("text", "core"), [
    ("日志显示 ERR_TIMEOUT upstream", "err_timeout upstream"),
    ("根据日志，ERR_TIMEOUT upstream", "err_timeout upstream"),
    ("pay-gateway 的日志显示：ERR_TIMEOUT upstream", "err_timeout upstream"),
    ("The logs show that ERR_TIMEOUT upstream", "err_timeout upstream"),
    ("According to the logs, ERR_TIMEOUT upstream", "err_timeout upstream"),
    ("query_order 返回：order 123", "order 123"),
    ("订单 123 支付失败", "订单 123 支付失败"),  # "订单" starts a finding here, not an attribution
])
def test_attributions_are_stripped_and_findings_kept(text: str, core: str) -> None:
    assert strip_attribution(text, ["query_order"]) == core


def test_a_claim_that_quotes_its_cited_output_is_confirmed_whatever_its_attribution() -> None:
    assert confirmed(claim(f"日志显示 {LOG[20:]}", LOG[20:], [2])) == ["claim-1"]
    assert confirmed(claim(f"the logs show {LOG[20:]}", LOG[20:], [2])) == ["claim-1"]
    assert confirmed(claim(ORDER, ORDER, [1])) == ["claim-1"]


@pytest.mark.parametrize("case", [
    claim("订单 123 支付失败，错误码 ERR_TIMEOUT", ORDER, [1]),  # a paraphrase: the model judges it
    claim(ORDER, ORDER, [1], support="indirect"),  # its Executor says indirect
    claim(ORDER, ORDER, [4]),  # failed invocation
    claim(ORDER, ORDER, [2]),  # the text is not in the cited output (it is another call's)
    claim("日志显示 ERR_TIMEOUT upstream unionpay timeout after 5300ms because of unionpay", LOG[20:], [2]),
    claim(f"可能 {ORDER}", ORDER, [1]),  # hedged
    claim(f"{ORDER}？", ORDER, [1]),  # a question
    claim(ORDER, ORDER, [1], claim_type="root_cause"),  # a root cause is never a quote
    claim("含义：pay-gateway 调用上游支付通道超时", "含义：pay-gateway 调用上游支付通道超时", [3]),  # KB as symptom
    claim("order", "order", [1]),  # too little to confirm
])
def test_code_confirms_nothing_it_cannot_prove(case: dict[str, Any]) -> None:
    assert confirmed(case) == []


def test_a_knowledge_quote_confirms_a_definition_but_never_an_incident_fact() -> None:
    definition = claim("含义：pay-gateway 调用上游支付通道超时", "含义：pay-gateway 调用上游支付通道超时", [3],
                       claim_type="context")
    assert confirmed(definition) == ["claim-1"]
    symptom = {**definition, "claim_type": "symptom"}
    assert ceilings_of(output(symptom))["claim-1"].reason == "knowledge_only"


def test_caps_indirect_and_causal_claims_to_reasonable_inference() -> None:
    data = output(
        claim("订单 123 失败是因为 unionpay 超时", LOG[20:], [2], claim_type="root_cause", claim_id="claim-1"),
        claim("订单 123 支付失败", ORDER, [1], support="indirect", claim_id="claim-2"),
    )
    checks = [ClaimCheck(claim_id=k, verification="direct_observation") for k in ("claim-1", "claim-2")]
    decision = decide_verdict(data, checks, None, "valid", {})
    assert decision.effective_checks == {"claim-1": "reasonable_inference", "claim-2": "reasonable_inference"}
    assert decision.verdict == "LOW_CONFID" and set(decision.capped) == {"claim-1", "claim-2"}


def test_a_cause_the_cited_excerpt_states_itself_is_not_capped() -> None:
    stated = "payment failed because upstream unionpay timeout after 5300ms"
    data = output(claim(stated, stated, [2], claim_type="root_cause"))
    assert ceilings_of(data) == {}


def test_code_labels_never_lift_a_gatekeeper_failure() -> None:
    data = output(claim(ORDER, ORDER, [1]))
    code = confirm_by_code(data, session_index()).confirmed
    gate = {"status": "fail", "failed_rules": ["claim.question_echo"],
            "errors": [{"rule_id": "claim.question_echo", "target": "claims[0].claim_text", "message": "x"}]}
    decision = decide_verdict(data, [], gate, "valid", {"claim.question_echo": "low_confid_on_fail"},
                              code_checks=code)
    assert decision.verdict == "LOW_CONFID" and decision.effective_checks["claim-1"] == "unsupported"


def test_the_verdict_summary_keys_on_typed_rows_not_on_reason_text() -> None:
    # A model-chosen claim id that reads like another row must not change the summary (was: substring matching).
    sneaky = "claim-9 is contradicted by the evidence"
    data = output(claim("订单 123 支付失败", ORDER, [1], claim_id=sneaky))
    decision = decide_verdict(data, [ClaimCheck(claim_id=sneaky, verification="unsupported")], None, "valid", {})
    assert decision.rows[0].code == "unsupported"
    assert decision.summary == "部分说法缺少证据支持"


@pytest.mark.parametrize(("text", "junk"), [
    ("订单 123 支付失败，ERR_TIMEOUT 是什么原因？", True),
    ("请只输出 JSON，claim_text 写结论", True),
    ("Only use the tool outputs", True),
    ("订单 123 支付失败，错误码 ERR_TIMEOUT", False),
    ("pay-gateway 调用 unionpay 超时", False),
])
def test_junk_claim_texts(text: str, junk: bool) -> None:
    assert (junk_reason(text, "订单 123 支付失败，ERR_TIMEOUT 是什么原因？") is not None) is junk


def test_a_junk_claim_beside_a_verbatim_excerpt_becomes_the_tools_own_observation() -> None:
    data = output(claim("订单 123 支付失败，ERR_TIMEOUT 是什么原因？", ORDER[:46], [1], claim_type="root_cause"))
    rewritten, rewrites = rewrite_junk_claims(data, session_index())
    (new,) = rewritten["claims"]
    # ORDER[:46] stops inside "ERR_TIMEOUT": what stands ends at the last whole word, never half a code
    assert ORDER[:46].endswith("ERR_TIMEOU")
    assert new["claim_text"] == "query_order 返回：order 123: status=FAILED" and new["claim_type"] == "symptom"
    assert rewrites[0].original_text.endswith("是什么原因？")
    assert data["claims"][0]["claim_text"].endswith("？")  # the input is not modified
    assert confirmed(new) == ["claim-1"]
    english, _ = rewrite_junk_claims(data, session_index(), locale="en")
    assert english["claims"][0]["claim_text"].startswith("query_order returned: order 123")


@pytest.mark.parametrize(("excerpt", "ids"), [
    ("order 123: status=PAID", [1]),  # not what the call returned
    (LOG[20:], [4]),  # a failed call
    ("upstream unionpay timeout caused by slow channel", [2]),  # causal wording never becomes a fact
])
def test_a_junk_claim_without_a_usable_verbatim_excerpt_is_left_to_the_gatekeeper(excerpt: str, ids: list[int]) -> None:
    data = output(claim("这是什么原因？", excerpt, ids))
    rewritten, rewrites = rewrite_junk_claims(data, session_index())
    assert rewrites == [] and rewritten == data


def test_a_header_line_that_restates_the_call_is_neither_confirmed_nor_used_for_a_rewrite() -> None:
    """Measured on the 0.5B default: a quoted query_metrics header (service, metric, time range) made a PASS."""
    header = "query_order order_id=123 returned 1 row at 2026-11-28 14:03:05"
    invocations = [*INVOCATIONS, ToolInvocation(id=5, session_id=SESSION, tool_name="query_order",
                                                input={"order_id": 123}, output_preview=f"{header}\n{ORDER}")]
    TOOL_OF[5] = "query_order"
    index = Gatekeeper.default().session_index(invocations, SESSION)
    assert confirm_by_code(output(claim(header, header, [5])), index).confirmed == {}
    _, rewrites = rewrite_junk_claims(output(claim("这是什么原因？", header, [5])), index)
    assert rewrites == []


def test_a_claim_that_is_the_calls_own_query_is_not_confirmed() -> None:
    """Measured on the 0.5B default: lookup_knowledge's query, echoed in its header, was confirmed as a claim."""
    echoed = "ERR_TIMEOUT 支付 超时 排查"
    kb = ToolInvocation(id=6, session_id=SESSION, tool_name="lookup_knowledge", input={"query": echoed},
                        output_preview=f'lookup_knowledge "{echoed}": 1 section\n{KB}')
    TOOL_OF[6] = "lookup_knowledge"
    index = Gatekeeper.default().session_index([*INVOCATIONS, kb], SESSION)
    decided = confirm_by_code(output(claim(echoed, echoed, [6], claim_type="context")), index)
    # Not confirmed: code decides it restates what the call was asked (the model's label cannot make it a finding).
    assert decided.confirmed["claim-1"].verification == "unsupported" and decided.remaining == []
    assert "was asked" in decided.confirmed["claim-1"].detail


_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=120, deadline=None)
@given(data=st.dictionaries(st.sampled_from(["answer_version", "claims", "hypotheses", "x"]), _JSONISH, max_size=4))
@example(data={"answer_version": "executor_evidence_v2"})  # an output cut before its claims: was KeyError 'claims'
def test_code_rewrites_never_raise_on_any_output_shape(data: dict[str, Any]) -> None:
    from evigate.rules.verdict.junk_claims import add_excerpt_observations

    rewritten, _ = rewrite_junk_claims(data, session_index(), query="订单 123 为什么失败？")
    added, _ = add_excerpt_observations(rewritten, session_index(), query="订单 123 为什么失败？")
    assert ("claims" in (added or {})) == ("claims" in data)
    confirm_by_code(added, session_index())
