"""The typed tool protocol and the registry the Executor's tools come from.

A tool is a class with a `name`, a `description` (what the model reads), `is_evidence` (does its output prove
business facts? auxiliary tools such as a clock do not enter the trace summary), an `Args` pydantic model that
validates the call, and `run(args, world) -> ToolOutput`.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from evigate.errors import ToolError

if TYPE_CHECKING:
    from evigate.tools.source import DataSource

TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")


class ToolOutput(BaseModel):
    """What a tool returns: quotable text and optional structured details (retrieval layers, counts, stats)."""

    text: str
    retrieval_details: dict[str, Any] | list[Any] | None = None


class ToolArgs(BaseModel):
    """Base of tool argument models: unknown argument names are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Tool(ABC):
    """One evidence (or auxiliary) tool. Subclass, set the class attributes, implement `run`."""

    name: ClassVar[str]
    description: ClassVar[str]
    is_evidence: ClassVar[bool] = True
    Args: ClassVar[type[BaseModel]] = ToolArgs

    @abstractmethod
    def run(self, args: Any, world: DataSource) -> ToolOutput:
        """Execute with validated `args` (an instance of `Args`) against the data source `world`."""

    def spec(self) -> dict[str, Any]:
        """Name, description, evidence flag and the JSON schema of the arguments, for prompts."""
        return {
            "name": self.name,
            "description": self.description,
            "is_evidence": self.is_evidence,
            "parameters": self.Args.model_json_schema(),
        }


ToolLike = TypeVar("ToolLike", bound="Tool | type[Tool]")


class ToolRegistry:
    """Tools by name, in registration order."""

    def __init__(self, tools: Iterable[Tool | type[Tool]] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: ToolLike, *, replace: bool = False) -> ToolLike:
        """Add a tool (an instance, or a class built without arguments); usable as a class decorator.

        Raises ToolError for a malformed tool or a name already taken (unless `replace=True`).
        """
        instance = tool() if isinstance(tool, type) else tool
        if not isinstance(instance, Tool):
            raise ToolError(f"{tool!r} is not an evigate Tool")
        name = getattr(instance, "name", None)
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            raise ToolError(f"tool name must match {TOOL_NAME.pattern}, got {name!r}")
        if not getattr(instance, "description", "").strip():
            raise ToolError(f"tool {name!r} needs a description: the model chooses tools by it")
        if not (isinstance(instance.Args, type) and issubclass(instance.Args, BaseModel)):
            raise ToolError(f"tool {name!r}: Args must be a pydantic model class")
        if name in self._tools and not replace:
            raise ToolError(f"a tool named {name!r} is already registered (pass replace=True to override)")
        self._tools[name] = instance
        return tool

    def get(self, name: str) -> Tool:
        """The tool with that name; ToolError listing the known names otherwise."""
        try:
            return self._tools[name]
        except (KeyError, TypeError):
            raise ToolError(f"unknown tool {name!r}; available tools: {', '.join(self._tools)}") from None

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """`Tool.spec()` of every tool, for prompts."""
        return [tool.spec() for tool in self._tools.values()]

    def copy(self) -> ToolRegistry:
        """A new registry with the same tools, to extend without touching this one."""
        return ToolRegistry(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)
