"""Fixtures of the audit-store tests: a fresh file-backed store per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from evigate.store import AuditStore


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "audit.duckdb"


@pytest.fixture
def store(db_path: Path) -> Iterator[AuditStore]:
    with AuditStore(db_path) as opened:
        yield opened
