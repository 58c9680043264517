"""The Planner's and the Executor's stage metrics, LM-free: good and bad plans and outputs, and their invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.datasets.questions import Question, load_questions
from evigate.demo.catalog import incident_by_id
from evigate.demo.domain import demo_registry
from evigate.optimize.executor_metric import ExecutorCase, score_executor
from evigate.optimize.planner_metric import runbooks, score_plan
from evigate.optimize.stage_cache import ReplayMiss, ReplayToolbox, executor_inputs
from evigate.rules import Gatekeeper
from evigate.signatures import Plan, PlanStep

REGISTRY = demo_registry()
INCIDENT = "INC-20261128-05"  # pay-gateway ERR_TIMEOUT 14:00-14:25, order 123
QUESTION = Question(id="q-05", text="pay-gateway 14:10 前后是什么状况？", locale="zh", incident=INCIDENT,
                    family="service-time-zh", split="dev")
QUIET = Question(id="q-none", text="Was inventory-service healthy at 22:15?", locale="en", incident=None,
                 family="none-quiet-en", split="test")
WINDOW = "2026-11-28 13:50/2026-11-28 14:30"


def _plan(skill: str, *steps: tuple[str, dict[str, Any]]) -> Plan:
    return Plan(skill=skill, steps=[PlanStep(tool=tool, args=args) for tool, args in steps])


GOOD_PLAN = _plan("payment-timeout",
                  ("query_logs", {"service": "pay-gateway", "time_window": WINDOW}),
                  ("query_metrics", {"service": "payment-service", "metric": "pool_pending", "time_window": WINDOW}),
                  ("query_logs", {"service": "order-service", "time_window": WINDOW}))


def test_the_incidents_runbooks_are_the_skills_owning_their_codes() -> None:
    assert runbooks()[INCIDENT] == "payment-timeout" and runbooks()["INC-20261128-01"] == "slow-sql"
    assert len(runbooks()) == 7


def test_a_right_plan_scores_one_and_a_wrong_skill_loses_half() -> None:
    good = score_plan(QUESTION, GOOD_PLAN, "evidence", REGISTRY)
    assert good.score == pytest.approx(1.0) and good.window_contains and not good.missing_services
    wrong = score_plan(QUESTION, _plan("slow-sql", *[(s.tool, s.args) for s in GOOD_PLAN.steps]), "model", REGISTRY)
    assert wrong.score == pytest.approx(0.5) and not wrong.skill_ok


def test_a_window_missing_the_incident_and_missing_services_cost() -> None:
    late = _plan("payment-timeout", ("query_logs", {"service": "pay-gateway", "time_window": "18:00/19:00"}))
    score = score_plan(QUESTION, late, "model", REGISTRY)
    assert score.window == 0.0 and set(score.missing_services) == {"payment-service", "order-service"}
    half = _plan("payment-timeout", ("query_logs", {"service": "pay-gateway", "time_window": "14:00/14:12:30"}))
    assert score_plan(QUESTION, half, "model", REGISTRY).window == pytest.approx(0.5)


def test_a_plan_selecting_the_anchor_order_covers_the_incident_without_a_window() -> None:
    by_order = _plan("payment-timeout", ("query_order", {"order_id": 123}))
    score = score_plan(QUESTION, by_order, "rule", REGISTRY)
    assert score.window == 1.0 and "pay-gateway" not in score.missing_services


def test_a_quiet_question_fails_only_when_code_decides_an_incident_runbook() -> None:
    assert score_plan(QUIET, _plan("inventory-deadlock"), "evidence", REGISTRY).score == 0.0
    assert score_plan(QUIET, _plan("inventory-deadlock"), "model", REGISTRY).score == 1.0
    assert score_plan(QUIET, _plan("error-code-explain"), "rule", REGISTRY).score == 1.0


def test_no_plan_scores_zero() -> None:
    assert score_plan(QUESTION, None, "", REGISTRY, error="boom").score == 0.0


@pytest.fixture(scope="module")
def case(tmp_path_factory: pytest.TempPathFactory) -> ExecutorCase:
    return ExecutorCase(QUESTION, executor_inputs(QUESTION.text, tmp_path_factory.mktemp("stage-cache")))


@pytest.fixture(scope="module")
def gatekeeper() -> Gatekeeper:
    return Gatekeeper.default()


def _claim(text: str, tool: str, ids: list[int], excerpt: str, claim_type: str = "symptom") -> dict[str, Any]:
    return {"claim_id": f"claim-{abs(hash(text)) % 1000}", "claim_type": claim_type, "claim_text": text,
            "support_level": "direct", "evidence_bindings": [
                {"source_type": "tool_trace", "tool_name": tool, "source_invocation_ids": ids,
                 "evidence_excerpt": excerpt}]}


def _output(*claims: dict[str, Any]) -> str:
    return json.dumps({"answer_version": "executor_evidence_v2", "claims": list(claims), "missing_info": []},
                      ensure_ascii=False)


def good_output(case: ExecutorCase) -> str:
    """A claim quoting a log line of the incident's service with its error code, citing its invocation."""
    incident = incident_by_id(case.question.incident)
    for inv in case.inputs.invocations:
        for line in (inv.output or inv.output_preview).splitlines()[1:]:
            if inv.success and incident.error_code in line and incident.service in line:
                return _output(_claim(line.strip(), inv.tool_name, [inv.id], line.strip()))
    raise AssertionError("the recorded outputs hold no line of the incident")


