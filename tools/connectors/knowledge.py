"""`kind: knowledge`: a folder of Markdown runbooks, searched by error code, then keyword, then BM25."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from evigate.tools.base import Tool, ToolOutput
from evigate.tools.connectors.base import SourceCheck, SourceConfig, ToolConfig
from evigate.tools.knowledge import LookupKnowledge, LookupKnowledgeArgs
from evigate.tools.retrieval import load_knowledge_base
from evigate.tools.source import DataSource


class KnowledgeSource(SourceConfig):
    kind: Literal["knowledge"] = "knowledge"
    path: str = "knowledge"
    """Folder of `*.md` (searched recursively), relative to the domain directory."""


class KnowledgeTool(ToolConfig):
    """A lookup over the source's documents; no extra fields."""


class FolderLookup(LookupKnowledge):
    """`lookup_knowledge` over one folder instead of the data source's knowledge base."""

    def __init__(self, name: str, description: str, folder: Path, is_evidence: bool = True) -> None:
        self.name, self.description, self.is_evidence = name, description, is_evidence  # type: ignore[misc]
        self.folder = folder

    def run(self, args: LookupKnowledgeArgs, world: DataSource) -> ToolOutput:
        return self.answer(args, load_knowledge_base(self.folder))


class KnowledgeConnector:
    kind = "knowledge"
    Source = KnowledgeSource
    ToolSpec = KnowledgeTool

    def folder(self, source: KnowledgeSource, base_dir: Path) -> Path:
        return (base_dir / source.path).resolve()

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        return [FolderLookup(t.name, t.description, self.folder(source, base_dir), t.is_evidence) for t in tools]

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        folder = self.folder(source, base_dir)
        started = time.perf_counter()
        if not folder.is_dir():
            return SourceCheck(source=source_name, kind=self.kind, reachable=False,
                               detail=f"folder not found: {folder}")
        documents = len(load_knowledge_base(folder).documents)
        return SourceCheck(source=source_name, kind=self.kind, reachable=True, seen=documents,
                           latency_ms=round((time.perf_counter() - started) * 1000, 1),
                           detail=f"{documents} documents under {folder}")
