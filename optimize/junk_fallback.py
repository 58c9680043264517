"""A minimal stand-in for the guard's junk checks (``evigate.rules.text.junk``, issue 18) on branches without them.

:mod:`evigate.optimize.question_metrics` imports the guard's module when it exists and this one otherwise, with
the same two functions; delete this file once the guard's module is everywhere. Deliberately small: a unit written
three times in a row or a phrase three times, the question restated, and a text none of whose entities or content
words the session holds.
"""

from __future__ import annotations

import re

from evigate.rules.text.entities import entity_occurs, extract_entities
from evigate.rules.text.normalize import compact, fold, restates

_TOKEN = re.compile(r"[a-z0-9]+(?:[._\-][a-z0-9]+)*|[\u3400-\u9fff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff]{2,}")
_WORD = re.compile(r"[a-z][a-z0-9_\-]{3,}")
_MIN_RUN = 3
_MAX_UNIT = 6


def _repeated_run(text: str) -> str | None:
    tokens = _TOKEN.findall(fold(text))
    for size in range(1, _MAX_UNIT + 1):
        for start in range(len(tokens) - size * _MIN_RUN + 1):
            unit = tokens[start:start + size]
            if all(tokens[start + k * size:start + (k + 1) * size] == unit for k in range(1, _MIN_RUN)):
                return " ".join(unit)
    return None


def _repeated_phrase(text: str) -> str | None:
    """A phrase of 4+ CJK characters or 2+ words written three times or more (filler that only says itself)."""
    tokens = _TOKEN.findall(fold(text))
    for size in range(_MAX_UNIT, 1, -1):
        seen: dict[tuple[str, ...], list[int]] = {}
        for start in range(len(tokens) - size + 1):
            unit = tuple(tokens[start:start + size])
            heavy = sum(2 if not token.isascii() else len(token) for token in unit) >= 8
            starts = seen.setdefault(unit, [])
            if heavy and (not starts or start >= starts[-1] + size):
                starts.append(start)
                if len(starts) >= _MIN_RUN:
                    return "".join(unit) if not unit[0].isascii() else " ".join(unit)
    return None


def _terms(text: str) -> set[str]:
    folded = fold(text)
    terms = {run[i:i + 2] for run in _CJK_RUN.findall(folded) for i in range(len(run) - 1)}
    return terms | set(_WORD.findall(folded))


def names_evidence(basis: str, returned_text: str, query: str = "") -> bool:
    """Whether ``basis`` names an entity a tool returned, or two content terms it returned the question lacks."""
    if any(e.is_key_value and entity_occurs(e, returned_text) for e in extract_entities(basis)):
        return True
    haystack = fold(returned_text)
    return len({term for term in _terms(basis) - _terms(query) if term in haystack}) >= 2


def junk_reason(text: str, query: str = "", session_text: str | None = None) -> str | None:
    """Why ``text`` is junk (repetition, echo, content-free), or None."""
    unit = _repeated_run(text)
    if unit is not None:
        return f"repeats “{unit[:40]}” {_MIN_RUN}+ times in a row"
    phrase = _repeated_phrase(text)
    if phrase is not None:
        return f"filler: “{phrase[:40]}” written over and over"
    core = compact(fold(text))
    if query and len(core) >= 6 and (core in compact(fold(query)) or restates(text, query)):
        return "restates the question"
    if session_text is not None and not names_evidence(text, session_text):
        return "content-free: names nothing this session's evidence or question holds"
    return None
