"""The connector contract: how a domain's data sources become evidence tools.

A Domain's `domain.yaml` declares named *sources* (a Prometheus server, a folder of log files, a PostgreSQL
database, a knowledge folder, an MCP server) and *tools* over them. Each source `kind` has one `Connector`,
which parses the source's settings (`Source`), the settings of each tool over it (`ToolSpec`), builds evigate
`Tool` instances from them (so `Toolbox.call` records each call as a `tool_invocation` row exactly like a
built-in tool) and checks that the source answers (`evigate domain check`).

Credentials never appear in domain.yaml, the audit trail or a tool's recorded input: a source names the
environment variable holding them (`password_env: ACME_PG_PASSWORD`, `token_env: ...`) and the connector reads
it when it connects.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from evigate.errors import ConfigError, ToolError
from evigate.tools.base import TOOL_NAME, Tool, ToolArgs, ToolOutput
from evigate.tools.toolbox import DEFAULT_MAX_OUTPUT_CHARS

if TYPE_CHECKING:
    from evigate.tools.source import DataSource

DEFAULT_TIMEOUT_S = 10.0
MAX_TIMEOUT_S = 120.0
DEFAULT_STRING_CHARS = 500
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceConfig(_Strict):
    """Settings of one data source. Each connector subclasses it with `kind: Literal["<its kind>"]`."""

    kind: str
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=MAX_TIMEOUT_S,
                             description="seconds one request to this source may take before it fails")


ParamType = Literal["string", "integer", "number", "boolean"]
_PYTHON_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


class ParamSpec(_Strict):
    """One argument of a declared tool, as the model sees it in the tool's JSON schema."""

    type: ParamType = "string"
    description: str = ""
    required: bool = True
    default: str | int | float | bool | None = None
    pattern: str | None = Field(default=None, description="regular expression a string argument must match")
    enum: list[str | int | float | bool] | None = None
    max_length: int = Field(default=DEFAULT_STRING_CHARS, ge=1, le=10_000)

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {pattern!r} is not a regular expression: {exc}") from None
        return pattern

    def field(self) -> tuple[Any, Any]:
        """(annotation, FieldInfo) for `create_model`."""
        annotation: Any = _PYTHON_TYPES[self.type]
        if self.enum:
            annotation = Literal[tuple(self.enum)]
        constraints: dict[str, Any] = {"description": self.description or None}
        if self.type == "string" and not self.enum:
            constraints["max_length"] = self.max_length
            if self.pattern:
                constraints["pattern"] = self.pattern
        if self.required and self.default is None:
            return annotation, Field(..., **constraints)
        if self.default is None:
            return annotation | None, Field(default=None, **constraints)
        return annotation, Field(default=self.default, **constraints)


class ToolConfig(_Strict):
    """One evidence tool over a source. Connectors subclass it with their kind-specific fields."""

    name: str = Field(pattern=TOOL_NAME.pattern)
    description: str = Field(min_length=1, description="what the model reads to choose this tool")
    source: str = Field(min_length=1, description="name of the source (a key of `sources`) the tool reads")
    is_evidence: bool = True
    params: dict[str, ParamSpec] = Field(default_factory=dict, description="the arguments the model passes")

    @field_validator("params")
    @classmethod
    def _param_names(cls, params: dict[str, ParamSpec]) -> dict[str, ParamSpec]:
        for name in params:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name):
                raise ValueError(f"parameter name {name!r} must be lower_snake_case")
        return params

    def args_model(self) -> type[ToolArgs]:
        """The pydantic model validating this tool's arguments, built from `params`."""
        fields = {name: spec.field() for name, spec in self.params.items()}
        model_name = "".join(part.title() for part in self.name.split("_")) + "Args"
        return create_model(model_name, __base__=ToolArgs, **fields)


class SourceCheck(_Strict):
    """What `evigate domain check` prints for one source."""

    source: str
    kind: str
    reachable: bool
    seen: int | None = Field(default=None, description="rows, series, files, documents or tools the check saw")
    latency_ms: float | None = None
    detail: str = ""

    @classmethod
    def timed(cls, started: float, source: str, kind: str, *, reachable: bool, detail: str,
              seen: int | None = None) -> SourceCheck:
        """A result whose latency runs from `started` (a `time.perf_counter()` reading) to now."""
        return cls(source=source, kind=kind, reachable=reachable, seen=seen, detail=detail,
                   latency_ms=(time.perf_counter() - started) * 1000)


@runtime_checkable
class Connector(Protocol):
    """Builds evidence tools for one source kind, and checks a source of that kind answers."""

    kind: str
    Source: type[SourceConfig]
    ToolSpec: type[ToolConfig]

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        """Tools for `tools` (instances of `ToolSpec`) over `source` (an instance of `Source`).

        Raises ConfigError naming the tool for a declaration the source cannot serve (a writing SQL query, a
        PromQL template with an undeclared variable, a file that does not exist).
        """
        ...

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        """Connect to the source once and report; never raises for an unreachable source."""
        ...


