"""A declared MCP tool whose server could not be reached when the domain loaded.

At 3 a.m. one source being down must not take every other source down with it: before this, an MCP server that
was unreachable at load stopped the whole domain from loading, so no question could be asked at all. Now each
tool declared under `tools:` for that source is registered as a `DeferredMCPTool`. Every call first asks the server
for its tools again; while it is still down the call fails and is recorded like any failed call ("MCP server …
unreachable"), which proves nothing and is never evidence. Once it answers, the real tool (its input schema, its
description) is built and used from then on. Tools the source only allows by pattern cannot be known while the
server is down and are left out, with a warning.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import ConfigDict, ValidationError

from evigate.errors import ToolError
from evigate.tools.base import ToolArgs, ToolOutput
from evigate.tools.connectors.base import ConnectorTool
from evigate.tools.formatting import one_line

logger = logging.getLogger(__name__)


class AnyArgs(ToolArgs):
    """Arguments of a tool whose schema is not known yet: checked against the real schema at call time."""

    model_config = ConfigDict(extra="allow")


class DeferredMCPTool(ConnectorTool):
    """Stands in for a declared MCP tool until its server answers; then delegates to the real `MCPTool`."""

    def __init__(self, config: Any, client: Any, reason: str, build_real: Callable[[Any, Any, Any], Any]) -> None:
        """``build_real(config, server_tool, client)`` makes the real tool once the server answers (the MCP
        connector passes its `MCPTool`; this module does not import it, so the two import one way only)."""
        description = config.description or (
            f"MCP tool {config.server_name} (its server was unreachable when evigate started; calls reconnect)")
        super().__init__(config.model_copy(update={"description": description}), AnyArgs)
        self.client = client
        self.server_name = config.server_name
        self.reason = reason
        self._build_real = build_real
        self._real: Any = None
        self._lock = threading.Lock()

    def _resolve(self) -> Any:
        with self._lock:
            if self._real is None:
                try:
                    offered = {tool.name: tool for tool in self.client.list_tools()}
                except ToolError as exc:
                    raise ToolError(f"{self.name}: the MCP server of source {self.config.source!r} is still "
                                    f"unreachable: {exc}") from None
                if self.server_name not in offered:
                    raise ToolError(f"{self.name}: the MCP server now answers but offers no tool "
                                    f"{self.server_name!r} (it offers {', '.join(sorted(offered)) or 'none'})")
                real = self._build_real(self.config, offered[self.server_name], self.client)
                real.max_output_chars = self.max_output_chars
                self._real = real
                logger.info("MCP tool %s is available again", self.name)
            return self._real

    def query(self, args: Any, now: Callable[[], datetime]) -> ToolOutput:
        real = self._resolve()
        given = args.model_dump(exclude_none=True) if hasattr(args, "model_dump") else dict(args or {})
        try:
            checked = real.Args.model_validate(given)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in error['loc']) or 'args'}: {error['msg']}"
                                 for error in exc.errors()[:5])
            raise ToolError(f"{self.name}: {one_line(problems, 300)}") from None
        return real.query(checked, now)
