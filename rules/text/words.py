"""Words of Chinese, English and mixed text: the one way rules, modules and tools split text (issue 21).

No word segmenter. A Latin word is a run of ASCII letters, digits and ``_``, possibly held together by the joiner
characters a caller names (``pay-gateway`` with ``-``, ``5.3s`` with ``.``, ``/api/pay`` with ``/``); prose is read
with letters and numbers apart (``Aberdeen's``, ``1,000``). A CJK run (the one range :data:`normalize.CJK_CHARS`) is
read as its character pairs, because a pair stands in for a Chinese word. Function words that carry no content are
one list, ``stopwords.yaml`` beside this module, in named groups a caller picks from.

Nothing here normalises on its own: a caller that compares case-insensitively reads :func:`normalize` (case-folded,
full-width made ASCII) text, and a caller that looks tokens up in a raw tool output reads the text as written.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import yaml

from evigate.rules.text.normalize import CJK_CHARS, fold, is_cjk

__all__ = [
    "CJK_RUN", "bigram_overlap", "char_bigrams", "cjk_bigrams", "cjk_runs", "is_cjk", "ngrams", "normalize", "parts",
    "prose_terms", "stopwords", "terms", "words",
]

normalize = fold
"""Case-folded text with full-width letters and digits made ASCII (``normalize.fold``): what readers compare."""

CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD_CHARS = "A-Za-z0-9_"
_PROSE = re.compile(rf"[{CJK_CHARS}]+|[A-Za-z]+(?:'[A-Za-z]+)?|\d+(?:[.,]\d+)*")


@lru_cache(maxsize=32)
def _pattern(joiners: str) -> re.Pattern[str]:
    """A CJK run, or a run of word characters and ``joiners``."""
    return re.compile(f"[{CJK_CHARS}]+|[{_WORD_CHARS}{re.escape(joiners)}]+")


def _scan(text: str, joiners: str, min_chars: int, strip: bool, cjk: bool, lone: bool) -> list[str]:
    """Words and (when ``cjk``) CJK character pairs in order: the one loop behind :func:`words` and :func:`terms`.

    A run of word characters and joiners is a word once joiners are trimmed from its edges (kept as written
    without ``strip``) if it is ``min_chars`` long and holds a letter, digit or ``_``: ``---`` alone is no word.
    """
    found: list[str] = []
    for run in _pattern(joiners).findall(text):
        if not run.isascii() and is_cjk(run[0]):  # isascii first: it is cheap, and true for every word
            if cjk:
                found.extend(_pairs(run, lone))
            continue
        word = run.strip(joiners) if joiners else run
        if word and len(word if strip else run) >= min_chars:
            found.append(word if strip else run)
    return found


def words(text: str, joiners: str = "", min_chars: int = 1, strip: bool = True) -> list[str]:
    """The Latin words of ``text`` in order: ``min_chars``+ runs of ASCII letters, digits, ``_`` and ``joiners``.

    With ``strip`` a word's edges are word characters (``"5.3s."`` → ``5.3s``); without, joiners at its edges are
    kept as written (``92%`` with ``%``), which is what a substring probe of a raw output wants.
    """
    return _scan(text, joiners, min_chars, strip, cjk=False, lone=False)


def parts(word: str, joiners: str) -> list[str]:
    """The non-empty pieces of a word between its joiners (``pay-gateway`` → ``pay``, ``gateway``)."""
    if not any(joiner in word for joiner in joiners):
        return [word] if word else []
    return [piece for piece in _splitter(joiners).split(word) if piece]


@lru_cache(maxsize=32)
def _splitter(joiners: str) -> re.Pattern[str]:
    return re.compile(f"[{re.escape(joiners)}]")


def cjk_runs(text: str, min_chars: int = 1) -> list[str]:
    """The maximal runs of CJK characters of ``text``, in order, of at least ``min_chars`` characters."""
    return [run for run in CJK_RUN.findall(text) if len(run) >= min_chars]


def ngrams(run: str, size: int = 2) -> list[str]:
    """The overlapping ``size``-character pieces of a run: n - size + 1 of them for n characters (none if fewer)."""
    return [run[i:i + size] for i in range(len(run) - size + 1)]


def _pairs(run: str, lone: bool) -> list[str]:
    """A CJK run's character pairs; a run of one character is itself when ``lone``, else nothing."""
    return [run] if lone and len(run) == 1 else ngrams(run)


def cjk_bigrams(text: str, lone: bool = False) -> list[str]:
    """The character pairs of every CJK run of ``text``, in order (a one-character run as itself when ``lone``)."""
    return [pair for run in CJK_RUN.findall(text) for pair in _pairs(run, lone)]


def terms(text: str, joiners: str = "", min_chars: int = 1, strip: bool = True, lone: bool = False) -> list[str]:
    """Latin words (as :func:`words`) and CJK character pairs (as :func:`cjk_bigrams`) in order of appearance."""
    return _scan(text, joiners, min_chars, strip, cjk=True, lone=lone)


def prose_terms(text: str) -> list[str]:
    """Words of prose in order: letters (with one inner apostrophe, ``aberdeen's``), numbers with their ``.`` and
    ``,`` separators (``1,000.5``), and CJK character pairs (a one-character run as itself)."""
    found: list[str] = []
    for token in _PROSE.findall(text):
        if token.isascii() or not is_cjk(token[0]):  # a number may be written in non-ASCII digits
            found.append(token)
        else:
            found.extend(_pairs(token, lone=True))
    return found


def char_bigrams(text: str) -> set[str]:
    """Every pair of adjacent characters of ``text`` that is not all whitespace: a script-neutral fingerprint."""
    return {text[i:i + 2] for i in range(len(text) - 1) if not text[i:i + 2].isspace()}


def bigram_overlap(part: str, whole: str) -> float:
    """Share of ``part``'s character bigrams (:func:`char_bigrams`) that ``whole`` also holds; 0 when it has none."""
    grams = char_bigrams(part)
    return len(grams & char_bigrams(whole)) / len(grams) if grams else 0.0


@lru_cache(maxsize=1)
def _groups() -> dict[str, frozenset[str]]:
    text = resources.files("evigate.rules.text").joinpath("stopwords.yaml").read_text("utf-8")
    groups: dict[str, frozenset[str]] = {}
    for name, group in yaml.safe_load(text).items():
        if not isinstance(group, list) or not all(isinstance(word, str) for word in group):
            # YAML reads an unquoted no / on / off as a boolean: "False" must never become a stopword.
            raise ValueError(f"stopwords.yaml: group {name!r} must be a list of quoted words")
        groups[name] = frozenset(fold(word) for word in group)
    return groups


@lru_cache(maxsize=32)
def stopwords(*groups: str) -> frozenset[str]:
    """The stopwords of the named groups of ``stopwords.yaml`` (all of them when none is named).

    Raises KeyError for a group the file does not have: a misspelt group must not silently stop nothing.
    """
    known = _groups()
    return frozenset().union(*(known[name] for name in (groups or tuple(known))))
