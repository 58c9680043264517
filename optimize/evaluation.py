"""Evaluate one agent on labelled examples through ``dspy.Evaluate`` (so MLflow autologging sees it).

Every example is scored again after the run with the detailed scorer, which yields the per-claim outcomes and the
set-level summary; the score DSPy prints is not used.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import dspy

from evigate.datasets.loaders import case_of
from evigate.optimize.composer_metric import (
    ComposerMetric,
    ComposerScore,
    ComposerSummary,
    score_composer,
    summarize_composer,
)
from evigate.optimize.executor_metric import (
    ExecutorMetric,
    ExecutorScore,
    ExecutorSummary,
    score_executor,
    summarize_executor,
)
from evigate.optimize.planner_metric import PlannerMetric, PlannerScore, PlannerSummary, score_plan, summarize_planner
from evigate.optimize.verifier_metric import (
    GateCache,
    VerifierMetric,
    VerifierScore,
    VerifierSummary,
    score_verifier,
    summarize_verifier,
)

Agent = Literal["verifier", "composer", "planner", "executor"]
AGENTS: tuple[Agent, ...] = ("verifier", "composer", "planner", "executor")
OUTPUT_KEYS: dict[str, str] = {"verifier": "verifier_output", "composer": "composer_output", "planner": "plan",
                               "executor": "raw_output"}
"""The prediction field each agent's output is in (a prediction without it: the module raised)."""
Tick = Callable[[], None]


@dataclass
class EvalResult:
    """One agent evaluated on one list of examples."""

    agent: str
    label: str
    summary: VerifierSummary | ComposerSummary | PlannerSummary | ExecutorSummary
    scores: list[VerifierScore] | list[ComposerScore] | list[PlannerScore] | list[ExecutorScore]
    predictions: list[Any] = field(default_factory=list)
    seconds: float = 0.0
    model_alone: VerifierSummary | None = None
    """Verifier only: the module's own labels without code's confirmed labels and caps (``summary`` has them)."""

    def metrics(self, prefix: str = "") -> dict[str, float]:
        metrics = self.summary.metrics(prefix)
        if self.model_alone is not None:
            metrics.update(self.model_alone.metrics(f"{prefix}model_alone_"))
        return metrics


SUMMARY_KEYS: dict[str, tuple[str, ...]] = {
    "claim_macro_f1": ("score", "claim_macro_f1", "verdict_accuracy", "wrong_pass_count"),
    "clean_rate": ("score", "clean_rate", "coverage", "expression"),
    "skill_accuracy": ("score", "skill_accuracy", "services", "window", "none_correct_rate"),
    "own_share": ("score", "parse_valid_rate", "confirmed", "key_facts", "own_share"),
}
"""The metrics a printed summary shows, by the metric that tells which agent's they are."""


def summary_keys(metrics: dict[str, float]) -> tuple[str, ...]:
    """The headline metrics of one evaluation's ``metrics()`` (see :data:`SUMMARY_KEYS`)."""
    return next((keys for marker, keys in SUMMARY_KEYS.items() if marker in metrics), ("score",))


