"""`CallToolbox`: a session's Toolbox lent to one agent call, and taken back when that call is over.

An agent call that outlives its deadline cannot be killed: its thread runs on in the background. Without this, such
a thread kept recording tool invocations into the session while the program had moved on, so evidence nobody asked
for appeared under the round, or next to a later round's calls. Once the call has ended (answered, failed, timed out
or interrupted) the lent toolbox refuses to run or record anything, and counts what it refused.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from evigate.errors import AgentError


class CallToolbox:
    """Delegates to ``toolbox`` until :meth:`close`; every other attribute (registry, invocations, …) passes through."""

    def __init__(self, toolbox: Any, agent: str, on_call: Callable[[str, Any], None] | None = None) -> None:
        """``on_call(tool_name, result)`` hears of every call that ran (progress events); it must not raise."""
        self._toolbox, self._agent, self._on_call = toolbox, agent, on_call
        # Held for the whole of a tool call, so that a call recorded before the deadline finishes before close()
        # returns, and none starts after it (local tools are millisecond DuckDB queries).
        self._lock = threading.Lock()
        self._closed_because: str | None = None
        self.refused = 0
        self._children: list[CallToolbox] = []

    @property
    def closed(self) -> bool:
        return self._closed_because is not None

    def call(self, name: str, /, **args: Any) -> Any:
        with self._lock:
            if self._closed_because is not None:
                self.refused += 1
                ended = self._closed_because
                raise AgentError(f"{self._agent} called {name!r} after its call ended ({ended}): not run, not recorded")
            result = self._toolbox.call(name, **args)
        if self._on_call is not None:
            self._on_call(name, result)
        return result

    def for_round(self, round: int) -> CallToolbox:
        """The same lent toolbox under another round; it ends with this call too."""
        if self.closed:
            raise AgentError(f"{self._agent}'s toolbox was taken back ({self._closed_because})")
        child = CallToolbox(self._toolbox.for_round(round), self._agent, self._on_call)
        self._children.append(child)
        return child

    def close(self, reason: str) -> None:
        with self._lock:
            if self._closed_because is None:
                self._closed_because = reason
        for child in self._children:
            child.close(reason)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._toolbox, name)
