"""Issue 13.1: the demo world never drops or replaces a table evigate's own marker does not say evigate made."""

from __future__ import annotations

import duckdb
import pytest

from evigate.demo import GENERATOR_VERSION, build_world, ensure_world, world_info
from evigate.errors import StoreError
from evigate.store import AuditStore


def _user_table(cursor: duckdb.DuckDBPyConnection, name: str) -> None:
    cursor.execute(f"CREATE TABLE {name} (id INTEGER, note VARCHAR)")
    cursor.execute(f"INSERT INTO {name} VALUES (1, 'the user''s own row'), (2, 'another')")


@pytest.mark.parametrize("table", ["world_logs", "world_meta", "world_orders"])
def test_ensure_world_refuses_to_replace_a_table_it_did_not_make(tmp_path, table: str) -> None:
    with AuditStore(tmp_path / "mine.duckdb") as store:
        with store.cursor() as cursor:
            _user_table(cursor, table)
        with pytest.raises(StoreError, match=rf"{table}.*not made by evigate"):
            ensure_world(store, scale=0.05)
        with store.cursor() as cursor:
            assert cursor.execute(f"SELECT id, note FROM {table} ORDER BY id").fetchall() == [
                (1, "the user's own row"), (2, "another")]
            tables = {row[0] for row in cursor.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert "world_incidents" not in tables  # nothing half-built either


def test_build_world_refuses_too(tmp_path) -> None:
    cursor = duckdb.connect(str(tmp_path / "raw.duckdb")).cursor()
    _user_table(cursor, "world_logs")
    with pytest.raises(StoreError, match="world_logs"):
        build_world(cursor, scale=0.05)
    assert cursor.execute("SELECT count(*) FROM world_logs").fetchone()[0] == 2


def test_a_world_evigate_made_is_still_rebuilt(tmp_path) -> None:
    cursor = duckdb.connect(str(tmp_path / "ours.duckdb")).cursor()
    build_world(cursor, scale=0.05)
    cursor.execute("UPDATE world_meta SET value = 'ancient' WHERE key = 'generator_version'")
    build_world(cursor, scale=0.05)
    assert world_info(cursor)["generator_version"] == GENERATOR_VERSION
