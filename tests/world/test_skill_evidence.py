"""A skill chosen for a question without an order or a code still reads the lines that tell the incident (issue 18)."""

from __future__ import annotations

from pathlib import Path

from evigate.demo import demo_toolbox, extract_query_entities, load_skills, template_values
from evigate.store import AuditStore


def _outputs(world_db: Path, skill_id: str, query: str) -> str:
    skill = next(skill for skill in load_skills() if skill.id == skill_id)
    values = template_values(extract_query_entities(query), query)
    store = AuditStore(world_db)
    session = store.start_session(query)
    toolbox = demo_toolbox(store, session)
    return "\n".join(toolbox.call(step.tool, **step.args).output for step in skill.render(values)
                     if step.tool == "query_logs")


def test_notification_failure_reads_the_providers_warnings(world_db: Path) -> None:
    # The provider's failures, the breaker and the retries are WARN lines: a level=ERROR step found none of them.
    text = _outputs(world_db, "notification-failure", "notification-service 6 点 15 分左右的情况帮我看一下")
    assert "ERR_SMS_PROVIDER" in text and "circuit breaker sms-vendor-a OPEN" in text


def test_payment_timeout_without_an_order_reads_the_gateways_warnings(world_db: Path) -> None:
    text = _outputs(world_db, "payment-timeout", "pay-gateway 14:10 前后是什么状况？")
    assert "channel unionpay p99 latency" in text
