"""MCP connector: the tools of any MCP server (stdio or streamable HTTP) as recorded evidence tools.

Only allow-listed server tools become evigate tools: each one declared under `tools:` (with its own name,
description and `is_evidence`), plus any server tool matching a pattern in the source's `allow` list. The
server's input schema becomes the tool's pydantic `Args`, so a bad call fails validation and is recorded like
any other failed call. Calls share one live session (official `mcp` SDK; see mcp_session.py), each under the
source's timeout. Credentials reach the server only through the environment (`env_from`, `token_env`).
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import logging
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, create_model, field_validator, model_validator

from evigate.errors import ConfigError, ToolError
from evigate.tools.base import TOOL_NAME, Tool, ToolArgs, ToolOutput
from evigate.tools.connectors.base import (
    ConnectorTool,
    SourceCheck,
    SourceConfig,
    ToolConfig,
    env_name,
    resolve_path,
    secret_from_env,
)
from evigate.tools.connectors.mcp_deferred import DeferredMCPTool
from evigate.tools.connectors.mcp_session import LiveSession, run_async, tool_error
from evigate.tools.formatting import one_line
from evigate.tools.toolbox import cap_output

logger = logging.getLogger(__name__)
_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool,
                               "array": list[Any], "object": dict[str, Any]}


class MCPSource(SourceConfig):
    kind: Literal["mcp"]
    transport: Literal["stdio", "http"] = "stdio"
    command: list[str] = Field(default_factory=list, description="stdio: the server command and its arguments")
    cwd: str | None = Field(default=None, description="stdio: working directory, relative to the domain")
    env: dict[str, str] = Field(default_factory=dict, description="stdio: plain (non-secret) settings for the server")
    env_from: dict[str, str] = Field(default_factory=dict,
                                     description="stdio: server variable → the variable of ours holding its value")
    url: str | None = Field(default=None, pattern=r"^https?://", description="http: the streamable-HTTP endpoint")
    token_env: str | None = Field(default=None, description="http: env var holding a bearer token")
    allow: list[str] = Field(default_factory=list, description="server tool names or glob patterns to expose")
    prefix: str = Field(default="", pattern=r"^([a-z][a-z0-9_]*)?$", description="name prefix for allowed tools")
    not_evidence: list[str] = Field(default_factory=list, description="allowed server tools that prove nothing")

    _token = field_validator("token_env")(env_name)

    @field_validator("env_from")
    @classmethod
    def _env_from(cls, mapping: dict[str, str]) -> dict[str, str]:
        for value in mapping.values():
            env_name(value)
        return mapping

    @model_validator(mode="after")
    def _transport(self) -> MCPSource:
        if self.transport == "stdio" and not self.command:
            raise ValueError("command is required for transport: stdio")
        if self.transport == "http" and not self.url:
            raise ValueError("url is required for transport: http")
        return self


class MCPToolSpec(ToolConfig):
    description: str = Field(default="", description="what the model reads (default: the server's description)")
    mcp_tool: str | None = Field(default=None, description="the server's name for the tool (default: `name`)")

    @property
    def server_name(self) -> str:
        return self.mcp_tool or self.name


class MCPClient:
    """SDK sessions over the source's transport: one live session for calls, fresh ones for checks."""

    def __init__(self, source: MCPSource, base_dir: Path) -> None:
        self.source = source
        self.base_dir = base_dir
        self.live = LiveSession(self.open, source.timeout_s)

    def _command(self) -> tuple[str, list[str]]:
        program, *args = self.source.command
        found = shutil.which(program) or shutil.which(program, path=str(Path(sys.executable).parent))
        if not found:
            raise ToolError(f"MCP server command {program!r} not found on PATH")
        return found, args

    def _stdio_env(self) -> dict[str, str]:
        from mcp.client.stdio import get_default_environment

        env = {**get_default_environment(), **self.source.env}
        for server_variable, ours in self.source.env_from.items():
            env[server_variable] = secret_from_env(ours, what=f"mcp env_from.{server_variable}") or ""
        return env

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[Any]:
        """An initialised SDK session over the source's transport."""
        from mcp import ClientSession

        if self.source.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            program, args = self._command()
            cwd = resolve_path(self.base_dir, self.source.cwd) if self.source.cwd else self.base_dir
            params = StdioServerParameters(command=program, args=args, env=self._stdio_env(), cwd=str(cwd))
            with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
                try:
                    async with stdio_client(params, errlog=errlog) as (read, write), \
                            ClientSession(read, write, read_timeout_seconds=self.source.timeout_s) as session:
                        await session.initialize()
                        yield session
                except Exception as exc:
                    errlog.seek(0)
                    tail = one_line(errlog.read()[-400:], 400)
                    raise ToolError(f"{tool_error(exc, self.source.timeout_s)}"
                                    + (f" (server stderr: {tail})" if tail else "")) from None
            return
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

        token = secret_from_env(self.source.token_env, what="mcp token_env")
        headers = {"Authorization": f"Bearer {token}"} if token else None
        async with create_mcp_http_client(headers=headers) as http, \
                streamable_http_client(str(self.source.url), http_client=http) as (read, write), \
                ClientSession(read, write, read_timeout_seconds=self.source.timeout_s) as session:
            await session.initialize()
            yield session

    @staticmethod
    async def _all_tools(session: Any) -> list[Any]:
        from mcp import types

        tools, cursor = [], None
        while True:
            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
            tools.extend(page.tools)
            cursor = getattr(page, "next_cursor", None)
            if not cursor or len(tools) > 1000:
                return tools

    def list_tools(self, *, fresh: bool = False) -> list[Any]:
        """The server's tools; `fresh` opens a session of its own (a check), else the live session is used."""
        if fresh:
            async def once() -> list[Any]:
                async with self.open() as session:
                    return await self._all_tools(session)

            return run_async(once, self.source.timeout_s)
        return self.live.run(self._all_tools)

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        async def use(session: Any) -> Any:
            return await session.call_tool(name, arguments)

        return self.live.run(use)


