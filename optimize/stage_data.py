"""The Planner's and the Executor's examples: the question bank's splits, with each stage's inputs cached.

- Planner: every question of a split (answerable and no-incident ones; see ``optimize/planner_metric.py`` for how a
  no-incident plan is scored). Input ``query``; the module's census reads the stage world (``stage_cache``).
- Executor: the answerable questions of a split (a no-incident question has no key facts to cover). Inputs
  ``query``, the ``plan`` code makes and a :class:`~evigate.optimize.stage_cache.ReplayToolbox` over the recorded
  calls of that plan, so every trial scores the same tool outputs and no tool runs twice.

``eval_limit`` caps dev and test (never train), balanced across incidents (no-incident questions as one group).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dspy

from evigate.datasets import SPLITS, dataset_digest
from evigate.datasets.questions import Question, load_questions
from evigate.optimize.agent_data import AgentData, balanced_head


def load_stage_data(agent: str, eval_limit: int | None = None, splits: Sequence[str] = SPLITS,
                    cache_dir: Any = None) -> AgentData:
    """The agent's examples per split (see the module docstring)."""
    data = AgentData()
    for split in splits:
        questions: list[Question] = load_questions(split=split)  # type: ignore[arg-type]
        if agent == "executor":
            questions = [question for question in questions if question.incident is not None]
        if split != "train":
            questions = balanced_head(questions, lambda q: q.incident or "none", eval_limit)
        if agent == "planner":
            data.splits[split] = [planner_example(question) for question in questions]
            data.cases.update({question.id: question for question in questions})
        else:
            cases = [executor_case(question, cache_dir) for question in questions]
            data.splits[split] = [executor_example(case) for case in cases]
            data.cases.update({case.case_id: case for case in cases})
        data.rows[split] = [_row(question, agent) for question in questions]
        data.digests[split] = dataset_digest(questions)  # type: ignore[arg-type]
    return data


def planner_example(question: Question) -> dspy.Example:
    """One question as a Planner example (input ``query``; ``question`` is what the metric reads)."""
    return dspy.Example(query=question.text, case_id=question.id, question=question).with_inputs("query")


def executor_case(question: Question, cache_dir: Any = None) -> Any:
    """The question with its cached Executor inputs (recorded against the stage world on a cache miss)."""
    from evigate.optimize.executor_metric import ExecutorCase
    from evigate.optimize.stage_cache import executor_inputs

    return ExecutorCase(question, executor_inputs(question.text, cache_dir))


def executor_example(case: Any) -> dspy.Example:
    """One cached question as an Executor example (inputs ``query``, ``plan``, ``toolbox``)."""
    from evigate.optimize.stage_cache import ReplayToolbox

    return dspy.Example(query=case.question.text, plan=case.inputs.plan, toolbox=ReplayToolbox(case.inputs),
                        case_id=case.case_id, case=case).with_inputs("query", "plan", "toolbox")


def _row(question: Question, agent: str) -> dict[str, Any]:
    return {"case_id": question.id, "split": question.split, "family": question.family, "locale": question.locale,
            "incident": question.incident or "", "query": question.text, "agent": agent}


def new_stage_module(agent: str) -> dspy.Module:
    """The built-in Planner (its census reading the stage world) or the built-in Executor (plan mode)."""
    if agent == "planner":
        from evigate.modules.planner import Planner
        from evigate.optimize.stage_cache import stage_world

        world = stage_world()
        return Planner(domain=world.domain, registry=world.registry, source=world.source)
    if agent == "executor":
        from evigate.modules.executor import Executor

        return Executor(mode="plan")
    raise ValueError(f"unknown stage agent {agent!r}; known: planner, executor")
