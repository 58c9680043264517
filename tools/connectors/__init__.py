"""Connectors: a domain's data sources (Prometheus, log files, SQL, Markdown knowledge, MCP servers) as tools.

`CONNECTORS[kind]` is the `Connector` for a source kind. The Domain loader parses `sources:` and `tools:` with
`parse_sources` / `parse_tools`, builds the tools with `build_tools` and checks every source with
`check_sources` (`evigate domain check`). See `base.py` for the contract.
"""

from __future__ import annotations

from evigate.tools.connectors.base import (
    Connector,
    ConnectorTool,
    ParamSpec,
    SourceCheck,
    SourceConfig,
    ToolConfig,
)
from evigate.tools.connectors.knowledge import KnowledgeConnector
from evigate.tools.connectors.loading import build_tools, check_sources, parse_sources, parse_tools
from evigate.tools.connectors.logfiles import LogFilesConnector
from evigate.tools.connectors.mcp import MCPConnector
from evigate.tools.connectors.prometheus import PrometheusConnector
from evigate.tools.connectors.sql import SQLConnector

CONNECTORS: dict[str, Connector] = {
    connector.kind: connector
    for connector in (PrometheusConnector(), LogFilesConnector(), SQLConnector(), KnowledgeConnector(), MCPConnector())
}

__all__ = [
    "CONNECTORS", "Connector", "ConnectorTool", "ParamSpec", "SourceCheck", "SourceConfig", "ToolConfig",
    "build_tools", "check_sources", "parse_sources", "parse_tools",
]
