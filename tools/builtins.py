"""The generic built-in tools every toolbox starts from: `lookup_knowledge` (evidence) and `get_current_datetime`.

Kept apart from `tools.base` so the base classes import none of their own subclasses.
"""

from __future__ import annotations

from evigate.tools.base import ToolRegistry
from evigate.tools.clock import GetCurrentDatetime
from evigate.tools.knowledge import LookupKnowledge


def default_registry() -> ToolRegistry:
    """A fresh registry of the generic built-ins (a new object each call: extend it freely). A domain's evidence
    tools come from `Domain.build_registry()`."""
    return ToolRegistry([LookupKnowledge(), GetCurrentDatetime()])
