"""A runbook's direction for an error nobody saw is not shown as a direction or a gap (runbook_directions.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evigate.rules import Gatekeeper, decide_verdict
from evigate.rules.answer.composer_input import assemble_composer_input
from evigate.rules.answer.render import render_deterministic
from evigate.rules.verdict.relevance import off_topic_items
from evigate.rules.verdict.runbook_directions import RUNBOOK_DIRECTION_WHY
from evigate.signatures import ToolInvocation

SESSION = "s-directions"
QUIET = "凌晨 4 点多 payment-service 有没有异常？"
NOISE = ("2026-11-28 04:19:37 WARN pay-gateway trace=3064e3a0a7c1329a order=18601 ERR_INSUFFICIENT_BALANCE upstream "
         "alipay responded ERR_INSUFFICIENT_BALANCE in 476ms")
TIMEOUT = "2026-11-28 14:03:12 ERROR pay-gateway trace=3f9a7c2e5b8d1046 order=123 ERR_TIMEOUT upstream unionpay"
RUNBOOK = "## ERR_TIMEOUT\n含义：pay-gateway 调用上游支付通道超时，导致支付失败。\n处理：检查通道耗时。"
DIRECTION = "pay-gateway 调用上游支付通道超时"


def _index(logs: str, query: str = QUIET, runbook: str | None = RUNBOOK) -> Any:
    calls = [ToolInvocation(id=1, session_id=SESSION, tool_name="query_logs", input={"service": "pay-gateway"},
                            output_preview=f"query_logs service=pay-gateway: 4 matching lines\n{logs}")]
    if runbook is not None:
        calls.append(ToolInvocation(id=2, session_id=SESSION, tool_name="lookup_knowledge",
                                    input={"query": "ERR_TIMEOUT 支付网关超时"}, output_preview=runbook))
    return Gatekeeper.default().session_index(calls, SESSION, query=query)


def _output(*hypotheses: str, gaps: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"answer_version": "executor_evidence_v2", "claims": [],
            "hypotheses": [{"hypothesis_text": text, "basis": NOISE} for text in hypotheses],
            "missing_info": list(gaps)}


def test_the_train_case_a_runbooks_cause_on_a_quiet_hour_is_not_shown() -> None:
    """Measured on train (0.5B default): for a quiet hour, the ERR_TIMEOUT runbook's cause was offered as a direction
    and a gap, beside pay-gateway lines of another error."""
    output = _output(DIRECTION, "上游支付通道超时导致支付失败", gaps=("上游支付通道超时导致支付失败",))
    off = off_topic_items(output, _index(NOISE))
    assert off == {"hypotheses[0]": RUNBOOK_DIRECTION_WHY, "hypotheses[1]": RUNBOOK_DIRECTION_WHY,
                   "missing_info[0]": RUNBOOK_DIRECTION_WHY}
    decision = decide_verdict(output, [], None, "valid", {}, off_topic_items=off)
    material = assemble_composer_input(QUIET, output, None, decision)
    assert "上游支付通道" not in render_deterministic(material.composer_input)
    assert {item.field for item in material.dropped} >= {"hypotheses[0]", "hypotheses[1]", "missing_info[0]"}


def test_a_direction_with_footing_stands() -> None:
    # The evidence observed the error the runbook explains: its explanation is a fair direction.
    assert off_topic_items(_output("上游支付通道超时导致支付失败"), _index(f"{NOISE}\n{TIMEOUT}")) == {}
    # It names what the evidence observed beyond the runbook's words.
    assert off_topic_items(_output("上游支付通道 476ms 才返回"), _index(NOISE)) == {}
    # A gap about the question's own service; a session without knowledge documents (other rules judge it).
    assert off_topic_items(_output(gaps=("缺少 payment-service 04:30 的支付通道超时日志",)), _index(NOISE)) == {}
    assert off_topic_items(_output("上游支付通道超时导致支付失败"), _index(NOISE, runbook=None)) == {}


@given(st.sampled_from(["上游", "支付", "通道", "超时", "耗时", "失败"]), st.integers(min_value=1, max_value=4))
def test_any_rearrangement_of_the_runbooks_words_is_still_its_direction(word: str, times: int) -> None:
    text = " ".join([DIRECTION, *([word] * times)])
    assert off_topic_items(_output(text), _index(NOISE)) == {"hypotheses[0]": RUNBOOK_DIRECTION_WHY}
