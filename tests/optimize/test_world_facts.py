"""Checking a demo answer's confirmed facts against the world's ground truth (optimize/world_facts.py)."""

from __future__ import annotations

from evigate.demo.catalog import incident_by_id
from evigate.optimize.world_facts import judge_facts
from evigate.signatures.composer import AllowedClaim

OUTPUTS = ["order 123: status=FAILED error_code=ERR_TIMEOUT",
           "ERROR pay-gateway order=123 ERR_TIMEOUT upstream unionpay timeout after 5300ms (timeout=3000ms)"]
INCIDENT = incident_by_id("INC-20261128-05")


def allowed(text: str, claim_type: str = "symptom") -> AllowedClaim:
    return AllowedClaim(claim_id="claim-1", claim_type=claim_type, claim_text=text)


def test_a_stated_fact_naming_the_incident_and_shown_by_the_outputs_is_correct() -> None:
    fact = "query_order 返回：order 123: status=FAILED error_code=ERR_TIMEOUT"
    assert judge_facts(INCIDENT, [allowed(fact)], f"已确认：{fact}", OUTPUTS) == ([fact], [])


def test_a_fact_the_answer_does_not_state_counts_for_nothing() -> None:
    assert judge_facts(INCIDENT, [allowed("order 123 ERR_TIMEOUT")], "暂无已确认信息", OUTPUTS) == ([], [])


def test_an_entity_no_output_shows_or_a_foreign_root_cause_is_wrong() -> None:
    invented = "pay-gateway 超时 9000ms"
    foreign = "根因是 mysql-order 死锁 ERR_TIMEOUT"
    correct, wrong = judge_facts(INCIDENT, [allowed(invented), allowed(foreign, "root_cause")],
                                 f"{invented}。{foreign}。", [*OUTPUTS, "mysql-order ok"])
    assert correct == [] and len(wrong) == 2


def test_an_inference_is_no_confirmed_fact() -> None:
    fact = "query_order 返回：order 123: status=FAILED error_code=ERR_TIMEOUT"
    inferred = AllowedClaim(claim_id="claim-1", claim_type="symptom", claim_text=fact, support_level="indirect")
    assert judge_facts(INCIDENT, [inferred], f"已确认：{fact}", OUTPUTS) == ([], [])


def test_a_value_equal_to_the_order_number_does_not_make_a_fact_about_the_order() -> None:
    """Measured (INC-05 en): "query_metrics returned: 2026-11-28 09:46 pool_pending=123" was counted correct."""
    fact = "query_metrics returned: 2026-11-28 09:46 pool_pending=123"
    assert judge_facts(INCIDENT, [allowed(fact)], fact, [*OUTPUTS, "2026-11-28 09:46 pool_pending=123"]) == ([], [])
