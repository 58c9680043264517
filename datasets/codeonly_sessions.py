"""Real sessions of the question bank run by code alone, for the Composer set built from them.

Each question goes through the real program over a fresh demo world: the planner without a model (its census and
rules; the model predictor raises, so a round falls back to ``Planner.fallback``), an Executor that runs the plan's
tool steps and states no claim, a Verifier that checks nothing, and a Composer that raises (the renderer answers).
What the session recorded as the Composer's input (audit: self_evaluation → verifier_evaluation → composer_input) is
what a Composer sees for that question when no model found anything: its gaps, actions and verdict.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dspy

from evigate.datasets.questions import Question, load_questions
from evigate.signatures import ComposerInput, VerifierOutput


class _NoModel(dspy.Module):
    """The planner's model predictor: raising makes the round fall back to the code's plan."""

    def forward(self, **kwargs: Any) -> dspy.Prediction:
        raise RuntimeError("code-only session: no model")


class _SilentExecutor(dspy.Module):
    """Runs the plan's tool steps (so the audit holds their outputs) and claims nothing."""

    def forward(self, query: str, plan: Any, retry_context: Any = None, toolbox: Any = None) -> dspy.Prediction:
        for step in plan.steps:
            toolbox.call(step.tool, **step.args)
        return dspy.Prediction(raw_output=json.dumps({"answer_version": "executor_evidence_v2", "claims": []}))


class _SilentVerifier(dspy.Module):
    def forward(self, verifier_input: Any) -> dspy.Prediction:
        output = VerifierOutput(verdict="LOW_CONFID", claim_checks=[], hypothesis_checks=[], rationale="none")
        return dspy.Prediction(verifier_output=output)


class _FailingComposer(dspy.Module):
    def forward(self, composer_input: Any) -> dspy.Prediction:
        raise RuntimeError("code-only session: no composer")


def code_only_program(database: Path) -> Any:
    """The real program over ``database`` with every agent's model silenced (see the module docstring): what code
    alone finds and states. Also ``bench/questions_code_only.py``'s program."""
    from evigate.modules.program import DiagnosisProgram

    program = DiagnosisProgram.from_settings(database=database, executor=_SilentExecutor(),
                                             verifier=_SilentVerifier(), composer=_FailingComposer())
    program.planner.propose = _NoModel()
    return program


def codeonly_composer_inputs(questions: list[Question] | None = None) -> Iterator[tuple[Question, ComposerInput]]:
    """Each question of the bank (in bank order) with the Composer input its code-only session recorded."""
    with tempfile.TemporaryDirectory(prefix="evigate-bank-") as workdir:
        program = code_only_program(Path(workdir) / "evigate.duckdb")
        for question in load_questions() if questions is None else questions:
            program.settings.locale = question.locale
            result = program(query=question.text)
            evaluation = program.store.session(result.session_id).get("self_evaluation") or {}
            raw = (evaluation.get("verifier_evaluation") or {}).get("composer_input")
            if raw is not None:
                yield question, ComposerInput.model_validate(raw)