class TickingMetric:
    """Wraps a metric to report each scored example (drives a progress bar); keeps the metric's name."""

    def __init__(self, metric: Any, tick: Tick | None) -> None:
        self.metric = metric
        self.tick = tick
        self.__name__ = getattr(metric, "__name__", type(metric).__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.metric(*args, **kwargs)
        finally:
            if self.tick is not None:
                self.tick()


def metric_for(agent: str, *, feedback: bool = False, gates: GateCache | None = None) -> Any:
    """The DSPy metric of an agent."""
    if agent == "verifier":
        return VerifierMetric(feedback=feedback, gates=gates)
    if agent == "composer":
        return ComposerMetric(feedback=feedback)
    if agent == "planner":
        return PlannerMetric(feedback=feedback)
    if agent == "executor":
        return ExecutorMetric(feedback=feedback)
    raise ValueError(f"no metric for agent {agent!r}; known: {', '.join(AGENTS)}")


def evaluate_agent(agent: str, module: Any, examples: Sequence[dspy.Example], *, label: str = "dev",
                   num_threads: int = 1, tick: Tick | None = None, gates: GateCache | None = None) -> EvalResult:
    """Run ``module`` on every example with ``dspy.Evaluate`` and score the predictions in detail.

    A module that raises on an example gets an empty prediction, scored like a Verifier that checked nothing
    (every claim unsupported) or a Composer that answered nothing (score 0); errors never abort the run.
    """
    if not examples:
        raise ValueError(f"no {agent} examples to evaluate for {label!r}")
    gates = gates or (GateCache() if agent == "verifier" else None)
    metric = metric_for(agent, gates=gates)
    evaluator = dspy.Evaluate(
        devset=list(examples),
        metric=TickingMetric(metric, tick),
        num_threads=num_threads,
        display_progress=False,
        max_errors=len(examples) + 1,
        provide_traceback=False,
    )
    started = time.perf_counter()
    outcome = evaluator(module)
    seconds = time.perf_counter() - started
    scores: list[Any] = []
    alone: list[VerifierScore] = []
    predictions = []
    for example, prediction, _ in outcome.results:
        predictions.append(prediction)
        failed = OUTPUT_KEYS.get(agent, "") not in prediction
        if failed and tick is not None:
            tick()  # the metric never ran for a failed example; keep the progress bar honest
        error = "the module raised or returned no output" if failed else None
        if agent == "verifier":
            # What the program gets (code's confirmed labels and caps over the module's), and the module alone.
            scores.append(score_verifier(case_of(example), prediction, gates, error=error, code_confirmation=True))
            alone.append(score_verifier(case_of(example), prediction, gates, error=error))
        elif agent in ("planner", "executor"):
            scores.append(_score_stage(agent, metric, example, prediction, error))
        else:
            scores.append(score_composer(case_of(example), prediction, error=error))
    if agent == "verifier":
        return EvalResult(agent, label, summarize_verifier(scores), scores, predictions, seconds,
                          model_alone=summarize_verifier(alone))
    if agent == "planner":
        return EvalResult(agent, label, summarize_planner(scores), scores, predictions, seconds)
    if agent == "executor":
        return EvalResult(agent, label, summarize_executor(scores), scores, predictions, seconds)
    return EvalResult(agent, label, summarize_composer(scores), scores, predictions, seconds)


def _score_stage(agent: str, metric: Any, example: Any, prediction: Any, error: str | None) -> Any:
    """A Planner's or Executor's prediction scored in detail; a failed module scores 0 with its error."""
    if agent == "planner":
        plan = None if error else getattr(prediction, "plan", None)
        return score_plan(example.question, plan, str(getattr(prediction, "decided_by", "") or ""),
                          metric.registry, error=error)
    return score_executor(example.case, getattr(prediction, "raw_output", None), metric.gatekeeper.get(), error=error)


def per_claim_rows(result: EvalResult, cases: dict[str, Any], stage: str) -> list[dict[str, Any]]:
    """One row per claim (Verifier) or per case (the other agents) for the MLflow results table."""
    rows: list[dict[str, Any]] = []
    for score in result.scores:
        case = cases[score.case_id]
        if isinstance(score, PlannerScore | ExecutorScore):
            rows.append(stage_row(score, stage, result.label))
        elif isinstance(score, VerifierScore):
            for claim in score.claims:
                rows.append({
                    "stage": stage, "split": result.label, "case_id": score.case_id, "source": case.source,
                    "tags": ",".join(case.tags), "claim_id": claim.claim_id, "gold": claim.gold,
                    "acceptable": ",".join(case.acceptable_labels.get(claim.claim_id, [])),
                    "predicted": claim.predicted, "checked": claim.checked, "correct": claim.correct,
                    "gold_verdict": score.gold_verdict, "code_verdict": score.code_verdict,
                    "model_verdict": score.model_verdict or "", "case_score": round(score.score, 4),
                })
        else:
            rows.append({
                "stage": stage, "split": result.label, "case_id": score.case_id, "verdict": score.verdict,
                "score": round(score.score, 4), "clean": score.clean, "coverage": round(score.coverage, 4),
                "expression": round(score.expression, 4), "violations": " | ".join(score.violations),
                "forbidden_hits": " | ".join(score.forbidden_hits),
                "missing": " | ".join("/".join(group) for group in score.missing_groups),
                "expression_failures": " | ".join(score.expression_failures),
            })
    return rows


def stage_row(score: PlannerScore | ExecutorScore, stage: str, split: str) -> dict[str, Any]:
    """One Planner or Executor case for the results table: its components, what went wrong, its error."""
    row: dict[str, Any] = {"stage": stage, "split": split, "case_id": score.case_id, "score": round(score.score, 4),
                           "error": score.error or ""}
    if isinstance(score, PlannerScore):
        row.update(answerable=score.answerable, skill=score.skill, gold_skill=score.gold_skill or "",
                   decided_by=score.decided_by, skill_ok=score.skill_ok, services=round(score.services, 4),
                   window=round(score.window, 4), window_contains=score.window_contains,
                   missing_services=",".join(score.missing_services))
        return row
    row.update(parse_status=score.parse_status, own_claims=score.own_claims, final_claims=score.final_claims,
               own_share=round(score.own_share, 4), missing_keys=",".join(score.missing_keys),
               problems=" | ".join(score.problems),
               **{name: round(getattr(score, name), 4) for name in ("confirmed", "grounded", "key_facts", "clean",
                                                                      "not_rejected")})
    return row
