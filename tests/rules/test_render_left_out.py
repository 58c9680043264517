"""The Composer's accepted text, then the confirmed facts it left out, listed by code (issue 18).

Measured on train (0.5B default, metric-en-06 and tally-zh-06): the Composer's prose stated the log line and left out
the api-gateway breach query_metrics had shown; the answer users saw had lost a confirmed fact.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules.answer.catalogue import CATALOGUE
from evigate.rules.answer.composer_guard import check_composer_output
from evigate.rules.answer.render import facts_left_out, render_answer
from evigate.rules.answer.stated import states_claim
from evigate.signatures import AllowedClaim, ComposerInput, ComposerOutput

LOG = ("query_logs 返回：2026-11-28 16:30:00 WARN api-gateway ERR_RATE_LIMITED HTTP 429 Too Many Requests: rate limit "
       "2000 req/s exceeded")
METRIC = "query_metrics（api-gateway）返回：threshold > 100: first breach 2026-11-28 16:30 (http_429_count=794)"
QUERY = "傍晚 api-gateway 一共返回了多少次 429？"


def composer_input(verdict: str = "PASS", *texts: str) -> ComposerInput:
    return ComposerInput(original_query=QUERY, verdict=verdict, locale="zh", missing_info=["缺少限流配置"],
                         allowed_claims=[AllowedClaim(claim_id=f"c{i}", claim_type="symptom", claim_text=text,
                                                      support_level="direct")
                                         for i, text in enumerate(texts or (LOG, METRIC))])


PROSE = "2026-11-28 16:30:00 起 api-gateway 出现 ERR_RATE_LIMITED，返回 HTTP 429，限流阈值 2000 req/s。"


def test_the_fact_the_prose_left_out_is_listed_after_it() -> None:
    ci = composer_input()
    output = ComposerOutput(answer_summary="api-gateway 限流", user_facing_answer=PROSE)
    assert check_composer_output(ci, output) == []
    assert facts_left_out(ci, PROSE) == [METRIC]
    answer = render_answer(ci, output)
    assert answer.startswith(PROSE) and CATALOGUE["zh"]["based_on"] in answer and "http_429_count=794" in answer


def test_under_low_confid_they_come_before_the_gaps_and_nothing_is_added_when_all_are_stated() -> None:
    ci = composer_input("LOW_CONFID")
    answer = render_answer(ci, ComposerOutput(answer_summary="x", user_facing_answer=PROSE))
    words = CATALOGUE["zh"]
    assert answer.index(words["confirmed"]) < answer.index("794") < answer.index(words["current_gaps"])
    both = f"{PROSE} 指标显示 2026-11-28 16:30 首次超过阈值 100，http_429_count=794。"
    assert facts_left_out(composer_input(), both) == []
    assert render_answer(composer_input(), ComposerOutput(answer_summary="x", user_facing_answer=both)) == both


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([LOG, METRIC, "query_order 返回：order 456: status=FAILED error_code=ERR_DB_POOL"]),
                min_size=1, max_size=3, unique=True))
def test_every_confirmed_fact_reaches_the_reader(texts: list[str]) -> None:
    ci = composer_input("PASS", *texts)
    answer = render_answer(ci, ComposerOutput(answer_summary="x", user_facing_answer=PROSE))
    assert all(states_claim(text, answer) for text in texts)
