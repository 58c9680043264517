"""Knowledge connector: a domain's Markdown folder, searched by the built-in retrieval layers.

Exact error code → keyword → BM25 (evigate.tools.retrieval). The index is rebuilt when any file under the
folder is added, removed or changed (a signature of relative path, size and mtime of every `*.md`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from evigate.errors import ConfigError, ToolError
from evigate.tools.base import Tool, ToolOutput
from evigate.tools.connectors.base import (
    ConnectorTool,
    FileSourceConfig,
    SourceCheck,
    ToolConfig,
    confined_path,
    refuse_params,
)
from evigate.tools.knowledge import LookupKnowledge, LookupKnowledgeArgs
from evigate.tools.retrieval import KnowledgeBase

Signature = tuple[tuple[str, int, int], ...]


class KnowledgeSource(FileSourceConfig):
    kind: Literal["knowledge"]
    path: str = Field(default="knowledge", description="folder of *.md documents, relative to the domain directory")


class KnowledgeToolSpec(ToolConfig):
    pass


def signature(folder: Path) -> Signature:
    """(relative path, size, mtime_ns) of every markdown file: changes whenever a document does."""
    entries = []
    for path in sorted(folder.rglob("*.md")):
        try:
            stat = path.stat()
        except OSError:  # a dangling link: the index skips and names it, the signature must not fail on it
            entries.append((path.relative_to(folder).as_posix(), -1, -1))
            continue
        entries.append((path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns))
    return tuple(entries)


class LiveKnowledgeBase:
    """A KnowledgeBase over a folder that re-reads the folder when its signature changes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._signature: Signature | None = None
        self._base: KnowledgeBase | None = None
        self.builds = 0

    def current(self) -> KnowledgeBase:
        if not self.folder.is_dir():
            raise ToolError(f"knowledge folder {self.folder} does not exist")
        with self._lock:
            now = signature(self.folder)
            if self._base is None or now != self._signature:
                self._base = KnowledgeBase.from_directory(self.folder)
                self._signature = now
                self.builds += 1
            return self._base


class _KnowledgeView:
    """What LookupKnowledge.run reads from its `world`: only `.knowledge`."""

    def __init__(self, base: KnowledgeBase) -> None:
        self.knowledge = base


class KnowledgeTool(ConnectorTool):
    def __init__(self, config: KnowledgeToolSpec, live: LiveKnowledgeBase) -> None:
        super().__init__(config, LookupKnowledgeArgs)
        self.live = live

    def query(self, args: LookupKnowledgeArgs, now: Callable[[], datetime]) -> ToolOutput:
        output = LookupKnowledge().run(args, _KnowledgeView(self.live.current()))  # type: ignore[arg-type]
        return ToolOutput(text=output.text.replace("lookup_knowledge", self.name, 1),
                          retrieval_details=output.retrieval_details)


class KnowledgeConnector:
    kind = "knowledge"
    Source = KnowledgeSource
    ToolSpec = KnowledgeToolSpec

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        folder = confined_path(base_dir, source.path, allow_outside=source.allow_outside_domain,
                               where=f"sources.{source_name}.path")
        if not folder.is_dir():
            raise ConfigError(f"sources.{source_name}.path: knowledge folder {folder} does not exist")
        live = LiveKnowledgeBase(folder)
        built = []
        for tool in tools:
            refuse_params(tool, self.kind)
            built.append(KnowledgeTool(tool, live))
        return built

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            folder = confined_path(base_dir, source.path, allow_outside=source.allow_outside_domain,
                                   where=f"sources.{source_name}.path")
        except ConfigError as exc:
            return SourceCheck(source=source_name, kind=self.kind, reachable=False, detail=str(exc))
        if not folder.is_dir():
            return SourceCheck(source=source_name, kind=self.kind, reachable=False,
                               detail=f"knowledge folder {folder} does not exist")
        base = KnowledgeBase.from_directory(folder)
        detail = (f"{len(base.documents)} documents, {len(base.sections)} sections" if base.documents
                  else f"no readable *.md documents under {folder}")
        if base.skipped:
            detail += "; skipped " + "; ".join(f"{name} ({why})" for name, why in base.skipped.items())
        return SourceCheck(source=source_name, kind=self.kind, reachable=bool(base.documents),
                           seen=len(base.documents), latency_ms=(time.perf_counter() - started) * 1000,
                           detail=detail)
