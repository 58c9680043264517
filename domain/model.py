"""`Domain`: everything specific to one organisation's incidents, as one validated model.

The vocabulary drives query-entity extraction and the Gatekeeper's entity rules; the skills are the Planner's
runbooks; `knowledge` folders feed `lookup_knowledge`; `sources` and `tools` are the evidence tools, built by the
connector of each source's `kind`. A subclass may override `build_registry`, `data_source` and `prepare` (the demo
world does: its tools are Python classes over DuckDB tables it builds on first use).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, SerializeAsAny, model_validator

from evigate.domain.skills import KNOWN_PLACEHOLDERS as _GENERIC_PLACEHOLDERS
from evigate.domain.skills import Skill
from evigate.rules.text.question import EntityExtractor
from evigate.rules.text.vocabulary import EntityVocabulary, Vocabulary
from evigate.tools.base import ToolRegistry
from evigate.tools.clock import GetCurrentDatetime
from evigate.tools.connectors import (
    CONNECTORS,
    SourceCheck,
    SourceConfig,
    ToolConfig,
    build_tools,
    check_sources,
    parse_sources,
    parse_tools,
)
from evigate.tools.knowledge import LookupKnowledge
from evigate.tools.retrieval import KnowledgeBase
from evigate.tools.source import CursorProvider, DataSource


class Domain(BaseModel):
    """One organisation's incident domain: vocabulary, skills, knowledge, sources and the tools over them."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    name: str = Field(min_length=1, description="short name, shown in settings snapshots")
    description: str = ""
    vocabulary: Vocabulary = Field(default_factory=Vocabulary)
    now: datetime | None = Field(
        default=None, description="the data's clock, for a frozen data set ('2026-03-02 18:00'); omit for real time"
    )
    timezone: str | None = Field(
        default=None, description="label of the data's local time (e.g. UTC+8), shown by get_current_datetime"
    )
    skills: list[Skill] = Field(default_factory=list, description="runbooks; a domain directory adds skills/*.yaml")
    knowledge: list[str] = Field(
        default_factory=list,
        description="Markdown folders behind the built-in lookup_knowledge tool, relative to the domain directory "
        "(a domain directory without this key uses its knowledge/ folder)",
    )
    sources: dict[str, SerializeAsAny[SourceConfig]] = Field(
        default_factory=dict, description="name -> {kind: logfiles|knowledge|…, …} (see docs/domains.md)"
    )
    tools: list[SerializeAsAny[ToolConfig]] = Field(default_factory=list, description="evidence tools over sources")
    census_tool: str | None = Field(
        default=None,
        description="a tool whose output's retrieval_details carry by_error_code {code: count} (and first_ts/last_ts):"
        " the Planner counts the codes of the records a question points at with it when the question names no code",
    )
    base_dir: Path | None = Field(default=None, exclude=True, description="the domain directory (set by the loader)")
    _extra_tools: list[Any] = PrivateAttr(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _connector_models(cls, data: Any) -> Any:
        """Each source and tool block validated by the model of its connector (ConfigError naming the key)."""
        if not isinstance(data, dict):
            return data
        raw_sources = data.get("sources") or {}
        sources = raw_sources
        if not all(isinstance(v, SourceConfig) for v in getattr(raw_sources, "values", lambda: [])()):
            sources = parse_sources(raw_sources)
        raw_tools = data.get("tools") or []
        tools = raw_tools
        if not all(isinstance(t, ToolConfig) for t in raw_tools):
            tools = parse_tools(raw_tools, sources)
        return {**data, "sources": sources, "tools": tools}

    @model_validator(mode="after")
    def _unique_tools(self) -> Domain:
        for tool in self.tools:
            if tool.source not in self.sources:
                raise ValueError(f"tools.{tool.name}.source: no source named {tool.source!r}")
        for skill in self.skills:
            unknown = skill.placeholders() - _GENERIC_PLACEHOLDERS - self.vocabulary.placeholders()
            if unknown:
                raise ValueError(f"skills.{skill.id}: unknown placeholders {sorted(unknown)}")
        return self

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:  # type: ignore[override]
        """The schema with each source and tool block spelled out per connector kind (what domain.yaml may hold)."""
        schema = super().model_json_schema(*args, **kwargs)
        definitions = schema.setdefault("$defs", {})
        choices: dict[str, list[dict[str, str]]] = {"sources": [], "tools": []}
        for connector in CONNECTORS.values():
            for key, model in (("sources", connector.Source), ("tools", connector.ToolSpec)):
                sub = model.model_json_schema(ref_template="#/$defs/{model}")
                definitions.update(sub.pop("$defs", {}))
                definitions[model.__name__] = sub
                choices[key].append({"$ref": f"#/$defs/{model.__name__}"})
        properties = schema["properties"]
        properties["sources"]["additionalProperties"] = {"oneOf": choices["sources"]}
        properties["tools"]["items"] = {"anyOf": choices["tools"]}
        properties.pop("base_dir", None)
        return schema

    # -- behaviour ------------------------------------------------------------------------------------------------
    def today(self) -> date:
        return (self.now or datetime.now()).date()

    @cached_property
    def extractor(self) -> EntityExtractor:
        return EntityExtractor(self.vocabulary, self.now.date() if self.now else None)

    def extract_entities(self, query: str) -> dict[str, Any]:
        """The entities a question names, by this domain's vocabulary (see `EntityExtractor`)."""
        return self.extractor.extract(query)

    def entity_vocabulary(self) -> EntityVocabulary:
        """The names the Gatekeeper's entity rules must recognise beyond entity shapes (see
        `Vocabulary.entity_vocabulary`)."""
        return self.vocabulary.entity_vocabulary()

    def knowledge_dirs(self) -> list[Path]:
        base = self.base_dir or Path.cwd()
        return [path for path in ((base / folder).resolve() for folder in self.knowledge) if path.is_dir()]

    def knowledge_base(self) -> KnowledgeBase:
        from evigate.tools.retrieval import load_knowledge_base

        folders = self.knowledge_dirs()
        if len(folders) == 1:
            return load_knowledge_base(folders[0])
        bases = {folder: load_knowledge_base(folder) for folder in folders}
        return KnowledgeBase([section for base in bases.values() for section in base.sections],
                             {f"{folder}/{name}": why for folder, base in bases.items()
                              for name, why in base.skipped.items()})

    def build_registry(self) -> ToolRegistry:
        """A fresh registry: lookup_knowledge (when there are knowledge folders), the clock, the sources' tools."""
        registry = ToolRegistry()
        declared = {tool.name for tool in self.tools}
        if self.knowledge_dirs() and LookupKnowledge.name not in declared:
            registry.register(LookupKnowledge())
        for tool in build_tools(self.sources, self.tools, base_dir=self.base_dir or Path.cwd()):
            registry.register(tool)
        if GetCurrentDatetime.name not in declared:
            registry.register(GetCurrentDatetime())
        for tool in self._extra_tools:
            registry.register(tool)
        return registry

    def check_sources(self) -> list[SourceCheck]:
        """Connect to every source once (see `evigate domain check`)."""
        return check_sources(self.sources, base_dir=self.base_dir or Path.cwd())

    def with_tools(self, *tools: Any) -> Domain:
        """A copy that also registers these Python `Tool`s (instances or classes)."""
        copy = self.model_copy()
        copy._extra_tools = [*self._extra_tools, *tools]
        return copy

    def data_source(self, store: CursorProvider, *, database: str | None = None) -> DataSource:
        """What the tools read: the audit store's DuckDB, this domain's knowledge and clock."""
        clock: Callable[[], datetime] | None = (lambda: self.now) if self.now is not None else None  # type: ignore
        return DataSource(store, knowledge=self.knowledge_base(), clock=clock, timezone=self.timezone)

    def prepare(self, store: CursorProvider, *, database: str | None = None) -> None:
        """Anything to set up before the first question (nothing for a file-based domain)."""



