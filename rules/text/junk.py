"""Junk checks: what a user reads (hypotheses, gaps, actions, the Composer's prose) must say something (issue 18).

One definition, used by the Gatekeeper rule ``action.junk_text``, by the Composer input builder, by the output guard
and by the benchmark's junk metric:

- a **repetition**: one unit (a word, a number, a CJK character, or a phrase of a few of them) written
  ``minRun`` times in a row ("订单 456 456 456 456"), or one phrase written over and over so that it is most of the
  text ("补足证据（补足证据是补足证据的必要步骤，需要补足证据缺口，）");
- an **echo**: the question restated, whole or a fragment of it ("库存服务报了什么错，");
- **content-free**: a text that names no entity and none of whose content terms occurs in the session
  ("立即联系客服", "contact support immediately"): advice that names nothing this diagnosis looked at;
- an **ungrounded guess**: a hypothesis whose basis names no entity a tool returned and fewer than ``minBasisTerms``
  terms a tool returned that the question does not already say.

Thresholds live in ``rules/thresholds.yaml`` (``junk``), the generic vocabulary in ``junk.yaml`` beside this module.
Pure code: texts in, reasons out.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from functools import lru_cache
from importlib import resources
from typing import Any

import yaml

from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import CJK_CHARS, compact, fold, weight
from evigate.rules.text.phrases import is_question
from evigate.rules.text.words import cjk_runs, ngrams, words
from evigate.rules.thresholds import THRESHOLDS, Junk

_TOKEN = re.compile(rf"[a-z0-9]+(?:[._\-][a-z0-9]+)*|[{CJK_CHARS}]")
"""Units of a repetition: a word or number, or one CJK character."""
_JOINERS = "_-."
_EDGES = " \t\r\n,，.。;；:：!！?？、()（）[]【】\"'“”‘’"


@dataclass(frozen=True)
class JunkSettings:
    """The junk checks' thresholds (``rules/thresholds.yaml`` ``junk``) and generic words (``junk.yaml``)."""

    min_run: int
    max_unit_tokens: int
    min_phrase_weight: int
    min_phrase_repeats: int
    min_repeated_share: float
    echo_share: float
    min_echo_weight: int
    min_premise_terms: int
    unnamed_premise_share: float
    min_basis_terms: int
    min_runbook_link_terms: int
    borrowed_share: float
    min_word_chars: int
    generic_words: frozenset[str]

    def entities_only(self) -> JunkSettings:
        """These settings with no number of terms enough to name evidence: only an entity does."""
        return replace(self, min_basis_terms=10**6)

    @classmethod
    def from_mapping(cls, data: dict[str, Any], thresholds: Junk = THRESHOLDS.junk) -> JunkSettings:
        """The vocabulary of ``data`` (``junk.yaml``) with ``thresholds`` (``rules/thresholds.yaml``)."""
        generic = data.get("genericWords") or {}
        words = frozenset(fold(str(word)) for group in generic.values() for word in group or ())
        return cls(**thresholds.model_dump(), generic_words=words)


@lru_cache(maxsize=1)
def junk_settings() -> JunkSettings:
    """The shipped thresholds (``rules/thresholds.yaml``) and vocabulary (``junk.yaml``), read once."""
    text = resources.files("evigate.rules.text").joinpath("junk.yaml").read_text("utf-8")
    return JunkSettings.from_mapping(yaml.safe_load(text))


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


def _token_weight(tokens: Iterable[str]) -> int:
    return weight("".join(tokens))


def repeated_run(text: str, settings: JunkSettings | None = None) -> str | None:
    """The unit written ``minRun`` or more times in a row, or None."""
    settings = settings or junk_settings()
    tokens = _tokens(text)
    for size in range(1, settings.max_unit_tokens + 1):
        for start in range(0, len(tokens) - size * settings.min_run + 1):
            unit = tokens[start:start + size]
            if all(tokens[start + k * size:start + (k + 1) * size] == unit for k in range(1, settings.min_run)):
                return " ".join(unit) if any(token.isascii() for token in unit) else "".join(unit)
    return None


