"""A Composer answer that leaves out every directly supported fact it was given is replaced by the renderer."""

from __future__ import annotations

from evigate.modules.judgement import guard_composer_output, states_a_confirmed_fact
from evigate.rules import decide_verdict
from evigate.rules.answer.render import render_answer
from evigate.signatures import AllowedClaim, ComposerInput, ComposerOutput

FACT = "query_logs 返回：2026-11-28 02:10:01 WARN settlement-service SLOW_SQL slow query 11618ms"
QUERY = "凌晨 2 点多 settlement-service 对账任务很慢，SLOW_SQL 是什么原因？"


def composer_input(support: str = "direct") -> ComposerInput:
    return ComposerInput(original_query=QUERY, verdict="LOW_CONFID", allowed_claims=[AllowedClaim(
        claim_id="claim-1-observed", claim_type="symptom", claim_text=FACT, support_level=support)],
        missing_info=["缺少执行计划"])


def test_an_answer_stating_no_confirmed_fact_is_replaced_by_the_rendered_facts() -> None:
    """Seen on the 0.5B default (audit of h1's demo run): answers that were only a runbook line or the query's terms."""
    ci = composer_input()
    vague = ComposerOutput(answer_summary="对账任务很慢", user_facing_answer="对账任务很慢，建议补充证据后再看。")
    decision = decide_verdict(None, [], None, "valid", {})
    assert "the answer states none of the directly supported facts it was given" in guard_composer_output(
        ci, vague, None, decision)
    assert FACT in render_answer(ci, None)  # what the user sees instead


def test_a_fact_stated_verbatim_or_by_all_its_values_satisfies_the_rule() -> None:
    ci = composer_input()
    assert states_a_confirmed_fact(ci, f"已确认：{FACT}。缺口：缺少执行计划。")
    paraphrase = "2026-11-28 02:10:01 settlement-service 出现 SLOW_SQL，耗时 11618ms"
    assert states_a_confirmed_fact(ci, paraphrase)
    assert not states_a_confirmed_fact(ci, "settlement-service 出现 SLOW_SQL")  # the question's terms only
    assert states_a_confirmed_fact(composer_input("indirect"), "无")  # nothing directly supported to state
