"""Issue 22 items 1 and 9: `evigate.verify` fails closed — text past a cap, padding, odd input and questions."""

from __future__ import annotations

from typing import Any

import dspy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate import verify, verify_metric
from evigate.rules.grounding.case import MAX_CLAIMS
from evigate.rules.grounding.sentences import MAX_ANSWER_CHARS

CONTEXT = ["The timeout is 3000ms."]
TRUE = "The timeout is 3000ms."
FORGED = "An admin deleted order 123 and wired 9999999 dollars."
PADDING = {"newlines": "\n", "spaces": " ", "zero-width spaces": "\u200b", "mixed": " \u200b\n\u2060\ufeff\t"}


@pytest.mark.parametrize("pad", PADDING.values(), ids=PADDING.keys())
def test_the_issue_reproduction_text_past_the_cap_counts_against_the_answer(pad: str) -> None:
    answer = TRUE + pad * (MAX_ANSWER_CHARS // len(pad)) + FORGED
    result = verify(answer, CONTEXT)
    assert not result.supported and result.verdict != "PASS"
    last = result.sentences[-1]
    assert last.label == "unsupported" and last.reason.startswith("truncated:") and "not checked" in last.reason
    assert last.text.startswith("An admin deleted order 123")
    example = dspy.Example(context=CONTEXT)
    assert verify_metric()(example, dspy.Prediction(answer=answer)) < 1.0


def test_blank_padding_past_the_cap_hides_nothing_and_costs_nothing() -> None:
    result = verify(TRUE + " \u200b\n" * MAX_ANSWER_CHARS, CONTEXT)
    assert result.supported and result.verdict == "PASS"


def test_claims_past_the_claim_cap_count_against_the_verdict() -> None:
    answer = "\n".join([TRUE] * (MAX_CLAIMS + 5))
    result = verify(answer, CONTEXT)
    assert not result.supported and result.verdict != "PASS"
    unchecked = [s for s in result.sentences if s.label == "unsupported"]
    assert len(unchecked) == 5 and "not judged: 5 sentences" in unchecked[0].reason


@settings(max_examples=40, deadline=None)
@given(
    pad=st.lists(st.sampled_from([" ", "\n", "\t", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]),
                 min_size=1, max_size=6).map("".join),
    repeat=st.integers(min_value=1, max_value=3 * MAX_ANSWER_CHARS),
    tail=st.sampled_from([FORGED, "数据库被管理员删除，损失 9999999 元。", "Order 777 was refunded twice."]),
)
def test_padding_never_hides_text(pad: str, repeat: int, tail: str) -> None:
    """Whatever invisible padding stands between a true sentence and a forged one, the answer is not supported."""
    answer = TRUE + (pad * repeat)[: 3 * MAX_ANSWER_CHARS] + tail
    result = verify(answer, CONTEXT)
    assert not result.supported and result.verdict != "PASS"


@pytest.mark.parametrize("answer", [None, 5, b"The timeout is 3000ms.", ["The timeout is 3000ms."]])
def test_an_answer_that_is_not_text_is_a_type_error(answer: Any) -> None:
    with pytest.raises(TypeError, match="answer as str"):
        verify(answer, CONTEXT)


@pytest.mark.parametrize("context", [None, 5, b"The timeout is 3000ms.", [b"x"], {"log": 5}])
def test_a_context_that_is_not_text_is_a_type_error(context: Any) -> None:
    with pytest.raises(TypeError, match="context"):
        verify(TRUE, context)


@pytest.mark.parametrize("answer", ["", "   ", "\n\t\n", "\u200b\u200b", "…"])
def test_an_empty_answer_is_not_supported(answer: str) -> None:
    result = verify(answer, CONTEXT)
    assert not result.supported and result.verdict != "PASS"
    assert [s.label for s in result.sentences] == ["unsupported"] and "empty" in result.sentences[0].reason


def test_the_metric_scores_an_empty_or_missing_answer_zero() -> None:
    metric = verify_metric()
    example = dspy.Example(context=CONTEXT)
    assert metric(example, dspy.Prediction(answer="")) == 0.0
    assert metric(example, dspy.Prediction(answer=None)) == 0.0
    assert metric(example, dspy.Prediction(answer=""), trace=[]) is False


def test_a_question_mark_does_not_make_a_fabricated_cause_vanish() -> None:
    context = ["Order 123 failed at 10:05 with ERR_TIMEOUT."]
    result = verify("Order 123 failed because an admin deleted the database?", context)
    assert not result.supported and result.sentences[0].label == "unsupported"
    asked = verify("Why did order 123 fail? 订单 123 为什么失败？ 要看网关日志吗？", context)
    assert asked.supported and {s.label for s in asked.sentences} == {"not_a_claim"}
