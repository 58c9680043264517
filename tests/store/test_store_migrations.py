"""Versioned migrations: applied in order once, idempotent on re-open, refused when the file is newer."""

from __future__ import annotations

from pathlib import Path

import pytest

from evigate.errors import StoreError
from evigate.store import AuditStore
from evigate.store.connection import open_connection
from evigate.store.migrate import Migration, load_migrations, migrate
from tests.store.conftest import query_audit

AUDIT_TABLES = {"diagnosis_session", "tool_invocation", "agent_step", "schema_version"}


def _tables(store: AuditStore) -> set[str]:
    listing = (
        "SELECT table_name FROM duckdb_tables()" if store.backend == "duckdb"
        else "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    )  # fmt: skip
    return {row[0] for row in query_audit(store, listing)}


def _versions(store: AuditStore) -> list[tuple]:
    return query_audit(store, "SELECT version, name, applied_at FROM schema_version ORDER BY version")


def test_shipped_migrations_are_numbered_from_one_and_create_the_audit_tables(store: AuditStore) -> None:
    shipped = load_migrations(dialect=store.backend)
    assert [migration.version for migration in shipped] == list(range(1, len(shipped) + 1))
    assert _tables(store) >= AUDIT_TABLES
    assert [row[:2] for row in _versions(store)] == [(m.version, m.name) for m in shipped]


def test_reopening_an_up_to_date_database_changes_nothing(db_path: Path) -> None:
    with AuditStore(db_path) as first:
        session_id = first.start_session("q")
        before = _versions(first)
    with AuditStore(db_path) as second:
        assert _versions(second) == before
        assert second.session(session_id)["query"] == "q"
        with second.cursor() as cursor:
            assert migrate(cursor, second.path) == []


def test_a_database_from_a_newer_version_is_refused_clearly(db_path: Path) -> None:
    with AuditStore(db_path) as store, store.cursor() as cursor:
        cursor.execute("INSERT INTO schema_version VALUES (9999, 'from_the_future', now())")
    with pytest.raises(StoreError, match=r"schema version 9999, newer") as raised:
        AuditStore(db_path)
    assert str(db_path) in str(raised.value)


def test_a_database_whose_history_differs_is_refused(db_path: Path) -> None:
    with AuditStore(db_path) as store, store.cursor() as cursor:
        cursor.execute("UPDATE schema_version SET name = 'something_else' WHERE version = 1")
    with pytest.raises(StoreError, match="incompatible build"):
        AuditStore(db_path)


def test_only_pending_migrations_run_on_upgrade(db_path: Path) -> None:
    first = Migration(1, "one", "CREATE TABLE t_one (a INTEGER);")
    second = Migration(2, "two", "ALTER TABLE t_one ADD COLUMN b VARCHAR; CREATE TABLE t_two (c INTEGER);")
    connection = open_connection(db_path.resolve(), read_only=False)
    try:
        assert migrate(connection, db_path, (first,)) == [1]
        connection.execute("INSERT INTO t_one VALUES (7)")
        assert migrate(connection, db_path, (first, second)) == [2]
        assert migrate(connection, db_path, (first, second)) == []
        assert connection.execute("SELECT a, b FROM t_one").fetchall() == [(7, None)]
        assert connection.execute("SELECT version FROM schema_version ORDER BY 1").fetchall() == [(1,), (2,)]
    finally:
        connection.close()


def test_a_failing_migration_leaves_no_half_schema_and_no_version(db_path: Path) -> None:
    good = Migration(1, "good", "CREATE TABLE t_good (a INTEGER);")
    broken = Migration(2, "broken", "CREATE TABLE t_half (a INTEGER); SELECT * FROM no_such_table;")
    connection = open_connection(db_path.resolve(), read_only=False)
    try:
        with pytest.raises(StoreError, match="0002_broken failed"):
            migrate(connection, db_path, (good, broken))
        tables = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "t_good" in tables
        assert "t_half" not in tables
        assert connection.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    finally:
        connection.close()


def test_migration_files_must_be_numbered_without_gaps(tmp_path: Path) -> None:
    (tmp_path / "0001_first.sql").write_text("SELECT 1;", encoding="utf-8")
    (tmp_path / "0003_third.sql").write_text("SELECT 1;", encoding="utf-8")
    (tmp_path / "README.md").write_text("not a migration", encoding="utf-8")
    with pytest.raises(StoreError, match="without gaps"):
        load_migrations(tmp_path)
    (tmp_path / "0002_second.sql").write_text("SELECT 2;", encoding="utf-8")
    assert [(m.version, m.name) for m in load_migrations(tmp_path)] == [(1, "first"), (2, "second"), (3, "third")]


def test_read_only_open_needs_an_existing_migrated_file(db_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        AuditStore(db_path, read_only=True)
    connection = open_connection(db_path.resolve(), read_only=False)
    connection.execute("CREATE TABLE world_orders (id INTEGER)")
    connection.close()
    with pytest.raises(StoreError, match="open it once read-write"):
        AuditStore(db_path, read_only=True)
    AuditStore(db_path).close()
    with AuditStore(db_path, read_only=True) as reader:
        assert reader.sessions() == []


def test_the_connection_never_fetches_extensions(store: AuditStore) -> None:
    with store.cursor() as cursor:
        settings = cursor.execute(
            "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
        ).fetchone()
        json_mode = cursor.execute(
            "SELECT install_mode FROM duckdb_extensions() WHERE extension_name = 'json'"
        ).fetchone()
    assert settings == (False, False)
    assert json_mode == ("STATICALLY_LINKED",)


def test_both_backends_ship_the_same_migrations() -> None:
    duckdb_history = [(m.version, m.name) for m in load_migrations(dialect="duckdb")]
    assert duckdb_history == [(m.version, m.name) for m in load_migrations(dialect="postgresql")]
    with pytest.raises(StoreError, match="no schema migrations for database dialect 'oracle'"):
        load_migrations(dialect="oracle")
