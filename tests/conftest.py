"""Shared fixtures: one demo world per test run (sessions isolate tests from each other)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def world_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed, checkpointed DuckDB file holding the full demo world: copy it, never open it."""
    from evigate.demo import ensure_world
    from evigate.store import AuditStore

    path = tmp_path_factory.mktemp("world-template") / "evigate.duckdb"
    with AuditStore(path) as store:
        ensure_world(store)
        with store.cursor() as cursor:
            cursor.execute("CHECKPOINT")
    return path


@pytest.fixture(scope="session")
def world_db(world_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo world shared by in-process tests; each test works in sessions of its own."""
    path = tmp_path_factory.mktemp("world") / "evigate.duckdb"
    shutil.copy(world_template, path)
    return path


@pytest.fixture()
def private_world(world_template: Path, tmp_path: Path) -> Path:
    """A world of this test's own, e.g. for a subprocess (DuckDB lets one process at a time open a file)."""
    path = tmp_path / "evigate.duckdb"
    shutil.copy(world_template, path)
    return path
