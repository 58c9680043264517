"""The one limit on a question, shared by `evigate ask`, the Python API (``DiagnosisProgram``) and the HTTP API."""

from __future__ import annotations

from evigate.errors import QueryError

MAX_QUERY_CHARS = 4000
"""Characters (not bytes, not escaped JSON) a question may have. A longer text is no incident question, and every
step of a round reads the question (its entities are looked up in every tool output)."""


def check_query(query: object) -> str:
    """``query`` when it is a non-empty text of at most ``MAX_QUERY_CHARS`` characters; else a ``QueryError``."""
    if not isinstance(query, str) or not query.strip():
        raise QueryError("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the question is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,} are accepted")
    return query