def repeated_phrase(text: str, settings: JunkSettings | None = None) -> str | None:
    """A heavy phrase written ``minPhraseRepeats`` times that is ``minRepeatedShare`` of the text, or None."""
    settings = settings or junk_settings()
    tokens = _tokens(text)
    total = _token_weight(tokens)
    if not total:
        return None
    best: tuple[int, str] | None = None
    for size in range(2, settings.max_unit_tokens + 1):
        counts: dict[tuple[str, ...], list[int]] = {}
        for start in range(len(tokens) - size + 1):
            key = tuple(tokens[start:start + size])
            starts = counts.setdefault(key, [])
            if not starts or start >= starts[-1] + size:  # non-overlapping occurrences only
                starts.append(start)
        for key, starts in counts.items():
            unit_weight = _token_weight(key)
            if len(starts) < settings.min_phrase_repeats or unit_weight < settings.min_phrase_weight:
                continue
            covered = unit_weight * len(starts)
            if covered >= settings.min_repeated_share * total and (best is None or covered > best[0]):
                best = (covered, " ".join(key) if key[0].isascii() else "".join(key))
    return best[1] if best else None


def echoes(text: str, query: str, settings: JunkSettings | None = None) -> bool:
    """Whether ``text`` is the question restated: most of it made of pieces of the question (a whole echo, a
    fragment of it ending in "，", or the question with a word or two changed)."""
    settings = settings or junk_settings()
    core, asked = compact(fold(text.strip(_EDGES))), compact(fold(query))
    if not core or not asked or weight(core) < settings.min_echo_weight:
        return False
    if core in asked:
        return True
    blocks = SequenceMatcher(None, core, asked, autojunk=False).get_matching_blocks()
    shared = sum(weight(core[block.a:block.a + block.size]) for block in blocks if block.size >= 2)
    return shared >= settings.echo_share * weight(core)


def restates_question(sentence: str, query: str, settings: JunkSettings | None = None) -> bool:
    """Whether a sentence is the whole question again (each mostly made of the other), not a fragment of it that
    an answer may name as its subject ("关于订单 123 支付失败：…"); only when the user asked a question."""
    settings = settings or junk_settings()
    # A report ("订单 123 支付失败，错误码 ERR_TIMEOUT") restated is a confirmation of it, not its question.
    return is_question(query) and echoes(sentence, query, settings) and echoes(query, sentence, settings)


def echoes_question(sentence: str, query: str, settings: JunkSettings | None = None) -> bool:
    """Whether a sentence of an answer is made of the question's pieces (``echoes``, one way) when the user asked a
    question: "API gateway throttling orders after 4:30 pm is a" for "Why did the API gateway start throttling
    orders after 4:30 pm?". A sentence that names the question as its subject and says more is not ("订单 123 支付
    失败的原因：错误码 ERR_TIMEOUT 出现 67 次"): most of it is not the question's."""
    return is_question(query) and echoes(sentence, query, settings)


def repetition(text: str, settings: JunkSettings | None = None) -> str | None:
    """Why ``text`` is a degenerate repetition (a run, or one phrase over and over), or None."""
    settings = settings or junk_settings()
    unit = repeated_run(text, settings)
    if unit is not None:
        return f"repeats “{unit[:40]}” {settings.min_run}+ times in a row"
    phrase = repeated_phrase(text, settings)
    return f"filler: “{phrase[:40]}” written over and over" if phrase is not None else None


def content_terms(text: str, settings: JunkSettings | None = None) -> set[str]:
    """The text's content terms: CJK bigrams and ASCII words (``minWordChars``+), none of them generic."""
    settings = settings or junk_settings()
    folded = fold(text)
    generic = settings.generic_words
    terms: set[str] = set()
    for run in cjk_runs(folded, min_chars=2):
        # A bigram inside a generic word ("联系", "客服" in "联系客服") carries nothing; one across two words is noise
        # that evidence rarely holds.
        skip = {index for word in generic if not word.isascii() for index in _starts(run, word, len(word))}
        terms.update(pair for i, pair in enumerate(ngrams(run)) if i not in skip)
    for word in words(folded, _JOINERS, settings.min_word_chars):
        # A compound (payment-service, err_timeout, 5xx-errors) is one term: its parts ("err") would match unrelated
        # codes. A bare number is no term: it names nothing unless an entity (read apart) says what it counts.
        if word not in generic and any(char.isalpha() for char in word):
            terms.add(word)
    return terms


def _starts(run: str, word: str, size: int) -> set[int]:
    """Bigram start positions covered by ``word`` inside ``run``."""
    found: set[int] = set()
    at = run.find(word)
    while at >= 0:
        found.update(range(at, at + size - 1))
        at = run.find(word, at + 1)
    return found


