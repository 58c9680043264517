"""The demo world as a Domain: the default when no `domain:` is configured.

Its tools are Python classes over the `world_*` DuckDB tables, which are built on first use: in the audit DuckDB
file, or, when the audit store is a PostgreSQL URL, in the store's private in-memory DuckDB of each worker process
(several workers never contend for a world file), or in a DuckDB file of their own when `data_path` is set.
"""

from __future__ import annotations

import threading
from datetime import datetime
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from evigate.demo.builder import ensure_world, world_info
from evigate.demo.catalog import WORLD_NOW
from evigate.demo.entities import DEMO_EXTRACTOR, DEMO_VOCABULARY
from evigate.domain.model import Domain
from evigate.domain.skills import load_skills as load_skill_dir
from evigate.rules.text.question import EntityExtractor
from evigate.tools.base import ToolRegistry
from evigate.tools.clock import GetCurrentDatetime
from evigate.tools.source import CursorProvider, DataSource


def knowledge_dir() -> Path:
    """Folder of the shipped knowledge documents (`payment/errors.md`, `database/hikaricp.md`, …)."""
    return Path(str(resources.files("evigate.demo") / "knowledge"))


def skills_dir() -> Path:
    return Path(str(resources.files("evigate.demo") / "skills"))


def load_skills(directory: str | Path | None = None) -> list[Any]:
    """The demo world's skills (or those of another folder, with the demo's placeholders)."""
    return load_skill_dir(directory or skills_dir(), DEMO_VOCABULARY.placeholders())


WORLD_TIMEZONE = "UTC+8"


class WorldClock(GetCurrentDatetime):
    """The demo world's clock: world time in Asia/Shanghai."""

    description = (
        "Current date and time of the data source (local time, UTC+8), to turn 'the last 30 minutes' into a "
        "window. Auxiliary: not evidence."
    )


def demo_registry() -> ToolRegistry:
    """A fresh registry of the demo world's five tools (a new object each call: extend it freely)."""
    from evigate.demo.tools.logs import QueryLogs
    from evigate.demo.tools.metrics import QueryMetrics
    from evigate.demo.tools.orders import QueryOrder
    from evigate.tools.knowledge import LookupKnowledge

    return ToolRegistry([LookupKnowledge(), QueryLogs(), QueryMetrics(), QueryOrder(), WorldClock()])


def demo_source(store: CursorProvider, *, knowledge: Any = None, clock: Any = None) -> DataSource:
    """The demo world's data source: built on first use, its clock the world's (2026-11-28 23:59:59)."""

    def world_now() -> datetime:
        with source.cursor() as cursor:
            stamp = world_info(cursor).get("now")
        return datetime.fromisoformat(stamp) if stamp else WORLD_NOW

    source = DataSource(store, knowledge=knowledge or knowledge_dir(), clock=clock or world_now, prepare=ensure_world,
                        timezone=WORLD_TIMEZONE)
    return source


class _WorldFile:
    """A DuckDB file of the world's own, for an audit store that is not DuckDB."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._connection: duckdb.DuckDBPyConnection | None = None

    def cursor(self) -> duckdb.DuckDBPyConnection:
        with self._lock:
            if self._connection is None:
                self._connection = duckdb.connect(self.path)
            return self._connection.cursor()


@lru_cache(maxsize=4)
def _world_file(path: str) -> _WorldFile:
    return _WorldFile(path)


class DemoDomain(Domain):
    """The demo payment platform (2026-11-28, seven incidents); tools over DuckDB tables it builds itself."""

    data_path: str | None = None
    """Where the world's tables live: None → the audit store's DuckDB (its file, or a server store's in-memory one)."""

    @cached_property
    def extractor(self) -> EntityExtractor:
        # A bare clock time in a question ("around 02:10") is on the world day, as the world's clock says: the real
        # date would put every window the planner fills outside the data ("no rows").
        return DEMO_EXTRACTOR

    def world_store(self, store: CursorProvider, database: str | None) -> CursorProvider:
        if self.data_path:
            return _world_file(str(Path(self.data_path).resolve()))
        return store

    def build_registry(self) -> ToolRegistry:
        registry = demo_registry()
        for tool in self._extra_tools:
            registry.register(tool)
        return registry

    def data_source(self, store: CursorProvider, *, database: str | None = None) -> DataSource:
        return demo_source(self.world_store(store, database))

    def prepare(self, store: CursorProvider, *, database: str | None = None) -> None:
        ensure_world(self.world_store(store, database))


def demo_domain() -> DemoDomain:
    """A new demo Domain object."""
    return DemoDomain(
        name="demo",
        description="The demo payment platform's day (2026-11-28): seven incidents woven into normal traffic.",
        vocabulary=DEMO_VOCABULARY,
        now=None,  # the world's clock comes from world_meta (see demo_source)
        skills=load_skills(),
        knowledge=[str(knowledge_dir())],
        census_tool="query_logs",  # its retrieval_details count the selected lines by error code
    )


def demo_toolbox(store: Any, session_id: str, *, registry: Any = None, source: Any = None, **kwargs: Any) -> Any:
    """A recorded `Toolbox` over the demo world: its tools and data source unless others are given."""
    from evigate.tools.toolbox import Toolbox

    return Toolbox(store, session_id, registry=registry if registry is not None else demo_registry(),
                   source=source if source is not None else demo_source(store), **kwargs)
