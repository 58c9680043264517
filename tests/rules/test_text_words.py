"""rules/text/words.py: the one way text is split into words (issue 21), by property and by the callers' cases."""

from __future__ import annotations

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.modules.planner import rank_skills
from evigate.rules.builtin.evidence_utilization import STOPWORDS as UTILIZATION_STOPWORDS
from evigate.rules.builtin.evidence_utilization import keywords
from evigate.rules.gate.evidence import distinctive_tokens
from evigate.rules.grounding.binding import content_tokens
from evigate.rules.grounding.sentences import split_sentences
from evigate.rules.text import words as w
from evigate.rules.text.junk import content_terms
from evigate.rules.text.normalize import CJK, CJK_CHARS
from evigate.rules.verdict import ceilings
from evigate.tools.retrieval import STOPWORDS as RETRIEVAL_STOPWORDS
from evigate.tools.retrieval import tokenize

# Mixed text: ASCII words and joiners, CJK (ideographs, kana, hangul), full-width forms, whitespace, anything.
_PIECES = st.sampled_from([
    "pay-gateway", "ERR_TIMEOUT", "5.3s", "92%", "/api/pay", "the", "The", "no", "it's", "---", "...", "支付网关超时",
    "是什么意思", "的", "ポッド", "한국어", "ＣＰＵ", "９２％", "\u3000", " ", "\n", "。", "Aberdeen's", "1,000.5",
])
TEXT = st.one_of(st.text(), st.lists(st.one_of(_PIECES, st.text(max_size=3)), max_size=12).map("".join))
JOINERS = st.sampled_from(["", "-", "-.", "./:-", "._%-", "._-", "'"])


@given(TEXT)
def test_normalisation_is_idempotent(text: str) -> None:
    once = w.normalize(text)
    assert w.normalize(once) == once


@given(TEXT, JOINERS, st.integers(min_value=1, max_value=4), st.booleans())
def test_words_are_substrings_of_the_text_with_word_edges(text: str, joiners: str, min_chars: int,
                                                          strip: bool) -> None:
    folded = w.normalize(text)
    for word in w.words(folded, joiners, min_chars, strip):
        assert word in folded
        assert word.isascii() and len(word) >= min_chars
        assert set(word) <= set(string.ascii_letters + string.digits + "_" + joiners)
        assert word.strip(joiners), "a run of joiners alone is no word"
        if strip and joiners:
            assert word[0] not in joiners and word[-1] not in joiners


@given(TEXT)
def test_cjk_runs_hold_only_cjk_and_every_cjk_character(text: str) -> None:
    for run in w.cjk_runs(text):
        assert run and all(w.is_cjk(char) for char in run)
        assert run in text
    assert "".join(w.cjk_runs(text)) == "".join(char for char in text if w.is_cjk(char))


@given(st.text(alphabet=st.characters(codec="utf-8")))
def test_one_cjk_range(text: str) -> None:
    for char in text:
        assert w.is_cjk(char) == (CJK.fullmatch(char) is not None) == (w.CJK_RUN.fullmatch(char) is not None)


@given(st.text(alphabet="支付网关超时ポッド한국어", max_size=20), st.integers(min_value=1, max_value=4))
def test_ngrams_of_a_run_of_n_characters(run: str, size: int) -> None:
    grams = w.ngrams(run, size)
    assert len(grams) == max(0, len(run) - size + 1)
    assert all(len(gram) == size and gram in run for gram in grams)
    assert len(w.cjk_bigrams(run)) == max(0, len(run) - 1)
    assert w.cjk_bigrams(run, lone=True) == ([run] if len(run) == 1 else w.ngrams(run))


@given(TEXT, JOINERS)
def test_terms_are_the_words_and_the_pairs_in_order(text: str, joiners: str) -> None:
    found = w.terms(text, joiners)
    assert [term for term in found if not w.is_cjk(term[0])] == w.words(text, joiners)
    assert [term for term in found if w.is_cjk(term[0])] == w.cjk_bigrams(text)


@given(TEXT)
def test_prose_terms_are_pieces_of_the_text(text: str) -> None:
    for term in w.prose_terms(text):
        assert term in text


