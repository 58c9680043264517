"""From the `sources:` and `tools:` sections of a domain.yaml to tools and source checks.

The Domain loader hands these functions the parsed YAML; every problem is a ConfigError naming the key
(`sources.metrics.url`, `tools.error_rate.query`), which the loader prefixes with the file name.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evigate.errors import ConfigError, EvigateError
from evigate.redaction import redact_secrets
from evigate.tools.base import Tool
from evigate.tools.connectors.base import SourceCheck, SourceConfig, ToolConfig


def _connectors() -> dict[str, Any]:
    from evigate.tools.connectors import CONNECTORS

    return CONNECTORS


def _problems(where: str, error: ValidationError) -> str:
    parts = []
    for item in error.errors():
        message = item["msg"].removeprefix("Value error, ")
        location = ".".join(str(part) for part in item["loc"])
        parts.append(f"{where}.{location}: {message}" if location else f"{where}: {message}")
    return "; ".join(parts)


def parse_sources(raw: Mapping[str, Any] | None) -> dict[str, SourceConfig]:
    """`sources:` → {name: the connector's Source model}. ConfigError naming `sources.<name>.<key>`."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ConfigError("sources: expected a mapping of source name to settings")
    connectors = _connectors()
    parsed: dict[str, SourceConfig] = {}
    for name, settings in raw.items():
        where = f"sources.{name}"
        if not isinstance(settings, Mapping):
            raise ConfigError(f"{where}: expected a mapping with a `kind`")
        kind = settings.get("kind")
        if kind not in connectors:
            raise ConfigError(f"{where}.kind: unknown source kind {kind!r}; known kinds: {', '.join(connectors)}")
        try:
            parsed[str(name)] = connectors[kind].Source.model_validate(dict(settings))
        except ValidationError as exc:
            raise ConfigError(_problems(where, exc)) from None
    return parsed


def parse_tools(raw: Sequence[Mapping[str, Any]] | None, sources: Mapping[str, SourceConfig]) -> list[ToolConfig]:
    """`tools:` → the ToolSpec model of each tool's source kind. ConfigError naming `tools.<name>.<key>`."""
    if raw is None:
        return []
    if not isinstance(raw, Sequence) or isinstance(raw, str | bytes):
        raise ConfigError("tools: expected a list of tool declarations")
    connectors = _connectors()
    parsed: list[ToolConfig] = []
    seen: set[str] = set()
    for index, declaration in enumerate(raw):
        name = declaration.get("name", index) if isinstance(declaration, Mapping) else index
        where = f"tools.{name}"
        if not isinstance(declaration, Mapping):
            raise ConfigError(f"{where}: expected a mapping with name, description and source")
        source_name = declaration.get("source")
        if source_name not in sources:
            raise ConfigError(f"{where}.source: unknown source {source_name!r}; declared sources: "
                              f"{', '.join(sources) or '(none)'}")
        spec = connectors[sources[source_name].kind].ToolSpec
        try:
            tool = spec.model_validate(dict(declaration))
        except ValidationError as exc:
            raise ConfigError(_problems(where, exc)) from None
        if tool.name in seen:
            raise ConfigError(f"{where}.name: a tool named {tool.name!r} is declared twice")
        seen.add(tool.name)
        parsed.append(tool)
    return parsed


def build_tools(sources: Mapping[str, SourceConfig], tools: Sequence[ToolConfig], *, base_dir: Path) -> list[Tool]:
    """Every declared tool, built by its source's connector, in declaration order of the sources."""
    connectors = _connectors()
    built: list[Tool] = []
    for source_name, source in sources.items():
        mine = [tool for tool in tools if tool.source == source_name]
        built.extend(connectors[source.kind].build_tools(source_name, source, mine, base_dir=Path(base_dir)))
    return built


def check_sources(sources: Mapping[str, SourceConfig], *, base_dir: Path) -> list[SourceCheck]:
    """One SourceCheck per source; a connector that raises is reported unreachable, never propagated."""
    connectors = _connectors()
    checks = []
    for source_name, source in sources.items():
        started = time.perf_counter()
        try:
            check = connectors[source.kind].check(source_name, source, base_dir=Path(base_dir))
        except (EvigateError, OSError, ValueError) as exc:
            check = SourceCheck(source=source_name, kind=source.kind, reachable=False,
                                latency_ms=(time.perf_counter() - started) * 1000,
                                detail=f"{type(exc).__name__}: {exc}")
        # What `domain check` prints: a source URL's password or token never (a connection error names the URL).
        checks.append(check.model_copy(update={"detail": redact_secrets(check.detail)}))
    return checks
