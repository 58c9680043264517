"""The Composer's prose is in the user's language and says something of its input (issue 18: junk is never shown)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evigate.rules import check_composer_output, render_answer
from evigate.signatures import AllowedClaim, ComposerInput, ComposerOutput

EN_GAP = "The current evidence is not enough to confirm a conclusion"


def _input(query: str, locale: str | None, **fields: object) -> ComposerInput:
    return ComposerInput.model_validate({"original_query": query, "verdict": "LOW_CONFID", "locale": locale,
                                         "missing_info": [EN_GAP if locale == "en" else "当前证据尚不足以确认结论"],
                                         **fields})


def _output(text: str) -> ComposerOutput:
    return ComposerOutput(answer_summary="", user_facing_answer=text)


def test_chinese_filler_under_english_headings_is_refused() -> None:
    # Measured on train (0.5B default): shown for "Was coupon-service failing at 14:10?" before this guard.
    composer_input = _input("Was coupon-service failing at 14:10?", "en")
    problems = check_composer_output(composer_input, _output("当前证据不足以确认一个结论"))
    assert any("another language" in problem for problem in problems)
    assert any("filler" in problem for problem in problems)
    answer = render_answer(composer_input, _output("当前证据不足以确认一个结论"), locale="en")
    assert "当前证据" not in answer and EN_GAP in answer


def test_an_answer_in_the_users_language_about_its_input_passes() -> None:
    composer_input = _input("Was coupon-service failing at 14:10?", "en")
    text = "No failure of coupon-service was found around 14:10; the current evidence is not enough to confirm one."
    assert check_composer_output(composer_input, _output(text)) == []


def test_a_claim_quoted_in_its_own_language_is_no_foreign_text() -> None:
    claim = AllowedClaim(claim_id="c1", claim_type="context", claim_text="含义：pay-gateway 调用上游支付通道超时")
    composer_input = _input("What does ERR_TIMEOUT mean?", "en", allowed_claims=[claim])
    text = "The runbook says: 含义：pay-gateway 调用上游支付通道超时. The evidence is not enough to confirm more."
    assert not [p for p in check_composer_output(composer_input, _output(text)) if "another language" in p]


def test_an_english_sentence_in_a_chinese_answer_is_refused_unless_quoted() -> None:
    composer_input = _input("订单 123 为什么支付失败？", "zh")
    text = "订单 123 支付失败。Evidence gap: the payment channel did not respond in time. 当前证据尚不足以确认结论"
    assert any("another language" in p for p in check_composer_output(composer_input, _output(text)))
    quoted = _input("订单 123 为什么支付失败？", "zh", missing_info=["upstream unionpay timeout after 5300ms was seen"])
    text = "订单 123 的日志写着 upstream unionpay timeout after 5300ms was seen，仍缺少通道耗时基线"
    assert not [p for p in check_composer_output(quoted, _output(text)) if "another language" in p]


def test_without_a_locale_the_language_is_not_judged() -> None:
    composer_input = _input("Was coupon-service failing at 14:10?", None)
    assert not [p for p in check_composer_output(composer_input, _output("coupon-service 在 14:10 没有失败记录"))
                if "another language" in p]


@given(st.text(alphabet=st.sampled_from(list("猫狗鱼鸟树花草云雨雪")), min_size=2, max_size=30))
def test_any_chinese_words_the_input_does_not_hold_are_refused_in_an_english_answer(words: str) -> None:
    composer_input = _input("Was coupon-service failing at 14:10?", "en")
    text = f"coupon-service at 14:10: {words}. {EN_GAP}."
    assert any("another language" in p for p in check_composer_output(composer_input, _output(text)))
