"""`get_current_datetime`: the data's clock. Auxiliary: it proves no business fact."""

from __future__ import annotations

from evigate.rules.text.times import format_second
from evigate.tools.base import Tool, ToolArgs, ToolOutput
from evigate.tools.source import DataSource


class GetCurrentDatetimeArgs(ToolArgs):
    """No arguments."""


class GetCurrentDatetime(Tool):
    """Current date and time as the data source sees it (the domain's clock)."""

    name = "get_current_datetime"
    description = (
        "Current date and time of the data source (its local time), to turn 'the last 30 minutes' into a "
        "window. Auxiliary: not evidence."
    )
    is_evidence = False
    Args = GetCurrentDatetimeArgs

    def run(self, args: GetCurrentDatetimeArgs, world: DataSource) -> ToolOutput:
        now = world.now()
        zone = f" ({world.timezone})" if world.timezone else ""
        return ToolOutput(text=f"current datetime: {format_second(now)}{zone}", retrieval_details=None)