def test_a_quoted_finding_scores_high_and_a_forged_one_low(case: ExecutorCase, gatekeeper: Gatekeeper) -> None:
    good = score_executor(case, good_output(case), gatekeeper)
    assert good.parse_status == "valid" and good.confirmed == 1.0 and good.grounded == 1.0
    assert good.not_rejected == 1.0 and good.score >= 0.85 and good.own_share == 1.0
    forged = score_executor(case, _output(_claim("根因是 kafka-cluster 宕机 ERR_KAFKA_DOWN", "query_logs", [999],
                                                 "kafka down", "root_cause")), gatekeeper)
    assert forged.score < 0.3 and forged.confirmed == 0.0 and forged.grounded == 0.0 and forged.not_rejected == 0.0


def test_an_output_without_claims_or_unparsable_scores_zero(case: ExecutorCase, gatekeeper: Gatekeeper) -> None:
    assert score_executor(case, _output(), gatekeeper).score == 0.0
    assert score_executor(case, "the pool was exhausted", gatekeeper).score == 0.0
    assert score_executor(case, None, gatekeeper, error="TimeoutError").score == 0.0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_any_text_scores_in_range_and_a_parse_failure_zero(case: ExecutorCase, gatekeeper: Gatekeeper,
                                                           text: str) -> None:
    from evigate.rules import parse_executor_output

    score = score_executor(case, text, gatekeeper)
    assert 0.0 <= score.score <= 1.0
    if parse_executor_output(text).status != "valid":
        assert score.score == 0.0


@settings(max_examples=25, deadline=None)
@given(skill=st.sampled_from(["payment-timeout", "slow-sql", "nonexistent"]), start=st.integers(0, 23),
       hours=st.integers(0, 5), decided=st.sampled_from(["rule", "evidence", "model", "fallback"]),
       incident=st.sampled_from([INCIDENT, None]))
def test_plan_scores_stay_in_range(skill: str, start: int, hours: int, decided: str, incident: str | None) -> None:
    end = min(start + hours, 23)
    plan = _plan(skill, ("query_logs", {"service": "pay-gateway", "time_window": f"{start:02d}:00/{end:02d}:59"}))
    question = QUESTION if incident else QUIET
    assert 0.0 <= score_plan(question, plan, decided, REGISTRY).score <= 1.0


def test_the_replay_toolbox_returns_recorded_calls_and_refuses_others(case: ExecutorCase) -> None:
    toolbox = ReplayToolbox(case.inputs)
    step = case.inputs.plan.steps[0]
    result = toolbox.call(step.tool, **step.args)
    assert result.invocation_id == case.inputs.invocations[0].id and result.success
    with pytest.raises(ReplayMiss, match="no recorded call query_logs"):
        toolbox.call("query_logs", service="coupon-service")
    assert [inv.id for inv in toolbox.invocations()] == [inv.id for inv in case.inputs.invocations]


def test_cached_inputs_are_reused_from_disk_without_the_world(case: ExecutorCase, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import evigate.optimize.stage_cache as stage_cache

    first = executor_inputs("订单 123 为什么没有支付成功？", tmp_path)
    assert list(tmp_path.glob("*.json")) == [tmp_path / f"{first.key}.json"]
    monkeypatch.setattr(stage_cache, "_MEMORY", {})
    monkeypatch.setattr(stage_cache, "stage_world", lambda: pytest.fail("the world was built again"))
    again = executor_inputs("订单 123 为什么没有支付成功？", tmp_path)
    assert again.plan == first.plan and [c.result for c in again.calls] == [c.result for c in first.calls]


def test_every_bank_question_of_a_split_is_an_example() -> None:
    from evigate.optimize.stage_data import load_stage_data

    data = load_stage_data("planner", None, ("dev",))
    assert len(data.splits["dev"]) == len(load_questions(split="dev")) >= 30
    assert len(load_stage_data("planner", 30, ("dev",)).splits["dev"]) == 30
