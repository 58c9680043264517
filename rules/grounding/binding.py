"""Bind a claim to context passages by code: which passage, which span of it, and how much of the claim it covers.

Words are compared, not meanings: Latin words case-folded with a light suffix strip (reports/reported/reporting
→ report, Aberdeen's → aberdeen), CJK text as character pairs, numbers as written or spelt out (three = 3). Function
words carry no content and are left out.
Every passage is indexed once (token → the passage sentences holding it), so binding an answer of n sentences
to passages of m sentences costs about the size of both, not n × m.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from evigate.rules.grounding.sentences import Sentence, split_sentences
from evigate.rules.text.normalize import fold
from evigate.rules.text.numbers import NUMBER_WORDS
from evigate.rules.text.words import is_cjk, prose_terms, stopwords

STOPWORDS = stopwords("core", "function", "quantity", "direction", "summary", "cjk_particles")
"""Function words (and summary boilerplate such as "the passage states") that carry no checkable content."""
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ied", "ies", "ed", "es", "s", "ly")
MAX_TOKENS_PER_SENTENCE = 80
MAX_POSTINGS = 400
"""A token held by more passage sentences than this says nothing about which one a claim restates."""


def stem(word: str) -> str:
    """A crude English stem: enough for "reported" to find "reports"; CJK and numbers are kept as they are."""
    if not word.isascii() or not word.isalpha() or len(word) <= 4:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 4 else word


def content_tokens(text: str) -> list[str]:
    """The content-bearing tokens of a text, in order (duplicates kept)."""
    tokens: list[str] = []
    for token in prose_terms(fold(text)):
        if not token.isascii() and is_cjk(token[0]):
            if token not in STOPWORDS:
                tokens.append(token)
        else:
            token = token.removesuffix("'s")  # Aberdeen's is about Aberdeen
            if token in NUMBER_WORDS:
                tokens.append(str(NUMBER_WORDS[token]))  # "three tries" and "3 tries" say the same
            elif token not in STOPWORDS and (len(token) > 1 or token.isdigit()):
                tokens.append(stem(token.replace(",", "")))
    return tokens


class Passage:
    """One context passage, with its sentences' offsets and token index (built lazily, once)."""

    def __init__(self, index: int, name: str, text: str) -> None:
        self.index = index
        self.name = name
        self.text = text

    @cached_property
    def sentences(self) -> list[Sentence]:
        return split_sentences(self.text)

    @cached_property
    def squashed(self) -> str:
        """The text with every whitespace run made one space (answers rarely keep a passage's line breaks)."""
        return " ".join(self.text.split())

    @cached_property
    def tokens(self) -> frozenset[str]:
        return frozenset(content_tokens(self.text))

    @cached_property
    def postings(self) -> dict[str, list[int]]:
        index: dict[str, list[int]] = {}
        for sentence in self.sentences:
            for token in set(content_tokens(sentence.text)):
                index.setdefault(token, []).append(sentence.index)
        return index


@dataclass(frozen=True, slots=True)
class Binding:
    """Where a claim is best supported: a passage, the span (character offsets) there, and the coverage figures.

    ``coverage`` is the share of the claim's content tokens found anywhere in the passage; ``span_coverage`` the
    share found in the span alone; ``missing`` the claim's tokens the passage lacks.
    """

    passage: int
    start: int
    end: int
    coverage: float
    span_coverage: float
    missing: tuple[str, ...] = ()

    def span_text(self, passages: Sequence[Passage]) -> str:
        return passages[self.passage].text[self.start:self.end]


def _best_window(passage: Passage, claim_tokens: set[str]) -> tuple[int, int, float]:
    """The run of at most three consecutive passage sentences that covers most of the claim's tokens."""
    hits: Counter[int] = Counter()
    for token in claim_tokens:
        postings = passage.postings.get(token, ())
        if len(postings) <= MAX_POSTINGS:
            hits.update(postings)
    sentences = passage.sentences
    if not hits or not sentences:
        return 0, min(len(passage.text), 400), 0.0
    best = (0.0, 0, 0)
    for anchor, _ in hits.most_common(5):
        for first in range(max(0, anchor - 2), anchor + 1):
            for last in range(anchor, min(len(sentences), first + 3)):
                window: set[str] = set()
                for sentence in sentences[first:last + 1]:
                    window.update(content_tokens(sentence.text))
                score = len(claim_tokens & window) / len(claim_tokens) - 0.01 * (last - first)
                if score > best[0]:
                    best = (score, first, last)
    score, first, last = best
    return sentences[first].start, sentences[last].end, max(0.0, score + 0.01 * (last - first))


def find_verbatim(claim: str, passages: Sequence[Passage]) -> Binding | None:
    """The first passage that holds the claim word for word (whitespace runs aside), as a full-coverage binding."""
    needle = " ".join(claim.split())
    if not needle:
        return None
    for passage in passages:
        start = passage.text.find(needle)
        if start == -1 and needle != claim:
            start = passage.squashed.find(needle)
            if start != -1:  # found only once whitespace is squashed: point at the sentence holding it
                return _whole_window(passage, needle)
        if start != -1:
            return Binding(passage.index, start, start + len(needle), 1.0, 1.0)
    return None


def _whole_window(passage: Passage, needle: str) -> Binding:
    start, end, _ = _best_window(passage, set(content_tokens(needle)) or {needle})
    return Binding(passage.index, start, end, 1.0, 1.0)


def bind(claim: str, passages: Sequence[Passage]) -> Binding | None:
    """The passage and span that best support ``claim``; None when no passage shares a content token with it.

    A claim found word for word in a passage is bound to that very span.
    """
    verbatim = find_verbatim(claim, passages)
    if verbatim is not None:
        return verbatim
    tokens = content_tokens(claim)[:MAX_TOKENS_PER_SENTENCE]
    if not tokens or not passages:
        return None
    unique = set(tokens)
    ranked = sorted(passages, key=lambda p: (-len(unique & p.tokens), p.index))
    passage = ranked[0]
    found = unique & passage.tokens
    if not found:
        return None
    start, end, span_coverage = _best_window(passage, unique)
    missing = tuple(token for token in dict.fromkeys(tokens) if token not in passage.tokens)
    return Binding(passage.index, start, end, len(found) / len(unique), span_coverage, missing)


def make_passages(context: Sequence[str] | dict[str, str] | str) -> list[Passage]:
    """Passages from a list of texts, a mapping name → text, or one text; non-text items become empty passages."""
    if isinstance(context, str):
        items: list[tuple[str, object]] = [("passage-1", context)]
    elif isinstance(context, dict):
        items = [(str(name), text) for name, text in context.items()]
    else:
        items = [(f"passage-{number}", text) for number, text in enumerate(context, start=1)]
    return [Passage(index, name, text if isinstance(text, str) else "") for index, (name, text) in enumerate(items)]
