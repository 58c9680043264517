"""Misspelt names read as the domain's (issue 18: questions as operators type them in a hurry)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.demo.domain import demo_domain
from evigate.rules.text.spelling import read_names
from evigate.rules.text.vocabulary import EntityVocabulary

VOCABULARY = demo_domain().entity_vocabulary()


@pytest.mark.parametrize(
    ("query", "read_as"),
    [
        # measured on train (typo-mixed, code alone): 6 of 7 such questions confirmed nothing before
        ("settlment-service 凌晨对账为什么这么慢？", "settlement-service 凌晨对账为什么这么慢？"),
        ("paymnet-service九点半大量失败", "payment-service九点半大量失败"),
        ("inventroy-service 11 点秒杀报ERR_DEADLOK", "inventory-service 11 点秒杀报ERR_DEADLOCK"),
        ("pay-gatway 下午两点 ERR_TIMOUT 很多", "pay-gateway 下午两点 ERR_TIMEOUT 很多"),
        ("api-gatway 429 spike at 4:30 pm", "api-gateway 429 spike at 4:30 pm"),
        ("Why did Prodcut-Service slow down?", "Why did product-service slow down?"),
    ],
)
def test_a_name_a_few_edits_from_one_known_name_is_read_as_it(query: str, read_as: str) -> None:
    reading = read_names(query, VOCABULARY)
    assert reading.read_as == read_as
    assert reading.original == query and reading.corrections


@pytest.mark.parametrize("query", [
    "search-service 为什么挂了？", "What caused the ERR_KAFKA_LAG alerts on order-service?",
    "logistics-service 同步失败", "cache-miss storm on product-service", "read-timeout after 3000ms",
    "user-service and risk-service",
])
def test_unknown_and_known_names_stay_as_written(query: str) -> None:
    reading = read_names(query, VOCABULARY)
    assert reading.read_as == query and reading.corrections == []


def test_a_word_as_near_to_two_names_is_left_as_written() -> None:
    vocabulary = EntityVocabulary(services=frozenset({"ledger-api", "ledger-app"}))
    assert read_names("ledger-apq is down", vocabulary).read_as == "ledger-apq is down"
    assert read_names("ledger-apq is down", None).corrections == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(sorted(VOCABULARY.names)), min_size=1, max_size=4),
       st.text(alphabet=" 的了吗？,.", max_size=6))
def test_a_question_of_known_names_is_never_changed(names: list[str], glue: str) -> None:
    query = glue.join(names) if glue.strip() else " ".join(names)
    assert read_names(query, VOCABULARY).read_as == query


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(name for name in VOCABULARY.names if "-" in name or "_" in name)),
       st.integers(min_value=1, max_value=30))
def test_one_transposition_reads_back_as_the_name_or_stays(name: str, at: int) -> None:
    """A transposition (one edit) either reads back as the name or, where another name is as near, stays."""
    index = at % (len(name) - 1)
    typo = name[:index] + name[index + 1] + name[index] + name[index + 2:]
    read = read_names(f"{typo} 报错了", VOCABULARY).read_as
    assert read in (f"{name} 报错了", f"{typo} 报错了")  # never another name
