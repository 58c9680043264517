"""Evidence tools over a data source, and the recorded, session-bound `Toolbox`.

Generic built-ins (`default_registry()`): `lookup_knowledge` (evidence) and `get_current_datetime` (auxiliary); a
domain adds its evidence tools (`Domain.build_registry()`; the demo world's are `query_logs`, `query_metrics`,
`query_order`, in evigate.demo), and `evigate.tools.connectors` builds tools from domain.yaml sources.
Every `Toolbox.call` is recorded as a `tool_invocation` row — failures
included — and returns a `ToolResult` whose `invocation_id` evidence bindings cite::

    from evigate.store import AuditStore
    from evigate.tools import Toolbox

    from evigate.domain import load_domain

    store, domain = AuditStore("evigate.duckdb"), load_domain("demo")
    toolbox = Toolbox(store, "s-1", registry=domain.build_registry(), source=domain.data_source(store))
    result = toolbox.call("query_logs", order_id=123, limit=20)
    result.invocation_id, result.success, result.output

Your own tool: subclass `Tool`, give it a name, a description the model can choose by, an `Args` model, and
`run(args, world)` returning `ToolOutput`. `world` is the `DataSource`: `world.cursor()` reaches any table of the
same DuckDB file (always use parameters), `world.knowledge` the knowledge base, `world.now()` the clock::

    from pydantic import Field
    from evigate.tools import Tool, ToolArgs, ToolOutput, Toolbox, default_registry

    class RefundArgs(ToolArgs):
        user_id: int = Field(ge=0, description="user id, e.g. 42")

    class QueryRefunds(Tool):
        name = "query_refunds"
        description = "Refunds of one user: count and total amount."
        Args = RefundArgs

        def run(self, args, world):
            with world.cursor() as cursor:
                count, total = cursor.execute(
                    "SELECT count(*), coalesce(sum(amount), 0) FROM world_orders "
                    "WHERE user_id = ? AND status = 'REFUNDED'", [args.user_id]).fetchone()
            return ToolOutput(text=f"user {args.user_id}: {count} refunds, total {total} CNY",
                              retrieval_details={"count": count})

    registry = default_registry()
    registry.register(QueryRefunds())
    toolbox = Toolbox(store, "s-1", registry=registry)
    toolbox.call("query_refunds", user_id=42)
"""

from __future__ import annotations

from evigate.tools.base import Tool, ToolArgs, ToolOutput, ToolRegistry
from evigate.tools.builtins import default_registry
from evigate.tools.clock import GetCurrentDatetime
from evigate.tools.knowledge import LookupKnowledge
from evigate.tools.retrieval import KnowledgeBase, load_knowledge_base, tokenize
from evigate.tools.source import DataSource
from evigate.tools.toolbox import InvocationRecorder, Toolbox, ToolResult

__all__ = [
    "DataSource", "GetCurrentDatetime", "InvocationRecorder", "KnowledgeBase", "LookupKnowledge", "Tool", "ToolArgs",
    "ToolOutput", "ToolRegistry", "ToolResult", "Toolbox",
    "default_registry", "load_knowledge_base", "tokenize",
]
