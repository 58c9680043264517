"""An audit store without the demo world, and a Toolbox over a registry of connector-built tools."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evigate.store import AuditStore
from evigate.tools import DataSource, Toolbox, ToolRegistry
from evigate.tools.connectors import build_tools, parse_sources, parse_tools


@pytest.fixture()
def audit(tmp_path: Path) -> Iterator[AuditStore]:
    with AuditStore(tmp_path / "audit.duckdb") as store:
        yield store


@pytest.fixture()
def make_toolbox(audit: AuditStore) -> Callable[..., Toolbox]:
    """make_toolbox(sources, tools, base_dir) → a Toolbox over exactly the declared tools."""

    def make(sources: dict[str, Any], tools: list[dict[str, Any]], base_dir: Path) -> Toolbox:
        parsed = parse_sources(sources)
        registry = ToolRegistry(build_tools(parsed, parse_tools(tools, parsed), base_dir=base_dir))
        session = audit.start_session(f"connectors {uuid.uuid4().hex[:8]}")
        return Toolbox(audit, session, registry=registry, source=DataSource(audit, demo_world=False))

    return make
