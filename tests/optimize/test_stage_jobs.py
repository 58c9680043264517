"""``run_optimize`` and ``evaluate_agent`` for the Planner and the Executor end to end, with scripted LMs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy
from dspy.utils import DummyLM

from evigate.datasets import dataset_digest
from evigate.datasets.questions import load_questions
from evigate.optimize.data import AgentData
from evigate.optimize.evaluation import evaluate_agent, stage_row
from evigate.optimize.jobs import OptimizeConfig, run_optimize, summary_rows
from evigate.optimize.stage_data import executor_case, executor_example, planner_example
from tests.optimize.test_stage_metrics import good_output

JSON = dspy.JSONAdapter()


def _questions(split: str, count: int, answerable: bool | None = None) -> list[Any]:
    found = [q for q in load_questions(split=split)  # type: ignore[arg-type]
             if answerable is None or (q.incident is not None) == answerable]
    return [q for q in found if '"' not in q.text][:count]


def _data(agent: str, cases: dict[str, list[Any]], examples: dict[str, list[dspy.Example]]) -> AgentData:
    data = AgentData(splits=examples)
    for split, items in cases.items():
        data.rows[split] = [{"case_id": getattr(item, "case_id", getattr(item, "id", ""))} for item in items]
        questions = [getattr(item, "question", item) for item in items]
        data.digests[split] = dataset_digest(questions)
        data.cases.update({question.id: item for question, item in zip(questions, items, strict=True)})
    return data


def _forever(answer: dict[str, Any]) -> Iterator[dict[str, Any]]:
    while True:
        yield answer


def test_planner_optimizes_end_to_end_and_saves_a_program(tmp_path: Path, tracking_uri: str) -> None:
    # Questions code cannot decide (no code, no census) reach the model; the others are decided by code.
    picked = {"train": _questions("train", 2, answerable=False), "dev": _questions("dev", 3),
              "test": _questions("test", 2, answerable=False)}
    data = _data("planner", picked, {split: [planner_example(q) for q in qs] for split, qs in picked.items()})
    lm = DummyLM(_forever({"choice": {"skill": "error-code-explain", "rationale": "无事件"}}), adapter=JSON)
    config = OptimizeConfig(agent="planner", budget=2, program_dir=tmp_path / "program", tracking_uri=tracking_uri)
    result = run_optimize(config, lm=lm, data=data)
    assert result.program_path == tmp_path / "program" / "planner.json" and result.program_path.is_file()
    assert {score.case_id for score in result.baseline["dev"].scores} == {q.id for q in picked["dev"]}
    assert all(0.0 <= score.score <= 1.0 for score in result.optimized["test"].scores)
    assert {metric for _, metric, _, _ in summary_rows(result)} >= {"score", "skill_accuracy", "window"}
    assert stage_row(result.baseline["dev"].scores[0], "baseline", "dev")["decided_by"] in (
        "rule", "evidence", "model")


def test_executor_optimizes_over_cached_inputs_and_saves_a_program(tmp_path: Path, tracking_uri: str) -> None:
    picked = {split: [executor_case(q, tmp_path / "cache") for q in _questions(split, 2, answerable=True)]
              for split in ("train", "dev", "test")}
    data = _data("executor", picked, {split: [executor_example(c) for c in cs] for split, cs in picked.items()})
    answers = {case.question.text: {"executor_output": json.loads(good_output(case))}
               for cases in picked.values() for case in cases}
    config = OptimizeConfig(agent="executor", budget=2, program_dir=tmp_path / "program", tracking_uri=tracking_uri)
    result = run_optimize(config, lm=DummyLM(answers, adapter=JSON), data=data)
    assert result.program_path.is_file() and json.loads(result.program_path.read_text())["write"]["demos"]
    dev = result.baseline["dev"]
    assert dev.summary.parse_valid_rate == 1.0 and all(score.score >= 0.85 for score in dev.scores)
    assert dev.metrics()["own_share"] == 1.0


def test_an_executor_asking_an_uncached_call_scores_zero_with_the_error(tmp_path: Path) -> None:
    case = executor_case(_questions("dev", 1, answerable=True)[0], tmp_path)

    class Wanders(dspy.Module):
        def forward(self, query: str, plan: Any, toolbox: Any, retry_context: Any = None) -> dspy.Prediction:
            toolbox.call("query_logs", service="coupon-service")
            return dspy.Prediction(raw_output="{}")

    result = evaluate_agent("executor", Wanders(), [executor_example(case)])
    assert result.scores[0].score == 0.0 and result.scores[0].error
