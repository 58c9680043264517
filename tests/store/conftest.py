"""Fixtures of the audit-store tests: a fresh store per test, on each backend.

``store`` runs every test that takes it twice: on a DuckDB file, and on a private schema of a real PostgreSQL 15
(marker ``servers``: scripts/test.sh runs those in its slow stage). Tests of file behaviour take ``db_path``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from evigate.store import AuditStore
from tests.servers import pg_server  # noqa: F401  (the session's PostgreSQL, for the "postgresql" backend)

BACKENDS = ["duckdb", pytest.param("postgresql", marks=pytest.mark.servers)]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.duckdb"


@pytest.fixture(params=BACKENDS)
def store_location(request: pytest.FixtureRequest, db_path: Path) -> str:
    """Where a fresh, empty audit store lives: a DuckDB file, or a PostgreSQL URL (password in it)."""
    if request.param == "duckdb":
        return str(db_path)
    return request.getfixturevalue("pg_server").fresh_schema_url()


@pytest.fixture
def store(store_location: str) -> Iterator[AuditStore]:
    with AuditStore(store_location) as opened:
        yield opened


def query_audit(store: AuditStore, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run ``statement`` (``?`` placeholders) on the store's own audit tables, whichever backend holds them.

    For checks of columns the API does not return; ``store.cursor()`` reaches the demo world's tables instead.
    """
    if store.backend == "duckdb":
        with store.cursor() as cursor:
            return cursor.execute(statement, list(params)).fetchall()
    with store._backend._connection() as connection:
        return connection.execute(statement.replace("?", "%s"), list(params)).fetchall()
