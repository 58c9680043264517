"""`query_order`: one order's facts and its payment attempts."""

from __future__ import annotations

from typing import Any

import duckdb
from pydantic import Field, field_validator

from evigate.demo.tools.logs import parse_order_id
from evigate.rules.text.times import format_second
from evigate.tools.base import Tool, ToolArgs, ToolOutput
from evigate.tools.formatting import one_line
from evigate.tools.source import DataSource

ORDER_COLUMNS = ("order_id", "status", "error_code", "created_at", "updated_at", "paid_at", "amount", "currency",
                 "payment_channel", "sku_id", "quantity", "user_id", "coupon_code", "trace_id", "remark")
PAYMENT_COLUMNS = ("payment_id", "attempt", "channel", "requested_at", "finished_at", "status", "error_code",
                   "latency_ms", "timeout_ms")


class QueryOrderArgs(ToolArgs):
    order_id: int = Field(ge=0, description="order id, e.g. 123")

    @field_validator("order_id", mode="before")
    @classmethod
    def _order(cls, value: Any) -> Any:
        return parse_order_id(value)


def _show(value: Any) -> str:
    if value is None:
        return "-"
    return format_second(value) if hasattr(value, "strftime") else str(value)


class QueryOrder(Tool):
    """The order row and its payment attempts."""

    name = "query_order"
    description = (
        "Look up one order by id: status, error_code, timestamps, amount, payment channel, sku, trace_id, customer "
        "remark, and its payment attempts (latency_ms against the gateway timeout_ms)."
    )
    Args = QueryOrderArgs

    def run(self, args: QueryOrderArgs, world: DataSource) -> ToolOutput:
        with world.cursor() as cursor:
            return self._answer(args, world, cursor)

    def _answer(self, args: QueryOrderArgs, world: DataSource, cursor: duckdb.DuckDBPyConnection) -> ToolOutput:
        row = cursor.execute(f"SELECT {', '.join(ORDER_COLUMNS)} FROM world_orders WHERE order_id = ?",
                             [args.order_id]).fetchone()
        if row is None:
            return ToolOutput(text=f"query_order order_id={args.order_id}: no rows (order not found)",
                              retrieval_details={"order_id": args.order_id, "found": False})
        order = dict(zip(ORDER_COLUMNS, row, strict=True))
        payments = [dict(zip(PAYMENT_COLUMNS, found, strict=True)) for found in cursor.execute(
            f"SELECT {', '.join(PAYMENT_COLUMNS)} FROM world_payments WHERE order_id = ? ORDER BY attempt",
            [args.order_id]).fetchall()]
        lines = [
            f"order {order['order_id']}: status={order['status']} error_code={_show(order['error_code'])}",
            f"created_at={_show(order['created_at'])} updated_at={_show(order['updated_at'])} "
            f"paid_at={_show(order['paid_at'])}",
            f"amount={order['amount']} {order['currency']} channel={order['payment_channel']} sku={order['sku_id']} "
            f"qty={order['quantity']} user={order['user_id']} coupon={_show(order['coupon_code'])} "
            f"trace={order['trace_id']}",
        ]
        if order["remark"]:
            lines.append(f"remark (customer text): {one_line(order['remark'])}")
        lines.append(f"payment attempts ({len(payments)}):")
        for payment in payments:
            latency = "-" if payment["latency_ms"] is None else f"{payment['latency_ms']}ms"
            lines.append(
                f"  {payment['payment_id']} attempt={payment['attempt']} channel={payment['channel']} "
                f"requested_at={_show(payment['requested_at'])} status={payment['status']} "
                f"error_code={_show(payment['error_code'])} latency={latency} timeout={payment['timeout_ms']}ms"
            )
        details = {"order_id": args.order_id, "found": True, "status": order["status"],
                   "error_code": order["error_code"], "trace_id": order["trace_id"], "payment_attempts": len(payments)}
        return ToolOutput(text="\n".join(lines), retrieval_details=details)