_CLIENTS: dict[tuple[str, str], MCPClient] = {}
_CLIENTS_LOCK = threading.Lock()


def shared_client(source: MCPSource, base_dir: Path) -> MCPClient:
    """One client (one live session, one stdio server) per source configuration, however often tools are built."""
    key = (source.model_dump_json(), str(Path(base_dir).resolve()))
    with _CLIENTS_LOCK:
        if key not in _CLIENTS:
            _CLIENTS[key] = MCPClient(source, base_dir)
        return _CLIENTS[key]


def _field_name(prop: str, taken: set[str]) -> str:
    name = re.sub(r"\W", "_", prop) or "arg"
    if name[0].isdigit() or name.startswith("_") or name in {"model_config", "model_fields"}:
        name = "arg_" + name.lstrip("_")
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _annotation(prop: dict[str, Any]) -> Any:
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [item for item in kind if item != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and isinstance(prop.get("anyOf"), list):
        options = [item for item in prop["anyOf"] if isinstance(item, dict) and item.get("type") != "null"]
        return _annotation(options[0]) if len(options) == 1 else Any
    if prop.get("enum") and all(isinstance(value, str | int | float | bool) for value in prop["enum"]):
        return Literal[tuple(prop["enum"])]
    return _JSON_TYPES.get(kind, Any) if isinstance(kind, str) else Any


def args_model_from_schema(tool_name: str, schema: dict[str, Any] | None) -> type[ToolArgs]:
    """A pydantic Args model for an MCP tool's JSON-schema input (properties, required, defaults, descriptions)."""
    schema = schema or {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or [])
    fields: dict[str, Any] = {}
    taken: set[str] = set()
    for prop_name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        annotation = _annotation(prop)
        options: dict[str, Any] = {"description": prop.get("description"), "alias": prop_name}
        if prop_name in required:
            fields[_field_name(prop_name, taken)] = (annotation, Field(..., **options))
        else:
            fields[_field_name(prop_name, taken)] = (annotation | None, Field(default=prop.get("default"), **options))
    model_name = "".join(part.title() for part in tool_name.split("_")) + "Args"
    return create_model(model_name, __base__=ToolArgs, **fields)


def result_text(result: Any) -> str:
    """The text of a CallToolResult: text items as they are, other items named, structured content as JSON."""
    parts = []
    for item in getattr(result, "content", None) or []:
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind == "resource" and getattr(item.resource, "text", None) is not None:
            parts.append(item.resource.text)
        else:
            parts.append(f"[{kind or 'content'} {getattr(item, 'mime_type', '') or ''}]".replace(" ]", "]"))
    structured = getattr(result, "structured_content", None)
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, default=str))
    return "\n".join(parts)


