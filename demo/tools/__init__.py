"""The demo world's evidence tools: `query_logs`, `query_metrics`, `query_order` over the `world_*` tables."""

from __future__ import annotations

from evigate.demo.tools.logs import QueryLogs
from evigate.demo.tools.metrics import QueryMetrics
from evigate.demo.tools.orders import QueryOrder

__all__ = ["QueryLogs", "QueryMetrics", "QueryOrder"]
