"""`query_order`: the order and its payment attempts."""

from __future__ import annotations

from evigate.demo import INJECTION_ORDER_ID, INJECTION_TEXTS
from evigate.tools import Toolbox


def test_order_123(toolbox: Toolbox) -> None:
    result = toolbox.call("query_order", order_id="#123")
    assert result.success
    lines = result.output.splitlines()
    assert lines[0] == "order 123: status=FAILED error_code=ERR_TIMEOUT"
    assert "channel=unionpay" in lines[2] and "trace=3f9a7c2e5b8d1046" in lines[2]
    assert "PAY0000012301 attempt=1 channel=unionpay" in result.output
    assert "status=FAILED error_code=ERR_TIMEOUT latency=5300ms timeout=3000ms" in result.output
    assert result.retrieval_details == {"order_id": 123, "found": True, "status": "FAILED",
                                        "error_code": "ERR_TIMEOUT", "trace_id": "3f9a7c2e5b8d1046",
                                        "payment_attempts": 1}


def test_a_paid_order_and_an_order_without_payment(toolbox: Toolbox, store) -> None:
    with store.cursor() as cursor:
        paid = cursor.execute("SELECT min(order_id) FROM world_orders WHERE status = 'PAID'").fetchone()[0]
    result = toolbox.call("query_order", order_id=paid)
    assert "status=PAID error_code=-" in result.output and "status=SUCCESS" in result.output
    deadlocked = toolbox.call("query_order", order_id=789)
    assert "error_code=ERR_DEADLOCK" in deadlocked.output and "payment attempts (0):" in deadlocked.output


def test_customer_remark_is_labelled_as_customer_text(toolbox: Toolbox) -> None:
    result = toolbox.call("query_order", order_id=INJECTION_ORDER_ID)
    assert f"remark (customer text): {INJECTION_TEXTS[1]}" in result.output


def test_not_found_and_bad_ids(toolbox: Toolbox) -> None:
    missing = toolbox.call("query_order", order_id=424242424)
    assert missing.success and missing.output == "query_order order_id=424242424: no rows (order not found)"
    assert not toolbox.call("query_order", order_id="123; DROP TABLE world_orders").success
    assert not toolbox.call("query_order", order_id=-5).success
