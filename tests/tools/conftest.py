"""One audit store holding the full default world for the whole test session; a fresh session per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from evigate.demo import demo_toolbox, ensure_world
from evigate.store import AuditStore
from evigate.tools import Toolbox


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuditStore]:
    with AuditStore(tmp_path_factory.mktemp("tools") / "tools.duckdb") as audit_store:
        ensure_world(audit_store)
        yield audit_store


@pytest.fixture()
def session_id(store: AuditStore) -> str:
    return store.start_session(f"test {uuid.uuid4().hex[:8]}")


@pytest.fixture()
def toolbox(store: AuditStore, session_id: str) -> Toolbox:
    return demo_toolbox(store, session_id)