class MCPTool(ConnectorTool):
    def __init__(self, config: MCPToolSpec, server_tool: Any, client: MCPClient) -> None:
        description = config.description or (server_tool.description or "").strip() or f"MCP tool {config.name}"
        config = config.model_copy(update={"description": description})
        super().__init__(config, args_model_from_schema(config.name, getattr(server_tool, "input_schema", None)))
        self.server_name = config.server_name
        self.client = client

    def query(self, args: Any, now: Callable[[], datetime]) -> ToolOutput:
        arguments = args.model_dump(by_alias=True, exclude_none=True)
        result = self.client.call_tool(self.server_name, arguments)
        text = cap_output(result_text(result), self.max_output_chars)
        if getattr(result, "is_error", False):
            raise ToolError(f"{self.name}: the MCP server reported an error: {one_line(text, 500)}")
        details = {"mcp_server_tool": self.server_name, "arguments": arguments}
        if not text.strip():
            return ToolOutput(text=f"{self.name}: no rows (the MCP tool returned nothing)", retrieval_details=details)
        return ToolOutput(text=f"{self.name} (MCP {self.server_name}):\n{text}", retrieval_details=details)


def _evigate_name(prefix: str, server_name: str) -> str:
    name = prefix + re.sub(r"[^a-z0-9_]", "_", server_name.lower())
    return name if TOOL_NAME.match(name) else ("mcp_" + name)[:64]


class MCPConnector:
    kind = "mcp"
    Source = MCPSource
    ToolSpec = MCPToolSpec

    def build_tools(self, source_name: str, source: Any, tools: list[Any], *, base_dir: Path) -> list[Tool]:
        client = shared_client(source, base_dir)
        try:
            offered = {tool.name: tool for tool in client.list_tools()}
        except ToolError as exc:
            # One source down must not stop the domain: its declared tools reconnect on each call (mcp_deferred.py).
            if source.allow:
                logger.warning("sources.%s: MCP server unreachable (%s); tools allowed by pattern %s are left out "
                               "until evigate restarts", source_name, exc, source.allow)
            return [DeferredMCPTool(spec, client, str(exc), build_real=MCPTool) for spec in tools]
        built: list[Tool] = []
        declared = set()
        for spec in tools:
            if spec.server_name not in offered:
                raise ConfigError(f"tools.{spec.name}.mcp_tool: the MCP server offers no tool {spec.server_name!r}; "
                                  f"it offers {', '.join(sorted(offered)) or 'none'}")
            declared.add(spec.server_name)
            built.append(MCPTool(spec, offered[spec.server_name], client))
        for server_name, server_tool in offered.items():
            if server_name in declared or not any(fnmatch.fnmatchcase(server_name, p) for p in source.allow):
                continue
            spec = MCPToolSpec(name=_evigate_name(source.prefix, server_name), source=source_name,
                               mcp_tool=server_name, is_evidence=server_name not in source.not_evidence)
            built.append(MCPTool(spec, server_tool, client))
        return built

    def check(self, source_name: str, source: Any, *, base_dir: Path) -> SourceCheck:
        started = time.perf_counter()
        try:
            offered = [tool.name for tool in MCPClient(source, base_dir).list_tools(fresh=True)]
        except ToolError as exc:
            return SourceCheck.timed(started, source_name, self.kind, reachable=False, detail=str(exc))
        allowed = [name for name in offered if any(fnmatch.fnmatchcase(name, p) for p in source.allow)]
        return SourceCheck(source=source_name, kind=self.kind, reachable=True, seen=len(offered),
                           latency_ms=(time.perf_counter() - started) * 1000,
                           detail=f"{len(offered)} tools offered ({len(allowed)} allowed by pattern)")



