"""The workbench's view of a session (evigate/serve/workbench.py): offsets for the browser, sentence-claim links."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evigate.rules.text.normalize import compact, fold
from evigate.serve.workbench import answer_parts, linked_claims


def _claims(*texts: str) -> list[dict[str, str]]:
    return [{"id": f"c{i}", "text": t, "core": compact(fold(t))} for i, t in enumerate(texts, start=1)]


@given(st.text(max_size=200))
def test_answer_parts_keep_every_character_of_the_answer_in_order(answer: str) -> None:
    parts = answer_parts(answer, _claims("订单 123 支付失败"))
    assert "".join(part["text"] for part in parts) == answer


def test_a_sentence_links_to_the_claims_it_states_and_to_none_it_only_shares_a_quote_with() -> None:
    claims = _claims("订单 123 支付失败，错误码 ERR_TIMEOUT", "pay-gateway 调用 unionpay 超时 5300ms",
                     "order-db load is high: see the dashboard")
    assert linked_claims("已确认：订单 123 支付失败，错误码 ERR_TIMEOUT；", claims) == ["c1"]
    assert linked_claims("Pay-Gateway 调用 UnionPay 超时 5300ms。", claims) == ["c2"]  # case and spaces aside
    both = "订单 123 支付失败，错误码 ERR_TIMEOUT，pay-gateway 调用 unionpay 超时 5300ms。"
    assert linked_claims(both, claims) == ["c1", "c2"]
    assert linked_claims("see the dashboard.", claims) == []  # a shared fragment is no statement of the claim
    assert linked_claims("……", claims) == []


def test_the_session_page_shows_how_a_misspelt_question_was_read_as_escaped_text() -> None:
    """A misspelt name is read as the domain's for the whole session (rules/text/spelling.py); the page says so, and
    what the user typed stays text."""
    from evigate.serve.pages import _ENV
    from evigate.serve.workbench import session_view

    reading = {"original": "paymnet-service <b>九点半</b>", "read_as": "payment-service <b>九点半</b>",
               "corrections": [{"written": "paymnet-service", "read_as": "payment-service"}]}
    session = {"session_id": "s1", "query": reading["original"], "status": "finished", "answer": "",
               "self_evaluation": {"query_reading": reading}}
    view = session_view(session, [], [])
    html = _ENV.get_template("_session.html").render(**view)
    assert "read as: payment-service &lt;b&gt;九点半&lt;/b&gt; (paymnet-service → payment-service)" in html
    plain = {**session, "self_evaluation": {"query_reading": {**reading, "corrections": []}}}
    assert "read as:" not in _ENV.get_template("_session.html").render(**session_view(plain, [], []))
