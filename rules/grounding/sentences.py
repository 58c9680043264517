"""Split a free-text answer (Chinese, English or mixed) into sentences, keeping their character offsets.

Rules, in order: a line break ends a sentence; 。！？；!? end one; a period ends one when whitespace or a CJK
character follows, but not inside a number (5.3), after a known abbreviation (e.g., Dr., U.S.) or an initial — a
unit after a number is no abbreviation ("after 5300 ms." ends a sentence).
List markers and Markdown emphasis at the start of a line are not part of the sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evigate.rules.text.normalize import CJK_CHARS, INVISIBLE_CHARS

MAX_ANSWER_CHARS = 200_000
"""Text beyond this is not split: an answer that long is judged on its first part, and any visible text past the cap
counts against it (``rules.grounding.case`` reports it as one unsupported, unchecked part)."""
MAX_SENTENCE_CHARS = 2_000
"""A run without any sentence end is cut here, so one hostile line cannot become one enormous claim."""

ABBREVIATIONS = frozenset({
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "no", "fig", "approx", "inc",
    "ltd", "co", "corp", "dept", "est", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "u.s", "u.k", "u.n", "a.m", "p.m", "gen", "gov", "sen", "rep", "lt", "col", "mt",
})
_HARD_END = re.compile(r"[。！？；!?]+[”’\"')）」』]*|\n+")
_PERIOD = re.compile(rf"\.+[”’\"')）」』]*(?=[\s{INVISIBLE_CHARS}]|[{CJK_CHARS}]|$)")
_EDGES = re.compile(rf"^[\s{INVISIBLE_CHARS}*_`]+|[\s{INVISIBLE_CHARS}*_`]+$")
"""What a sentence does not start or end with: whitespace, characters that render as nothing, emphasis marks."""
_LEADING_MARKUP = re.compile(r"^(?:\s*(?:[-*•·+>#]+|\d{1,3}[.)、]|[（(]\d{1,3}[)）]|\*\*)\s*)+")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_NUMBER_BEFORE = re.compile(r"\d\s?$")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of an answer: its text (stripped of list markers) and where it sits in the answer."""

    index: int
    text: str
    start: int
    end: int


def _is_abbreviation(text: str, period_at: int) -> bool:
    word = _WORD_BEFORE.search(text, max(0, period_at - 12), period_at)
    if word is None:
        return False
    token = word.group(1).casefold()
    if "." not in token and _NUMBER_BEFORE.search(text, max(0, word.start() - 2), word.start()):
        return False  # "after 5300 ms." ends on a unit, not on "Ms." ("10 a.m." stays an abbreviation)
    return token in ABBREVIATIONS or (len(token) == 1 and token.isalpha())


def _boundaries(text: str) -> list[int]:
    ends = {match.end() for match in _HARD_END.finditer(text)}
    for match in _PERIOD.finditer(text):
        if not _is_abbreviation(text, match.start()):
            ends.add(match.end())
    ends.add(len(text))
    return sorted(ends)


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with offsets into it; empty pieces and bare markup are dropped."""
    text = (text or "")[:MAX_ANSWER_CHARS]
    sentences: list[Sentence] = []
    start = 0
    for end in _boundaries(text):
        for piece_start in range(start, end, MAX_SENTENCE_CHARS):
            piece_end = min(end, piece_start + MAX_SENTENCE_CHARS)
            _add(sentences, text, piece_start, piece_end)
        start = end
    return sentences


def _add(sentences: list[Sentence], text: str, start: int, end: int) -> None:
    raw = text[start:end]
    markup = _LEADING_MARKUP.match(raw)
    offset = markup.end() if markup else 0
    body = raw[offset:]
    stripped = _EDGES.sub("", body)
    if not any(char.isalnum() for char in stripped):
        return
    first = start + offset + body.find(stripped[0])
    sentences.append(Sentence(index=len(sentences), text=stripped, start=first, end=first + len(stripped)))
