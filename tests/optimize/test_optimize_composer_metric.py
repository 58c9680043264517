"""The Composer metric on the hand-written Composer cases, with values worked out by hand."""

from __future__ import annotations

import dspy
import pytest

from evigate.datasets import ComposerCase, composer_example, load_composer_cases
from evigate.optimize.composer_metric import ComposerMetric, score_composer, summarize_composer
from evigate.signatures import ComposerOutput


@pytest.fixture(scope="module")
def cases() -> dict[str, ComposerCase]:
    return {case.case_id: case for case in load_composer_cases()}


def answer(summary: str, text: str) -> dspy.Prediction:
    return dspy.Prediction(composer_output=ComposerOutput(answer_summary=summary, user_facing_answer=text))


PASS_TEXT = ("您的订单 123 支付失败，错误码为 ERR_TIMEOUT。"
             "pay-gateway 调用上游 unionpay 通道耗时 5.3 秒，超过了 3000ms 的超时配置。"
             "订单 123 失败的原因是上游 unionpay 通道响应慢。"
             "建议查看 unionpay 通道在 14:00 前后的耗时与成功率。")
LOW_FACTS = ("已确认：订单 456 支付失败，错误码为 ERR_DB_POOL_EXHAUSTED；"
             "payment-service 获取数据库连接等待 30000ms 后超时。")
LOW_TEXT = (LOW_FACTS + "可能方向：退款路径的连接泄漏可能来自 v2.14.0 新增的代码，"
            "但目前缺少 v2.14.0 与 v2.13.2 的代码差异，无法确认泄漏位置。")
REJECT_TEXT = ("当前无法基于已获取证据生成可靠结论，建议人工介入。"
               "已确认信息：订单 666 支付失败，错误码为 ERR_TIMEOUT。"
               "建议下一步：人工复核本次诊断的工具调用记录与证据。")


def test_a_good_answer_scores_one_for_each_verdict(cases: dict[str, ComposerCase]) -> None:
    for case_id, text in (("hand-pass-units", PASS_TEXT), ("hand-low-confid-hypothesis-stays-possible", LOW_TEXT),
                          ("hand-reject-no-conclusion", REJECT_TEXT)):
        result = score_composer(cases[case_id], answer("摘要", text))
        assert result.clean and result.coverage == 1.0 and result.expression == 1.0, result
        assert result.score == 1.0


def test_missing_required_content_lowers_coverage(cases: dict[str, ComposerCase]) -> None:
    text = PASS_TEXT.replace("unionpay", "上游")  # 2 of the 3 must-contain groups remain
    result = score_composer(cases["hand-pass-units"], answer("摘要", text))
    assert result.missing_groups == (("unionpay",),)
    assert result.score == pytest.approx(0.3 + 0.4 * 2 / 3 + 0.3)


def test_reject_without_the_no_conclusion_statement_breaks_one_rule(cases: dict[str, ComposerCase]) -> None:
    text = "已确认信息：订单 666 支付失败，错误码为 ERR_TIMEOUT。建议下一步：人工复核本次诊断的工具调用记录与证据。"
    result = score_composer(cases["hand-reject-no-conclusion"], answer("摘要", text))
    assert result.clean
    assert result.expression_failures == ("REJECT: say no reliable conclusion can be drawn from the evidence",)
    assert result.score == pytest.approx(0.3 + 0.4 + 0.3 * 0.5)


def test_low_confid_hypothesis_left_out_fails_the_tentative_rule(cases: dict[str, ComposerCase]) -> None:
    text = LOW_FACTS + "目前缺少 v2.14.0 与 v2.13.2 的代码差异，无法确认泄漏位置。"
    result = score_composer(cases["hand-low-confid-hypothesis-stays-possible"], answer("摘要", text))
    assert result.clean and result.expression == pytest.approx(2 / 3)
    assert result.score == pytest.approx(0.3 + 0.4 + 0.3 * 2 / 3)


def test_forbidden_content_or_a_guard_violation_scores_zero(cases: dict[str, ComposerCase]) -> None:
    forbidden = score_composer(cases["hand-reject-no-conclusion"], answer("摘要", REJECT_TEXT + "根因可能是数据库。"))
    assert forbidden.forbidden_hits == ("数据库",) and forbidden.score == 0.0
    markdown = score_composer(cases["hand-pass-units"], answer("摘要", "**结论**：" + PASS_TEXT))
    assert markdown.violations and markdown.score == 0.0
    invented = score_composer(cases["hand-pass-units"], answer("摘要", PASS_TEXT + "同时 redis-cluster 也出现异常。"))
    assert any("redis-cluster" in violation for violation in invented.violations) and invented.score == 0.0


def test_no_output_is_an_error_not_a_crash(cases: dict[str, ComposerCase]) -> None:
    result = score_composer(cases["hand-pass-units"], dspy.Prediction())
    assert result.score == 0.0 and result.error and not result.clean


def test_metric_modes(cases: dict[str, ComposerCase]) -> None:
    example = composer_example(cases["hand-pass-units"])
    partial = answer("摘要", PASS_TEXT.replace("unionpay", "上游"))
    assert ComposerMetric()(example, partial) == pytest.approx(0.8666666)
    assert ComposerMetric(threshold=0.9)(example, partial, trace=[]) is False
    feedback = ComposerMetric(feedback=True)(example, partial, None, "compose", None)
    assert "Missing required content, say one of: unionpay" in feedback.feedback


def test_summary_by_hand(cases: dict[str, ComposerCase]) -> None:
    scores = [score_composer(cases["hand-pass-units"], answer("摘要", PASS_TEXT)),
              score_composer(cases["hand-reject-no-conclusion"], answer("摘要", REJECT_TEXT + "数据库")),
              score_composer(cases["hand-pass-units"], dspy.Prediction())]
    summary = summarize_composer(scores)
    assert summary.count == 3 and summary.errors == 1
    assert summary.mean_score == pytest.approx(1 / 3) and summary.clean_rate == pytest.approx(1 / 3)
    assert summary.by_verdict == {"PASS": pytest.approx(0.5), "REJECT": 0.0}
