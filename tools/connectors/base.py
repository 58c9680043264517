"""The connector contract: how a domain.yaml source and its tools become evidence tools.

A connector has a `kind`, a `Source` model (the `sources.<name>` block), a `ToolSpec` model (a `tools[]` entry),
`build_tools(...)` returning ready `Tool` instances and `check(...)` probing the source for `evigate domain check`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evigate.tools.base import Tool


class SourceConfig(BaseModel):
    """One `sources.<name>` block of domain.yaml; each connector subclasses it with `kind: Literal[...]`."""

    model_config = ConfigDict(extra="forbid")
    kind: str


class ToolConfig(BaseModel):
    """One `tools[]` entry of domain.yaml: an evidence tool over a source."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    description: str = Field(min_length=1, description="what the model chooses the tool by")
    source: str = Field(description="name of a source in `sources`")
    is_evidence: bool = True
    params: dict[str, Any] = Field(default_factory=dict, description="argument name -> spec (kind-specific)")


class SourceCheck(BaseModel):
    """What `evigate domain check` prints for one source."""

    source: str
    kind: str
    reachable: bool
    seen: int | None = None
    latency_ms: float | None = None
    detail: str = ""


class Connector(Protocol):
    kind: str
    Source: type[SourceConfig]
    ToolSpec: type[ToolConfig]

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]: ...

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck: ...