class ConnectorTool(Tool):
    """A tool whose name, description, evidence flag and arguments come from a `ToolConfig` declaration.

    `run(args, world)` ignores `world` (connector tools read their own source) and calls `query(args)`.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS

    def __init__(self, config: ToolConfig, args_model: type[BaseModel] | None = None) -> None:
        self.config = config
        self.name = config.name  # type: ignore[misc]  # per-instance: one class serves many declared tools
        self.description = config.description  # type: ignore[misc]
        self.is_evidence = config.is_evidence  # type: ignore[misc]
        self.Args = args_model or config.args_model()  # type: ignore[misc]

    def run(self, args: Any, world: DataSource | None = None) -> ToolOutput:
        """`query` under the domain's clock; the details name the source, so the audit shows what was read."""
        output = self.query(args, data_clock(world))
        details = output.retrieval_details
        if details is None or isinstance(details, dict):
            output.retrieval_details = {"source": self.config.source, **(details or {})}
        return output

    def query(self, args: Any, now: Callable[[], datetime]) -> ToolOutput:  # pragma: no cover - overridden
        """Run the call; `now` is the domain's clock (a frozen data set's `now`, else real time), UTC-aware."""
        raise NotImplementedError


def data_clock(world: Any) -> Callable[[], datetime]:
    """The data's clock as UTC-aware datetimes: `world.now()` when the domain freezes time, else real UTC time.

    `DataSource.now()` is naive; a naive value within a few seconds of the local wall clock is the real clock
    (read as local time), anything else is a domain's frozen `now`, which connector data states in UTC.
    """
    now = getattr(world, "now", None)
    if not callable(now):
        return lambda: datetime.now(UTC)

    def aware() -> datetime:
        moment = now()
        if moment.tzinfo is not None:
            return moment.astimezone(UTC)
        if abs((moment - datetime.now()).total_seconds()) < 5:
            return datetime.now(UTC)
        return moment.replace(tzinfo=UTC)

    return aware


def secret_from_env(variable: str | None, *, what: str) -> str | None:
    """The credential in environment variable `variable` (None when no variable is configured).

    Raises ToolError when the variable is configured but unset: the call fails and is recorded, naming the
    variable, never its value.
    """
    if not variable:
        return None
    value = os.environ.get(variable)
    if value is None:
        raise ToolError(f"{what}: environment variable {variable} is not set")
    return value


def env_name(value: str | None) -> str | None:
    """Validator body for `*_env` fields: an environment variable *name*, never a secret value."""
    if value is not None and not ENV_NAME.match(value):
        raise ValueError(f"{value!r} is not an environment variable name (credentials go in the environment)")
    return value


def resolve_path(base_dir: Path, path: str) -> Path:
    """A path from domain.yaml: relative ones are relative to the domain directory."""
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() else (base_dir / candidate)


def inside(base_dir: Path, path: str | os.PathLike[str]) -> bool:
    """Whether `path`, with `..` and symlinks resolved, is the domain directory or under it."""
    base = os.path.realpath(base_dir)
    real = os.path.realpath(path)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _fixed_part(path: Path) -> Path:
    """The leading components of a glob pattern that hold no wildcard (the folder a glob can reach)."""
    parts = []
    for part in path.parts:
        if any(char in part for char in "*?["):
            break
        parts.append(part)
    return Path(*parts) if parts else Path(path.anchor or ".")


def confined_path(base_dir: Path, path: str, *, allow_outside: bool, where: str) -> Path:
    """`resolve_path`, refusing (ConfigError naming `where`) a file or glob that reaches outside the domain
    directory — an absolute path, `..`, a symlink out — unless the source set `allow_outside_domain: true`."""
    resolved = resolve_path(base_dir, path)
    if not allow_outside and not inside(base_dir, _fixed_part(resolved)):
        raise ConfigError(f"{where}: {path!r} is outside the domain directory {base_dir}; a source reads only "
                          "files under it unless it sets `allow_outside_domain: true`")
    return resolved


class FileSourceConfig(SourceConfig):
    """A source that reads files (logs, knowledge, DuckDB over Parquet/CSV): confined to the domain directory."""

    allow_outside_domain: bool = Field(
        default=False,
        description="read files outside the domain directory (absolute paths, `..`, symlinks leading out); "
        "off by default: such a path is a configuration error",
    )


def refuse_params(tool: ToolConfig, kind: str) -> None:
    """Connectors whose arguments are fixed (logs, knowledge, MCP) reject declared `params`."""
    if tool.params:
        raise ConfigError(f"tools.{tool.name}.params: a {kind} tool's arguments are fixed by the connector; "
                          "remove `params`")
