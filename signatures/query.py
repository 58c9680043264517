"""The one limit on a question, shared by `evigate ask`, the Python API (``DiagnosisProgram``) and the HTTP API."""

from __future__ import annotations

import unicodedata

from evigate.errors import QueryError

MAX_QUERY_CHARS = 4000
"""Characters (not bytes, not escaped JSON) a question may have. A longer text is no incident question, and every
step of a round reads the question (its entities are looked up in every tool output)."""


def check_query(query: object) -> str:
    """``query`` when it is a non-empty text of at most ``MAX_QUERY_CHARS`` characters; else a ``QueryError``."""
    if not isinstance(query, str) or not has_visible_text(query):
        raise QueryError("query must be a non-empty string (not only blanks or invisible characters)")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the question is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are accepted")
    return query


# Code points that render as nothing though Unicode files them as letters or symbols (Default_Ignorable or blank
# by design): Hangul fillers, the Mongolian vowel separator, the braille blank.
_BLANK_LETTERS = frozenset("\u115f\u1160\u180e\u2800\u3164\uffa0")
# Categories of characters that show nothing on their own: separators (Z*), controls and format characters
# (zero-width space/joiners, BOM, bidi marks, soft hyphen: Cc, Cf), surrogates, private use, unassigned, and
# combining marks without a base (Mn, Me).
_INVISIBLE_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn", "Mn", "Me"})


def has_visible_text(text: str) -> bool:
    """Whether ``text`` has at least one character a reader can see (a blank or zero-width-only query has none)."""
    return any(
        char not in _BLANK_LETTERS and unicodedata.category(char) not in _INVISIBLE_CATEGORIES for char in text
    )