def _grounded_count(terms: Iterable[str], haystack: str, enough: int) -> int:
    """How many of ``terms`` occur in ``haystack``, counted up to ``enough``: a term missing from a whole session
    costs a scan of all of it, so counting stops once the answer is known."""
    count = 0
    for term in sorted(terms):  # a fixed order: the same work, run after run
        if _occurs(term, haystack):
            count += 1
            if count >= enough:
                break
    return count


def terms_found(terms: Iterable[str], text: str) -> set[str]:
    """Those of ``terms`` (content terms) that occur in ``text``, looked up as everywhere here (folded; an ASCII
    term as a whole word)."""
    haystack = _folded(text)
    return {term for term in terms if _occurs(term, haystack)}


@lru_cache(maxsize=4096)
def _occurs(term: str, haystack: str) -> bool:
    """Whether a content term occurs in a session's folded text (kept: the next round asks the same)."""
    return term in haystack if not term.isascii() else _has_word(term, haystack)


@lru_cache(maxsize=4)
def _folded(haystack: str) -> str:
    """A session's text folded once: every hypothesis and gap of a round is checked against the same 100s of KB."""
    return fold(haystack)


_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_SCANNED_OCCURRENCES = 32
"""Occurrences inside longer words looked at one by one before the word-start index is built (a common fragment)."""


def _has_word(word: str, haystack: str) -> bool:
    """Whether ``word`` starts somewhere ``haystack`` has a word start (not inside a longer word).

    Most terms are found at their first occurrence, or not at all: a substring find answers those at C speed. The
    index of word starts (built once per haystack, costly on a whole session) only serves a fragment that occurs
    inside many longer words first."""
    at, seen = haystack.find(word), 0
    while at > 0 and haystack[at - 1] in _WORD_CHARS:
        seen += 1
        if seen > _SCANNED_OCCURRENCES:
            return _indexed_word(word, haystack)
        at = haystack.find(word, at + 1)
    return at != -1


def _indexed_word(word: str, haystack: str) -> bool:
    if len(word) > _PREFIX_CHARS or not _WORD_START.match(word):
        return re.search(rf"(?<![a-z0-9]){re.escape(word)}", haystack) is not None
    starts = _word_starts(haystack)
    at = bisect.bisect_left(starts, word)
    return at < len(starts) and starts[at].startswith(word)


_WORD_START = re.compile(r"(?<![a-z0-9])[a-z0-9]")
_PREFIX_CHARS = 64


@lru_cache(maxsize=16)
def _word_starts(haystack: str) -> list[str]:
    """The text from each word start on (its first 64 characters), sorted: a term is looked up by bisection instead
    of one scan of the whole session per term."""
    return sorted({haystack[match.start():match.start() + _PREFIX_CHARS] for match in _WORD_START.finditer(haystack)})


def _named_entities(text: str) -> list[Any]:
    return [entity for entity in extract_entities(text) if entity.is_key_value and not entity.approximate]


def content_free(text: str, session_text: str, settings: JunkSettings | None = None) -> bool:
    """Whether ``text`` names nothing: no entity, and no content term of it occurs in ``session_text`` (the
    session's evidence, inputs and question, joined)."""
    settings = settings or junk_settings()
    if _named_entities(text):
        # A service, code or id is a subject: whether the session holds it is action.entity_grounding's business
        # (a next step may name what was not looked at yet: "查询 redis-cluster 的 expired_keys 指标").
        return False
    return not _grounded_count(content_terms(text, settings), _folded(session_text), 1)


def names_evidence(basis: str, returned_text: str, query: str = "", settings: JunkSettings | None = None) -> bool:
    """Whether a hypothesis's ``basis`` names evidence of this session: an entity a tool returned, or
    ``minBasisTerms`` content terms a tool returned that the question does not already say."""
    settings = settings or junk_settings()
    if any(entity_occurs(entity, returned_text) for entity in _named_entities(basis)):
        return True
    terms = content_terms(basis, settings) - content_terms(query, settings)
    enough = settings.min_basis_terms
    return len(terms) >= enough and _grounded_count(terms, _folded(returned_text), enough) >= enough


def junk_reason(text: str, query: str = "", session_text: str | None = None,
                settings: JunkSettings | None = None) -> str | None:
    """Why ``text`` is no fit thing to show a user, or None. ``session_text`` (when given) enables the
    content-free check; without it only repetition and echo are judged."""
    settings = settings or junk_settings()
    if not text.strip():
        return None
    why = repetition(text, settings)
    if why is not None:
        return why
    if query and echoes(text, query, settings):
        return "restates the question"
    if session_text is not None and content_free(text, session_text, settings):
        return "content-free: names nothing this session's evidence or question holds"
    return None
