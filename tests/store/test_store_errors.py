"""Broken infrastructure gives evigate errors naming the file: locked by another process, corrupt, closed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evigate.errors import DatabaseCorruptError, DatabaseLockedError, StoreError
from evigate.store import AuditStore

_HOLD_LOCK = textwrap.dedent(
    """
    import sys, time
    import duckdb
    connection = duckdb.connect(sys.argv[1])
    connection.execute("CREATE TABLE IF NOT EXISTS held (a INTEGER)")
    print("locked", flush=True)
    time.sleep(120)
    """
)


@pytest.fixture
def locked_path(tmp_path: Path):
    path = tmp_path / "held.duckdb"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        ready = holder.stdout.readline() if holder.stdout else ""
        assert ready.strip() == "locked", holder.stderr.read() if holder.stderr else "lock holder died"
        yield path
    finally:
        holder.kill()
        holder.wait(timeout=30)


@pytest.mark.parametrize("read_only", [False, True])
def test_a_file_held_by_another_process_is_waited_for_then_a_database_locked_error(
    locked_path: Path, read_only: bool
) -> None:
    started = time.monotonic()
    with pytest.raises(DatabaseLockedError, match=r"locked by another process \(waited 0.5s\)") as raised:
        AuditStore(locked_path, read_only=read_only, lock_wait_seconds=0.5)
    assert 0.5 <= time.monotonic() - started < 10
    assert str(locked_path.resolve()) in str(raised.value)


def test_random_bytes_are_a_database_corrupt_error(tmp_path: Path) -> None:
    path = tmp_path / "random.duckdb"
    path.write_bytes(os.urandom(64 * 1024))
    with pytest.raises(DatabaseCorruptError) as raised:
        AuditStore(path)
    assert str(path.resolve()) in str(raised.value)


def test_an_empty_file_is_not_mistaken_for_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    path.touch()
    with pytest.raises(DatabaseCorruptError, match=re.escape("empty.duckdb")):
        AuditStore(path)
    assert path.read_bytes() == b""  # never overwritten


def test_damaged_blocks_behind_a_valid_header_are_a_database_corrupt_error(db_path: Path) -> None:
    with AuditStore(db_path) as store:
        store.start_session("q")
    data = bytearray(db_path.read_bytes())
    # DuckDB keeps 3 header blocks of 4 KiB; everything after them is checksummed data blocks.
    for offset in range(3 * 4096, len(data), 4096):
        data[offset + 8 : offset + 512] = os.urandom(504)
    db_path.write_bytes(bytes(data))
    with pytest.raises(DatabaseCorruptError, match=re.escape(db_path.name)):
        AuditStore(db_path)


def test_a_missing_directory_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="does not exist"):
        AuditStore(tmp_path / "no" / "such" / "dir" / "audit.duckdb")


def test_a_closed_store_refuses_work_and_closing_twice_is_harmless(db_path: Path) -> None:
    store = AuditStore(db_path)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.sessions()
    with pytest.raises(StoreError, match="closed"):
        store.cursor()


def test_a_read_only_store_refuses_writes(db_path: Path) -> None:
    AuditStore(db_path).close()
    with AuditStore(db_path, read_only=True) as reader, pytest.raises(StoreError, match="read-only"):
        reader.start_session("q")


def test_read_only_and_writable_stores_in_one_process_share_the_file(db_path: Path) -> None:
    with AuditStore(db_path) as writer, AuditStore(db_path, read_only=True) as reader:
        session_id = writer.start_session("q")
        assert reader.session(session_id)["query"] == "q"
        with pytest.raises(StoreError, match="read-only"):
            reader.start_session("not through a reader")
        writer.finish_session(session_id, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None)
        assert reader.session(session_id)["status"] == "finished"


def test_two_stores_on_one_file_in_one_process_share_the_data(db_path: Path) -> None:
    with AuditStore(db_path) as first, AuditStore(db_path) as second:
        session_id = first.start_session("shared")
        assert second.session(session_id)["query"] == "shared"


def test_in_memory_stores_are_private(tmp_path: Path) -> None:
    with AuditStore(":memory:") as first, AuditStore(":memory:") as second:
        session_id = first.start_session("q")
        assert first.path == Path(":memory:")
        assert second.sessions() == []
        assert first.session(session_id)["query"] == "q"


def test_world_tables_live_beside_the_audit_tables_through_cursor(db_path: Path) -> None:
    with AuditStore(db_path) as store, store.cursor() as cursor:
        cursor.execute("CREATE TABLE world_orders (order_id VARCHAR, status VARCHAR)")
        cursor.execute("INSERT INTO world_orders VALUES (?, ?)", ["123", "支付失败"])
    with AuditStore(db_path) as reopened, reopened.cursor() as cursor:
        assert cursor.execute("SELECT * FROM world_orders").fetchall() == [("123", "支付失败")]
