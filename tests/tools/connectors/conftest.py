"""An audit store without the demo world, and a Toolbox over a registry of connector-built tools."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from evigate.store import AuditStore
from evigate.tools import DataSource, Toolbox, ToolRegistry
from evigate.tools.connectors import build_tools, parse_sources, parse_tools
from tests.servers import prometheus_server

START = 1772359200  # 2026-03-01T10:00:00Z


@pytest.fixture()
def audit(tmp_path: Path) -> Iterator[AuditStore]:
    with AuditStore(tmp_path / "audit.duckdb") as store:
        yield store


@pytest.fixture()
def make_toolbox(audit: AuditStore) -> Callable[..., Toolbox]:
    """make_toolbox(sources, tools, base_dir) → a Toolbox over exactly the declared tools."""

    def make(sources: dict[str, Any], tools: list[dict[str, Any]], base_dir: Path, *,
             clock: Callable[[], datetime] | None = None) -> Toolbox:
        parsed = parse_sources(sources)
        registry = ToolRegistry(build_tools(parsed, parse_tools(tools, parsed), base_dir=base_dir))
        session = audit.start_session(f"connectors {uuid.uuid4().hex[:8]}")
        return Toolbox(audit, session, registry=registry, source=DataSource(audit, clock=clock))

    return make


def ledger_openmetrics() -> str:
    """Two services' p99 latency every minute for an hour; ledger-api spikes above 2 s from 10:20 to 10:29."""
    lines = ["# TYPE ledger_request_seconds_p99 gauge"]
    for service in ("ledger-api", "invoice-worker"):
        for minute in range(61):
            spike = service == "ledger-api" and 20 <= minute <= 29
            value = 2.5 + minute / 100 if spike else 0.2 + (minute % 5) / 100
            lines.append(f'ledger_request_seconds_p99{{service="{service}"}} {value} {START + 60 * minute}')
    lines.append("# EOF")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def prometheus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Prometheus holding `ledger_openmetrics()`; its base URL."""
    with prometheus_server(ledger_openmetrics(), tmp_path_factory.mktemp("prometheus")) as url:
        yield url
