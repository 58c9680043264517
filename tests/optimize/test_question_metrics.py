"""The question bank's per-answer metrics (useful, wrong, junk), computed by code without any model."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evigate.demo.catalog import INCIDENTS
from evigate.optimize.question_metrics import AnsweredQuestion, contribution_sums, score_answer, shown_lines
from evigate.optimize.stats import bootstrap_median, wilson
from evigate.rules.answer.catalogue import CATALOGUE
from evigate.rules.answer.render import render_deterministic
from evigate.signatures import ComposerInput

POOL_OUTPUT = (
    "[2026-11-28 09:33:52] payment-service ERROR ERR_DB_POOL_EXHAUSTED callback handler: HikariPool-1 - Connection "
    "is not available, request timed out after 30000ms. order_id=456"
)
SMS_OUTPUT = "by error_code: ERR_SMS_PROVIDER=67 (notification-service)"


def _record(query: str, incident: str | None, claims: list[dict[str, Any]], *, verdict: str = "LOW_CONFID",
            hypotheses: list[str] = (), gaps: list[str] = (), actions: list[str] = (),
            outputs: list[str] = (POOL_OUTPUT,), locale: str = "zh") -> AnsweredQuestion:
    composer_input = ComposerInput(
        original_query=query, verdict=verdict, allowed_claims=claims,
        allowed_hypotheses=[{"hypothesis_text": text} for text in hypotheses], missing_info=list(gaps),
        recommended_actions=[{"action_text": text, "reason": ""} for text in actions],
    )
    answer = render_deterministic(composer_input, locale=locale)
    return AnsweredQuestion(
        id="q", text=query, locale=locale, incident=incident, output_type="NORMAL" if verdict == "PASS" else
        "LOW_CONFID_WITH_DISCLAIMER", verdict=verdict, answer=answer,
        composer_input=composer_input.model_dump(mode="json"), outputs=list(outputs),
    )


def _claim(text: str, claim_type: str = "symptom", support: str = "direct") -> dict[str, Any]:
    return {"claim_id": "c1", "claim_type": claim_type, "claim_text": text, "support_level": support}


POOL_FACT = "payment-service 09:33:52 报 ERR_DB_POOL_EXHAUSTED：HikariPool-1 Connection is not available"


def test_a_key_fact_of_the_right_incident_under_confirmed_is_useful() -> None:
    score = score_answer(_record("早上支付失败是怎么回事？", "INC-20261128-03", [_claim(POOL_FACT)]), INCIDENTS)
    assert score.useful and not score.wrong and score.confirmed


def test_the_same_fact_for_another_incidents_question_is_wrong_not_useful() -> None:
    record = _record("早上 6 点多短信发不出去？", "INC-20261128-02", [_claim(POOL_FACT)])
    score = score_answer(record, INCIDENTS)
    assert not score.useful
    assert any("ERR_DB_POOL_EXHAUSTED" in reason for reason in score.wrong)
    assert any("irrelevant" in reason for reason in score.wrong)


def test_another_incidents_code_named_by_the_question_itself_is_not_wrong() -> None:
    record = _record("ERR_SMS_PROVIDER 和支付失败有关系吗？早上支付失败", "INC-20261128-03", [_claim(POOL_FACT)],
                     gaps=["ERR_SMS_PROVIDER 与 payment-service 的关系未查询"])
    assert not any("ERR_SMS_PROVIDER" in reason for reason in score_answer(record, INCIDENTS).wrong)


def test_an_issue_example_another_incidents_output_confirmed_for_a_payment_question_is_wrong() -> None:
    claim = _claim("query_logs（notification-service）返回：by error_code: ERR_SMS_PROVIDER=67")
    record = _record("订单 456 为什么付款失败？", "INC-20261128-03", [claim], verdict="PASS", outputs=[SMS_OUTPUT])
    score = score_answer(record, INCIDENTS)
    assert score.wrong and not score.useful and score.normal_without_key_fact


def test_a_context_definition_is_not_useful() -> None:
    definition = _claim("ERR_DB_POOL_EXHAUSTED 表示 HikariCP 连接池耗尽", claim_type="context")
    record = _record("早上支付失败？", "INC-20261128-03", [definition],
                     outputs=["ERR_DB_POOL_EXHAUSTED 表示 HikariCP 连接池耗尽"])
    assert not score_answer(record, INCIDENTS).useful


def test_an_unanswerable_question_confirming_nothing_has_no_wrong_and_no_confirmed() -> None:
    record = _record("Why did search-service crash around 10:00?", None, [], verdict="REJECT", locale="en",
                     gaps=["search-service returned no rows between 09:45 and 10:15"],
                     outputs=["search-service: no rows between 2026-11-28 09:45 and 10:15"])
    score = score_answer(record, INCIDENTS)
    assert not score.answerable and not score.confirmed and not score.wrong and not score.junk


def _unscreened(record: AnsweredQuestion, gaps: list[str], actions: list[str] = ()) -> AnsweredQuestion:
    """The record with gaps and actions printed as they are: the product's renderer would screen junk out, and
    the metric must still count it in answers of other programs (or of earlier releases)."""
    words = CATALOGUE[record.locale]
    lines = [words["degraded"], "", words["gaps"], *(f"• {gap}" for gap in gaps), "", words["next_steps"],
             *(f"• {action}" for action in actions)]
    return record.model_copy(update={"answer": "\n".join(lines)})


def test_the_issues_junk_strings_are_junk() -> None:
    junk = [
        "订单 456 456 456 456 456",
        "补足证据（补足证据是补足证据的必要步骤，需要补足证据缺口，）",
        "立即联系客服",
    ]
    record = _unscreened(_record("订单 456 付款失败，为什么？", "INC-20261128-03", [_claim(POOL_FACT)],
                                 verdict="REJECT"), junk[:2], junk[2:])
    reasons = score_answer(record, INCIDENTS).junk
    assert len(reasons) == 3, reasons


def test_a_question_restated_as_a_gap_is_junk_and_a_grounded_gap_is_not() -> None:
    query = "订单 789 下单时库存扣减失败，库存服务报了什么错？"
    echo = _unscreened(_record(query, "INC-20261128-04", [], verdict="REJECT"),
                       ["订单 789 下单时库存扣减失败，库存服务报了什么错"])
    assert score_answer(echo, INCIDENTS).junk
    grounded = _record("早上支付失败？", "INC-20261128-03", [_claim(POOL_FACT)],
                       gaps=["payment-service 的 HikariPool-1 连接为何未归还尚未查询"], verdict="REJECT")
    assert not score_answer(grounded, INCIDENTS).junk


def test_a_hypothesis_without_evidence_is_junk() -> None:
    record = _record("早上 6 点多用户收不到短信？", "INC-20261128-02", [],
                     hypotheses=["用户收不到通知短信可能是由于网络问题或服务中断导致的"], outputs=[SMS_OUTPUT])
    assert any("hypothesis" in reason or "content-free" in reason for reason in score_answer(record, INCIDENTS).junk)


def test_a_failed_run_counts_as_failed_only() -> None:
    record = AnsweredQuestion(id="q", text="x", locale="zh", incident="INC-20261128-01", error="RuntimeError: boom")
    score = score_answer(record, INCIDENTS)
    assert score.failed and not score.useful and not score.wrong


def test_shown_lines_drop_titles_and_fixed_template_text() -> None:
    record = _record("早上支付失败？", "INC-20261128-03", [_claim(POOL_FACT)], gaps=["a gap about HikariPool-1"],
                     verdict="REJECT")
    sections = [section for section, _ in shown_lines(record.answer)]
    assert sections[0] == "confirmed" and "gaps" in sections
    assert all("当前无法" not in line and "暂无" not in line for _, line in shown_lines(record.answer))


def test_contribution_sums_add_rounds_and_composer_status_and_skip_absent_records() -> None:
    with_record = AnsweredQuestion(id="a", text="x", locale="zh", incident=None, contributions={
        "rounds": [{"round": 1, "executor": {"kept": 2, "rewritten": 1, "added_by_code": 0, "dropped": 1},
                    "verifier": {"model_called": True, "labels_from_model": 1, "labels_from_code": 2,
                                 "labels_from_caps": 0}}],
        "composer": {"status": "replaced", "violations": ["x"]}})
    without = AnsweredQuestion(id="b", text="y", locale="en", incident=None)
    sums = contribution_sums([with_record, with_record, without])
    assert sums["executor.kept"] == 4 and sums["verifier.model_called"] == 2
    assert sums["composer.replaced"] == 2 and sums["sessions_with_contributions"] == 2


def test_wilson_interval_known_values() -> None:
    rate, low, high = wilson(8, 10)
    assert rate == 0.8 and abs(low - 0.4902) < 1e-3 and abs(high - 0.9433) < 1e-3
    assert wilson(0, 0) == (0.0, 0.0, 1.0)


@given(st.integers(0, 200), st.integers(1, 200))
def test_wilson_interval_contains_the_rate(hits: int, total: int) -> None:
    hits = min(hits, total)
    rate, low, high = wilson(hits, total)
    assert 0.0 <= low <= rate <= high <= 1.0


@given(st.lists(st.floats(0, 500, allow_nan=False), min_size=1, max_size=40))
def test_bootstrap_median_interval_contains_the_median(values: list[float]) -> None:
    result = bootstrap_median(values, resamples=200)
    assert result is not None
    median, low, high = result
    assert low <= median <= high and min(values) <= low and high <= max(values)
    assert bootstrap_median(values, resamples=200) == result  # seeded: reruns agree


def test_the_products_own_fixed_gaps_and_actions_are_not_junk() -> None:
    words = CATALOGUE["zh"]
    record = _unscreened(_record("14:10 pay-gateway 怎么了？", "INC-20261128-05", [], verdict="REJECT"),
                         [words[key] for key in words if key.startswith("gap_") and "{" not in words[key]],
                         [words["retry"], words["manual"]])
    assert score_answer(record, INCIDENTS).junk == []


def test_the_templates_own_action_with_its_reason_is_no_model_junk() -> None:
    """The fixed "gather more evidence" step is what the product shows in place of junk; with its fixed reason in
    the template's brackets it was counted as content-free junk (39 of 41 dev answers of a code-only run)."""
    for locale in ("zh", "en"):
        words = CATALOGUE[locale]
        record = _record("notification-service 6 点 15 分左右的情况帮我看一下", None, [], locale=locale)
        ci = ComposerInput.model_validate({**(record.composer_input or {}), "recommended_actions": [
            {"action_text": words["action_more_evidence"], "reason": words["action_more_evidence_reason"]}]})
        record.composer_input = ci.model_dump(mode="json")
        record.answer = render_deterministic(ci, locale=locale)
        assert words["action_more_evidence"] in record.answer
        assert score_answer(record, INCIDENTS).junk == []


