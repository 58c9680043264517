"""The data source tools read: DuckDB tables (the demo world by default), a knowledge base and a clock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

import duckdb

from evigate.datasets.world import WORLD_NOW, ensure_world, knowledge_dir, world_info
from evigate.datasets.world.builder import CursorProvider
from evigate.tools.retrieval import KnowledgeBase, load_knowledge_base


class DataSource:
    """What a tool's `run(args, world)` receives.

    `store` is anything with `.cursor()` (an `AuditStore`, a `duckdb` connection). With `demo_world=True` (the
    default) the demo world is built on first use if missing and the clock is the world's clock (2026-11-28
    23:59:59), so relative questions land inside the data; with `demo_world=False` tools query your own tables
    and the clock is the real one. Custom tools may read any table through `cursor()`.
    """

    def __init__(
        self,
        store: CursorProvider,
        *,
        knowledge: KnowledgeBase | str | Path | None = None,
        clock: Callable[[], datetime] | None = None,
        demo_world: bool = True,
    ) -> None:
        self._store = store
        self._knowledge = knowledge
        self._clock = clock
        self._demo_world = demo_world
        self._world_ready = not demo_world
        self._lock = threading.Lock()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A fresh DuckDB cursor of the store; close it after use (`with world.cursor() as cursor:`).

        The demo world is ensured before the first one is handed out.
        """
        if not self._world_ready:
            with self._lock:
                if not self._world_ready:
                    ensure_world(self._store)
                    self._world_ready = True
        return self._store.cursor()

    @property
    def knowledge(self) -> KnowledgeBase:
        """The knowledge base: the shipped documents unless another folder or base was given."""
        if not isinstance(self._knowledge, KnowledgeBase):
            self._knowledge = load_knowledge_base(self._knowledge or knowledge_dir())
        return self._knowledge

    def now(self) -> datetime:
        """Current time as the data sees it (naive, local time of the data)."""
        if self._clock is not None:
            return self._clock()
        if self._demo_world:
            with self.cursor() as cursor:
                stamp = world_info(cursor).get("now")
            return datetime.fromisoformat(stamp) if stamp else WORLD_NOW
        return datetime.now()

    def today(self) -> date:
        """The day bare clock times ("14:03") refer to."""
        return self.now().date()
