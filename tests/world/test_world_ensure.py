"""`ensure_world` builds once per generator version, through the real audit store."""

from __future__ import annotations

import time

import pytest

from evigate.demo import GENERATOR_VERSION, ensure_world, world_fingerprint, world_info
from evigate.errors import StoreError
from evigate.store import AuditStore


def test_builds_when_missing_then_reuses(tmp_path) -> None:
    with AuditStore(tmp_path / "e.duckdb") as store:
        counts = ensure_world(store, scale=0.05)
        assert counts["world_orders"] > 0
        with store.cursor() as cursor:
            before = world_fingerprint(cursor)
            assert world_info(cursor)["generator_version"] == GENERATOR_VERSION
        started = time.perf_counter()
        assert ensure_world(store, scale=0.05) == counts
        assert time.perf_counter() - started < 0.5  # a check, not a rebuild
        with store.cursor() as cursor:
            assert world_fingerprint(cursor) == before


def test_rebuilds_a_world_of_another_generator_version(tmp_path) -> None:
    with AuditStore(tmp_path / "v.duckdb") as store:
        ensure_world(store, scale=0.05)
        with store.cursor() as cursor:
            cursor.execute("UPDATE world_meta SET value = 'ancient' WHERE key = 'generator_version'")
            cursor.execute("DELETE FROM world_orders WHERE order_id = 123")
        ensure_world(store, scale=0.05)
        with store.cursor() as cursor:
            assert world_info(cursor)["generator_version"] == GENERATOR_VERSION
            assert cursor.execute("SELECT count(*) FROM world_orders WHERE order_id = 123").fetchone()[0] == 1


def test_audit_tables_survive_a_rebuild(tmp_path) -> None:
    with AuditStore(tmp_path / "a.duckdb") as store:
        session = store.start_session("订单 123 支付失败")
        store.record_invocation(session, 1, "query_order", {"order_id": 123}, "order 123: status=FAILED")
        ensure_world(store, scale=0.05)
        assert [invocation.tool_name for invocation in store.invocations(session)] == ["query_order"]


def test_read_only_store_without_world_is_a_store_error(tmp_path) -> None:
    path = tmp_path / "ro.duckdb"
    AuditStore(path).close()
    with AuditStore(path, read_only=True) as store, pytest.raises(StoreError, match="evigate world init"):
        ensure_world(store, scale=0.05)
