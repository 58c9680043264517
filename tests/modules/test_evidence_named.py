"""What the evidence names for a question that names no code (issue 18): the census's code is read as one of the
question's anchors, so code states the lines naming it; a window's code of another incident, or a service we hold no
records of, names nothing. Scripted agents, no model: what code alone shows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import dspy
import pytest

from evigate.demo.domain import demo_domain
from evigate.modules import Planner
from evigate.modules.planner import unknown_services
from evigate.modules.program import DiagnosisProgram
from evigate.signatures import VerifierOutput
from evigate.store import AuditStore


@pytest.fixture()
def planner(world_db: Path) -> Iterator[Planner]:
    domain = demo_domain()
    with AuditStore(world_db) as store:
        yield Planner(domain=domain, source=domain.data_source(store))


def test_the_census_code_is_what_the_evidence_named(planner: Planner) -> None:
    prediction = planner(query="settlement-service 02:20 前后发生了什么？")
    assert prediction.decided_by == "evidence"
    assert prediction.plan.evidence_named == ["SLOW_SQL"]
    assert planner.fallback("settlement-service 02:20 前后发生了什么？").evidence_named == ["SLOW_SQL"]


def test_a_neighbours_code_counts_when_its_records_name_the_question_service(planner: Planner) -> None:
    # product-service's incident is logged by order-service ("call product-service … timeout"): widened, but linked
    plan = planner(query="product-service 20:05 左右是什么情况？").plan
    assert plan.evidence_named == ["ERR_UPSTREAM_TIMEOUT"]


def test_a_windows_code_of_another_service_chooses_a_runbook_but_names_nothing(planner: Planner) -> None:
    # settlement-service holds no burst at 09:30; payment-service's pool exhaustion does, and never names it
    candidate = planner.census("settlement-service 9 点半左右怎么了？")
    assert candidate is not None and candidate.code == "ERR_DB_POOL_EXHAUSTED" and candidate.widened
    assert planner(query="settlement-service 9 点半左右怎么了？").plan.evidence_named == []


def test_a_service_we_hold_no_records_of_gets_no_census(planner: Planner) -> None:
    assert unknown_services("Why did search-service crash around 10:00?", planner.domain) == ["search-service"]
    assert unknown_services("was it a cache-miss storm at 8pm?", planner.domain) == []  # no service's shape
    assert unknown_services("payment-service 09:35 那段时间怎么了？", planner.domain) == []
    assert planner.census("Why did search-service crash around 10:00?") is None


class _Silent(dspy.Module):
    """An Executor that runs the plan and writes no claim: whatever is confirmed, code stated."""

    def forward(self, query: str, plan: object, retry_context: object = None,
                toolbox: object = None) -> dspy.Prediction:
        for step in plan.steps:  # type: ignore[attr-defined]
            toolbox.call(step.tool, **step.args)  # type: ignore[attr-defined]
        return dspy.Prediction(raw_output=json.dumps({"answer_version": "executor_evidence_v2", "claims": []}))


class _NoChecks(dspy.Module):
    def forward(self, verifier_input: object) -> dspy.Prediction:
        return dspy.Prediction(verifier_output=VerifierOutput(verdict="LOW_CONFID", claim_checks=[],
                                                              hypothesis_checks=[], rationale="none"))


class _Renderer(dspy.Module):
    def forward(self, composer_input: object) -> dspy.Prediction:
        raise RuntimeError("no composer: the fixed template shows what was allowed")


class _NoModel(dspy.Module):
    def forward(self, **_: object) -> dspy.Prediction:
        raise RuntimeError("no planner model")


@pytest.fixture()
def program(tmp_path: Path) -> Iterator[DiagnosisProgram]:
    built = DiagnosisProgram.from_settings(database=tmp_path / "e.duckdb", executor=_Silent(), verifier=_NoChecks(),
                                           composer=_Renderer())
    built.planner.propose = _NoModel()
    yield built
    built.store.close()


def _confirmed(answer: str) -> str:
    return answer.split("已确认", 1)[-1] if "已确认" in answer else answer.split("Based on", 1)[-1]


def test_asked_by_service_and_time_code_confirms_the_incidents_line(program: DiagnosisProgram) -> None:
    result = program(query="settlement-service 02:20 前后发生了什么？")
    assert "SLOW_SQL" in _confirmed(result.answer), result.answer


@pytest.mark.parametrize("query", ["Why did search-service crash around 10:00?",
                                   "settlement-service 9 点半左右怎么了？"])
def test_another_incidents_line_is_never_confirmed(program: DiagnosisProgram, query: str) -> None:
    result = program(query=query)
    assert "ERR_DB_POOL_EXHAUSTED" not in result.answer and result.output_type != "NORMAL", result.answer


def test_what_the_domain_reads_in_the_question_is_read_as_its_anchors(planner: Planner) -> None:
    """A service by its alias and a metric by its words are the question's, though it never writes them."""
    plan = planner.fallback("商品详情的缓存命中率是什么时候掉下来的？")
    assert plan.question_read == ["product-service", "redis-cluster", "cache_hit_rate"]
    assert planner.fallback("product-service cache_hit_rate 20:05 怎么了？").question_read == []  # written already


def test_a_metric_asked_about_in_words_gets_its_breach_confirmed(program: DiagnosisProgram) -> None:
    """Measured on train (when-zh-07, code alone): the tool returned "first breach 2026-11-28 20:00
    (cache_hit_rate=17.7%)", and the answer confirmed nothing: the question named nothing code could find."""
    result = program(query="商品详情的缓存命中率是什么时候掉下来的？")
    assert "first breach 2026-11-28 20:00" in _confirmed(result.answer), result.answer
