"""One full-size demo world per test session, in its own DuckDB file (built in about a second)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from evigate.demo import build_world


@pytest.fixture(scope="session")
def world_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], float]:
    """(database path, row counts, build seconds) of the default world."""
    path = tmp_path_factory.mktemp("world") / "world.duckdb"
    with duckdb.connect(str(path)) as connection, connection.cursor() as cursor:
        started = time.perf_counter()
        counts = build_world(cursor)
        elapsed = time.perf_counter() - started
    return path, counts, elapsed


@pytest.fixture()
def world(world_build: tuple[Path, dict[str, int], float]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only cursor on the default world."""
    with duckdb.connect(str(world_build[0]), read_only=True) as connection, connection.cursor() as cursor:
        yield cursor