@given(TEXT, TEXT)
def test_bigram_overlap_is_a_share(part: str, whole: str) -> None:
    share = w.bigram_overlap(part, whole)
    assert 0.0 <= share <= 1.0
    assert w.bigram_overlap(part, part) == (1.0 if w.char_bigrams(part) else 0.0)


@given(TEXT)
def test_no_caller_returns_a_stopword_and_none_raises(text: str) -> None:
    assert not set(tokenize(text)) & RETRIEVAL_STOPWORDS
    assert not keywords(text) & UTILIZATION_STOPWORDS
    assert not set(ceilings._units(w.normalize(text))) & w.stopwords("core", "function")
    distinctive_tokens(text)
    content_tokens(text)
    w.char_bigrams(text)


def test_stopwords_are_one_list_in_named_groups() -> None:
    every = w.stopwords()
    groups = ("core", "function", "quantity", "direction", "summary", "cjk_particles", "cjk_question", "cjk_filler")
    for group in groups:
        assert w.stopwords(group) and w.stopwords(group) <= every
        assert all(w.normalize(word) == word for word in w.stopwords(group))
    # YAML reads an unquoted no / on / off as a boolean; they must be the words themselves.
    assert {"no", "on", "off"} <= every and not {"false", "true"} & every
    assert w.stopwords(*groups) == every
    assert all(not w.stopwords(one) & w.stopwords(other) for one in groups for other in groups if one < other)
    with pytest.raises(KeyError):
        w.stopwords("no-such-group")


def test_the_callers_cases() -> None:
    assert tokenize("支付网关 pay-gateway ERR_TIMEOUT") == [
        "pay-gateway", "pay", "gateway", "err_timeout", "支付", "付网", "网关"]
    assert keywords("支付网关出现 5xx-errors 404 the") == {"支付", "付网", "网关", "关出", "5xx-errors"}
    assert content_tokens("The passage says Aberdeen's 1,000 three 的") == ["aberdeen", "1000", "3"]


def test_probe_tokens_skip_punctuation_runs_and_keep_the_written_order() -> None:
    """Before issue 21 a dash ruler (`---`) was a probe token, and equally long tokens came in a set's order, which
    changes with the process's hash seed."""
    assert distinctive_tokens("--- bbb aaa ccc --- 92%") == ["bbb", "aaa", "ccc", "92%"]


def test_kana_and_hangul_are_cjk_everywhere() -> None:
    """Before issue 21 binding and retrieval read only ideographs: Japanese kana and Korean hangul were no words."""
    assert content_tokens("ポッド") == ["ポッ", "ッド"]
    assert "한국" in tokenize("한국어")
    assert [sentence.text for sentence in split_sentences("Pod restarted.ポッドが再起動")] == [
        "Pod restarted.", "ポッドが再起動"]
    assert "\u3040" in CJK_CHARS


def test_a_stopword_with_trailing_punctuation_is_still_a_stopword() -> None:
    """Before issue 21 the cause check tested "the." against its stopwords before trimming the period."""
    assert ceilings._units("timeout the. pool") == ["timeout", "pool"]


def test_full_width_queries_match_skills_by_their_ascii_text() -> None:
    """Before issue 21 the planner lower-cased without NFKC: ｐａｙｍｅｎｔ did not match "payment"."""

    class Skill:
        def __init__(self, id: str, description: str) -> None:
            self.id, self.name, self.description, self.when_to_use = id, id, description, ""

    skills = [Skill("db", "database pool exhaustion"), Skill("pay", "payment gateway timeout")]
    assert rank_skills(skills, "ＰＡＹＭＥＮＴ ＴＩＭＥＯＵＴ")[0].id == "pay"


def test_a_compound_starting_with_a_digit_is_one_term() -> None:
    """Before issue 21 the key-term readers started a word at its first letter: 5xx-errors gave xx-errors, a
    timestamp 2025-06-20T10 gave t10 (a piece that matches unrelated text)."""
    assert content_terms("5xx-errors at 2025-06-20T10") == {"5xx-errors", "2025-06-20t10"}
    assert keywords("5xx-errors at 2025-06-20T10") == {"5xx-errors", "2025-06-20t10"}
