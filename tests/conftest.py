"""Shared fixtures: one demo world per test run (sessions isolate tests from each other)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def world_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file holding the full demo world; tests add their own sessions to it."""
    from evigate.datasets.world import ensure_world
    from evigate.store import AuditStore

    path = tmp_path_factory.mktemp("world") / "evigate.duckdb"
    store = AuditStore(path)
    ensure_world(store)
    return path
