"""What only the PostgreSQL backend has: credentials, connection failures, workers migrating at once."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest

from evigate.errors import StoreError
from evigate.store import AuditStore
from evigate.store.migrate import load_migrations
from evigate.store.postgres import is_postgres_url, redact_secrets, redact_url
from tests.servers import PgServer, free_port


def test_urls_are_told_apart_from_files_and_printed_without_their_password() -> None:
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url("POSTGRES://u@h/db")
    assert not is_postgres_url("evigate.duckdb") and not is_postgres_url("/data/postgresql.duckdb")
    assert redact_url("postgresql://u:p%40ss@h:5/db?password=x&sslmode=require") == (
        "postgresql://u:***@h:5/db?password=***&sslmode=require"
    )
    assert redact_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert redact_secrets("failed for postgresql://u:hunter2@h/db: boom") == "failed for postgresql://u:***@h/db: boom"


def test_an_unreachable_server_is_a_store_error_without_the_password() -> None:
    url = f"postgresql://evigate:hunter2@127.0.0.1:{free_port()}/audit"
    with pytest.raises(StoreError, match="cannot connect to audit database") as raised:
        AuditStore(url)
    assert "hunter2" not in str(raised.value) and "evigate:***@127.0.0.1" in str(raised.value)


@pytest.mark.servers
def test_the_password_may_come_from_pgpassword(pg_server: PgServer, monkeypatch: pytest.MonkeyPatch) -> None:
    schema_url = pg_server.fresh_schema_url().replace(f":{pg_server.password}@", "@")
    monkeypatch.delenv("PGPASSWORD", raising=False)
    with pytest.raises(StoreError, match="password") as raised:
        AuditStore(schema_url)
    assert pg_server.password not in str(raised.value)
    monkeypatch.setenv("PGPASSWORD", pg_server.password)
    with AuditStore(schema_url) as store:
        session_id = store.start_session("q", settings={"database": schema_url})
        assert store.session(session_id)["query"] == "q"
        assert store.location == schema_url


@pytest.mark.servers
def test_a_wrong_password_is_a_clear_store_error(pg_server: PgServer) -> None:
    url = pg_server.fresh_schema_url().replace(f":{pg_server.password}@", ":not-the-password@")
    with pytest.raises(StoreError, match="password authentication failed") as raised:
        AuditStore(url)
    assert "not-the-password" not in str(raised.value)


@pytest.mark.servers
def test_the_password_never_reaches_the_audit(pg_server: PgServer) -> None:
    url = pg_server.fresh_schema_url()
    with AuditStore(url) as store:
        session_id = store.start_session("q", settings={"database": url, "nested": [{"dsn": url}]})
        dumped = repr(store.session(session_id)) + repr(store.sessions()) + repr(store)
        assert pg_server.password not in dumped
        assert store.session(session_id)["settings"]["database"].startswith("postgresql://evigate:***@127.0.0.1")


@pytest.mark.servers
def test_workers_opening_a_new_database_together_migrate_it_once(pg_server: PgServer) -> None:
    url = pg_server.fresh_schema_url()
    errors: list[BaseException] = []
    stores: list[AuditStore] = []

    def open_store() -> None:
        try:
            stores.append(AuditStore(url))
        except BaseException as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_store) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == [] and len(stores) == 6
    session_id = stores[0].start_session("q")
    assert all(store.session(session_id)["query"] == "q" for store in stores)
    with stores[0]._backend._connection() as connection:
        applied = connection.execute("SELECT version, count(*) FROM schema_version GROUP BY version").fetchall()
        assert sorted(applied) == [(migration.version, 1) for migration in load_migrations(dialect="postgresql")]
    for store in stores:
        store.close()


@pytest.mark.servers
def test_a_read_only_store_reads_and_refuses_writes(pg_server: PgServer) -> None:
    url = pg_server.fresh_schema_url()
    with pytest.raises(StoreError, match="open it once read-write"):
        AuditStore(url, read_only=True)
    with AuditStore(url) as writer:
        session_id = writer.start_session("q")
    with AuditStore(url, read_only=True) as reader:
        assert reader.session(session_id)["query"] == "q"
        with pytest.raises(StoreError, match="read-only"):
            reader.start_session("no")


@pytest.mark.servers
def test_the_demo_world_lives_in_a_private_duckdb_beside_the_audit(pg_server: PgServer) -> None:
    from evigate.demo import ensure_world

    with AuditStore(pg_server.fresh_schema_url()) as store:
        counts = ensure_world(store, scale=0.05)
        with store.cursor() as cursor:
            assert cursor.execute("SELECT count(*) FROM world_orders").fetchone()[0] == counts["world_orders"]
            tables = {row[0] for row in cursor.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "diagnosis_session" not in tables  # the audit is in PostgreSQL only


def _write_in_child(store: AuditStore, queue: Any) -> None:
    queue.put(store.start_session("from the forked child"))


@pytest.mark.servers
def test_a_forked_worker_opens_its_own_connections_and_leaves_the_parents_alone(pg_server: PgServer) -> None:
    with AuditStore(pg_server.fresh_schema_url()) as store:
        first = store.start_session("parent before fork")  # leaves an idle pooled connection behind
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_write_in_child, args=(store, queue))
        child.start()
        child_session = queue.get(timeout=60)
        child.join(timeout=60)
        assert child.exitcode == 0
        second = store.start_session("parent after fork")  # the parent's pooled connection still works
        assert [store.session(s)["query"] for s in (first, child_session, second)] == [
            "parent before fork", "from the forked child", "parent after fork",
        ]  # fmt: skip
