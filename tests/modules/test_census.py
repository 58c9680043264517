"""The Planner's error-code census: when a question names no code, the evidence names the candidates (issue 18)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest
from dspy.utils import DummyLM

from evigate.demo.domain import demo_domain
from evigate.modules import Planner
from evigate.modules.census import MIN_BURST, error_census
from evigate.modules.program import DiagnosisProgram
from evigate.store import AuditStore

JSON = dspy.JSONAdapter()


@pytest.fixture()
def planner(world_db: Path) -> Iterator[Planner]:
    domain = demo_domain()
    with AuditStore(world_db) as store:
        yield Planner(domain=domain, source=domain.data_source(store))


def _steps(plan: object) -> list[tuple[str, dict]]:
    return [(step.tool, step.args) for step in plan.steps]  # type: ignore[attr-defined]


def test_a_service_and_a_relative_time_let_the_logs_name_the_code_without_the_model(planner: Planner) -> None:
    # No LM is configured: a model call would raise, so the plan is the census's alone.
    prediction = planner(query="下午四点半以后 api-gateway 大量返回 429，原因是什么？")
    plan = prediction.plan
    assert prediction.decided_by == "evidence" and plan.skill == "retry-storm"
    assert "ERR_RATE_LIMITED" in plan.rationale
    logs = [args for tool, args in _steps(plan) if tool == "query_logs"]
    assert {"error_code": "ERR_RATE_LIMITED", "time_window": "2026-11-28 16:30/2026-11-28 17:30"}.items() <= \
        logs[0].items()


def test_without_a_named_time_the_codes_records_give_the_window(planner: Planner) -> None:
    plan = planner(query="用户说收不到短信通知，notification-service 怎么了？").plan
    assert plan.skill == "notification-failure"
    windows = {args.get("time_window") for _, args in _steps(plan)} - {None}
    assert windows, _steps(plan)
    start, _, end = next(iter(windows)).partition("/")
    assert start <= "2026-11-28 06:14" and end >= "2026-11-28 06:40"  # the outage's records, not the whole day


def test_an_order_is_a_selection_of_its_own(planner: Planner) -> None:
    plan = planner(query="订单 2024 提交失败，查一下是被谁拒掉的").plan
    assert plan.skill == "retry-storm"  # its record's code, ERR_RISK_TIMEOUT, is the retry-storm runbook's


def test_a_quiet_hours_few_failures_decide_nothing(planner: Planner) -> None:
    entities = planner.domain.extract_entities("凌晨 4 点多 payment-service 有没有异常？")
    tool = planner.registry.get("query_logs")
    owners = lambda code: [s for s in planner.skills if code in s.when_to_use]  # noqa: E731
    assert error_census(tool, planner.source, entities, ["services", "order_ids"], owners) is None
    lm = DummyLM([{"choice": {"skill": "payment-timeout", "rationale": "x"}}], adapter=JSON)
    with dspy.context(lm=lm, adapter=JSON):
        assert planner(query="凌晨 4 点多 payment-service 有没有异常？").decided_by == "model"
    assert MIN_BURST > 4  # background failures of a quiet hour stay below it


def test_a_question_naming_a_code_or_nothing_gets_no_census(planner: Planner) -> None:
    assert planner.census("ERR_TIMEOUT 是什么意思？") is None
    assert planner.census("为什么系统这么慢？") is None  # no handle, no time: a whole-day count names nothing asked


def test_no_source_or_a_failing_source_means_no_census(planner: Planner) -> None:
    assert Planner(domain=planner.domain).census("下午四点半以后 api-gateway 大量返回 429") is None
    broken = Planner(domain=planner.domain, source=object())  # its tool cannot read: the planner goes on without
    assert broken.census("下午四点半以后 api-gateway 大量返回 429") is None


def test_the_program_gives_its_planner_the_source(world_db: Path) -> None:
    program = DiagnosisProgram.from_settings(database=world_db)
    assert program.planner.source is program.source
    assert program.fallback_planner.source is program.source


@pytest.mark.parametrize(
    ("query", "skill", "window"),
    [
        # "四点半" read as written (04:30) holds no burst; read twelve hours later it holds the 429s
        ("四点半网关 429 怎么回事", "retry-storm", "2026-11-28 16:15/2026-11-28 16:45"),
        # both readings hold a burst: the one whose runbook the question's words match
        ("两点多支付超时是怎么回事？", "payment-timeout", "2026-11-28 14:00/2026-11-28 15:00"),
        ("两点多对账为什么这么慢？", "slow-sql", "2026-11-28 02:00/2026-11-28 03:00"),
        # the morning reading bursts: it stands
        ("九点多支付失败", "db-pool-exhaustion", "2026-11-28 09:00/2026-11-28 10:00"),
    ],
)
def test_the_evidence_chooses_the_reading_of_an_hour_said_without_a_part_of_the_day(
    planner: Planner, query: str, skill: str, window: str,
) -> None:
    plan = planner(query=query).plan
    assert plan.skill == skill
    assert {args.get("time_window") for _, args in _steps(plan)} - {None} == {window}


def test_a_named_code_takes_the_reading_under_which_it_has_records(planner: Planner) -> None:
    plan = planner(query="四点半 ERR_RATE_LIMITED 为什么这么多？").plan
    assert plan.skill == "retry-storm"
    assert {args.get("time_window") for _, args in _steps(plan)} - {None} == {"2026-11-28 16:15/2026-11-28 16:45"}
    # a code without records in either reading keeps the hour as written
    plan = planner(query="九点多 ERR_RATE_LIMITED 为什么这么多？").plan
    assert {args.get("time_window") for _, args in _steps(plan)} - {None} == {"2026-11-28 09:00/2026-11-28 10:00"}