def test_a_composer_that_names_the_tool_in_its_own_words_still_states_the_fact() -> None:
    """Measured on dev: "查询日志返回：… ERR_SMS_PROVIDER sms retry" for the claim "query_logs 返回：…" was not
    counted as stated."""
    line = "2026-11-28 06:10:00 WARN notification-service ERR_SMS_PROVIDER sms retry"
    record = _record("notification-service 6 点 15 分左右的情况帮我看一下", "INC-20261128-02",
                     [_claim(f"query_logs 返回：{line}")], verdict="PASS", outputs=[line])
    prose = record.model_copy(update={"answer": f"查询日志返回：{line}",
                                      "plan": [{"round": 1, "tool": "query_logs", "args": {}, "success": True}]})
    score = score_answer(prose, INCIDENTS)
    assert score.confirmed and score.useful and not score.wrong
    unrelated = prose.model_copy(update={"answer": "查询日志返回：没有发现问题"})
    assert not score_answer(unrelated, INCIDENTS).confirmed


def test_executor_own_claims_count_only_allowed_claims_the_last_round_kept_as_written() -> None:
    from evigate.optimize.question_metrics import executor_own_claims

    claims = [{"claim_id": cid, "claim_type": "symptom", "claim_text": "t", "support_level": "direct"}
              for cid in ("claim-1", "claim-2", "observed-1")]
    record = AnsweredQuestion(
        id="a", text="x", locale="zh", incident=None,
        composer_input={"allowed_claims": claims},
        contributions={"rounds": [
            {"executor": {"claims": [{"claim_id": "claim-1", "status": "rewritten"}]}},
            {"executor": {"claims": [{"claim_id": "claim-1", "status": "kept"},
                                     {"claim_id": "claim-2", "status": "rewritten"},
                                     {"claim_id": "observed-1", "status": "added_by_code"}]}}]})
    unrecorded = AnsweredQuestion(id="b", text="y", locale="en", incident=None,
                                  composer_input={"allowed_claims": claims[:1]})
    assert executor_own_claims([record, unrecorded]) == (1, 4)
    assert executor_own_claims([]) == (0, 0)


def test_a_confirmed_statement_of_the_questions_own_words_is_counted_apart() -> None:
    # The blind spot of the earlier metric: the question restated as a confirmed fact was neither wrong nor junk.
    query = "订单 456 付款失败了，ERR_DB_POOL_EXHAUSTED 是什么原因？"
    echoed = score_answer(_record(query, "INC-20261128-03", [_claim("订单 456 付款失败了，ERR_DB_POOL_EXHAUSTED")],
                                  verdict="PASS"), INCIDENTS)
    assert echoed.echoed == ["订单 456 付款失败了，ERR_DB_POOL_EXHAUSTED"]
    finding = score_answer(_record(query, "INC-20261128-03", [_claim(POOL_FACT)], verdict="PASS"), INCIDENTS)
    assert finding.echoed == [] and finding.useful
