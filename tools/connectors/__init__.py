"""Connectors: the `kind`s a domain.yaml source can have, each turning its tools into evidence tools."""

from __future__ import annotations

from evigate.tools.connectors.base import Connector, SourceCheck, SourceConfig, ToolConfig
from evigate.tools.connectors.knowledge import KnowledgeConnector
from evigate.tools.connectors.logfiles import LogFilesConnector

CONNECTORS: dict[str, Connector] = {c.kind: c for c in (KnowledgeConnector(), LogFilesConnector())}

__all__ = ["CONNECTORS", "Connector", "SourceCheck", "SourceConfig", "ToolConfig"]
