"""Invariants of evigate.verify without a model (hypothesis): verbatim is supported, a changed value is not, and no
input — lone surrogates, markup, control characters, huge texts — makes it crash."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate import verify
from evigate.verification import NOT_SUPPORTED

WORDS = st.sampled_from([
    "gateway", "timeout", "orders", "failed", "pool", "exhausted", "latency", "rose", "upstream", "replica",
    "支付", "网关", "超时", "订单", "连接池", "耗尽", "告警", "恢复", "pay-gateway", "unionpay", "ERR_TIMEOUT",
])
NUMBER = st.integers(min_value=10, max_value=99_999)


@st.composite
def sentence(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, min_size=2, max_size=8))
    position = draw(st.integers(min_value=0, max_value=len(words)))
    words.insert(position, f"{draw(NUMBER)} ms")
    return " ".join(words) + draw(st.sampled_from([". ", "。"]))


passages = st.lists(st.lists(sentence(), min_size=1, max_size=6).map("".join), min_size=1, max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(passages, st.data())
def test_an_answer_of_verbatim_passage_sentences_is_supported(context: list[str], data: st.DataObject) -> None:
    from evigate.rules.grounding import split_sentences

    pool = [s.text for passage in context for s in split_sentences(passage)]
    chosen = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=5))
    result = verify("\n".join(chosen), context)
    assert result.supported, [(s.text, s.label, s.reason) for s in result.sentences]
    assert result.verdict == "PASS"
    assert all(s.label == "direct_observation" for s in result.sentences)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(passages, st.data())
def test_a_sentence_with_a_changed_number_is_not_supported(context: list[str], data: st.DataObject) -> None:
    import re

    from evigate.rules.grounding import split_sentences

    pool = [s.text for passage in context for s in split_sentences(passage)]
    original = data.draw(st.sampled_from(pool))
    value = int(re.search(r"(\d+) ms", original).group(1))  # type: ignore[union-attr]
    everything = " ".join(context)
    changed = next(v for v in range(value + 1, value + 10_000) if f"{v}" not in everything)
    answer = re.sub(r"\d+ ms", f"{changed} ms", original, count=1)
    result = verify(answer, context)
    assert not result.supported
    assert result.sentences[0].label in NOT_SUPPORTED


HOSTILE = st.text(
    alphabet=st.characters(codec=None, categories=None, blacklist_categories=()), max_size=300
) | st.sampled_from(["[bold]x[/bold]", "\x1b[31mred\x1b[0m", "\ud800 lone \udfff", "{\"claims\": []}", "'; DROP--"])


@settings(max_examples=150, deadline=None)
@given(HOSTILE, st.lists(HOSTILE, max_size=3) | st.dictionaries(st.text(max_size=5), HOSTILE, max_size=3))
def test_any_text_gets_a_result_never_an_exception(answer: str, context: list[str] | dict[str, str]) -> None:
    result = verify(answer, context)
    assert result.verdict in ("PASS", "LOW_CONFID", "REJECT")
    assert result.supported == all(s.label not in NOT_SUPPORTED for s in result.sentences)


def test_huge_inputs_are_judged() -> None:
    passage = "".join(f"request {n} to pay-gateway took {n % 900 + 100} ms at 10:{n % 60:02d}. " for n in range(20_000))
    answer = "".join(f"Request {n} to pay-gateway took {n % 900 + 100} ms. " for n in range(0, 2_000, 7))
    result = verify(answer + "x" * 500_000, [passage, passage[:1000]])
    assert result.sentences and result.verdict in ("PASS", "LOW_CONFID", "REJECT")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(passages, st.data(), st.sampled_from(["ERR_CHANNEL_CLOSED", "risk-engine", "ORD-99017"]))
def test_a_sentence_with_a_changed_entity_is_not_supported(
    context: list[str], data: st.DataObject, replacement: str
) -> None:
    from hypothesis import assume

    from evigate.rules.grounding import split_sentences

    pool = [s.text for passage in context for s in split_sentences(passage)
            if "pay-gateway" in s.text or "ERR_TIMEOUT" in s.text]
    assume(pool)
    original = data.draw(st.sampled_from(pool))
    name = "pay-gateway" if "pay-gateway" in original else "ERR_TIMEOUT"
    result = verify(original.replace(name, replacement), context)
    assert not result.supported and result.sentences[0].label in NOT_SUPPORTED
