"""The data source tools read: a DuckDB cursor provider, a knowledge base and a clock, all given by the domain."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path
from typing import Protocol

import duckdb

from evigate.tools.retrieval import KnowledgeBase, load_knowledge_base


class CursorProvider(Protocol):
    """Anything that hands out a DuckDB cursor: an `AuditStore` or a `duckdb` connection."""

    def cursor(self) -> duckdb.DuckDBPyConnection: ...


class DataSource:
    """What a tool's `run(args, world)` receives.

    `store` is anything with `.cursor()` (an `AuditStore`, a `duckdb` connection): custom tools may read any table
    through `cursor()`. `knowledge` is a knowledge base or a folder of Markdown (none: an empty base). `clock` is
    the data's "now" (default: the real clock). `prepare(store)` runs once, before the first cursor is handed out:
    a domain that builds its data on first use (the demo world) does it there. `timezone` labels the data's
    local time ("UTC+8") where the clock is shown.
    """

    def __init__(
        self,
        store: CursorProvider,
        *,
        knowledge: KnowledgeBase | str | Path | None = None,
        clock: Callable[[], datetime] | None = None,
        prepare: Callable[[CursorProvider], object] | None = None,
        timezone: str | None = None,
    ) -> None:
        self.timezone = timezone
        self._store = store
        self._knowledge = knowledge
        self._clock = clock
        self._prepare = prepare
        self._ready = prepare is None
        self._lock = threading.Lock()

    @property
    def store(self) -> CursorProvider:
        return self._store

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A fresh DuckDB cursor of the store; close it after use (`with world.cursor() as cursor:`)."""
        if not self._ready:
            with self._lock:
                if not self._ready:
                    assert self._prepare is not None
                    self._prepare(self._store)
                    self._ready = True
        return self._store.cursor()

    @property
    def knowledge(self) -> KnowledgeBase:
        """The knowledge base: the given one, the folder's, or an empty one."""
        if not isinstance(self._knowledge, KnowledgeBase):
            self._knowledge = load_knowledge_base(self._knowledge) if self._knowledge else KnowledgeBase([])
        return self._knowledge

    def now(self) -> datetime:
        """Current time as the data sees it (naive, local time of the data)."""
        return self._clock() if self._clock is not None else datetime.now()

    def today(self) -> date:
        """The day bare clock times ("14:03") refer to."""
        return self.now().date()
