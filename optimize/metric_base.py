"""The DSPy metric protocol shared by the Verifier and Composer metrics."""

from __future__ import annotations

from typing import Any, Protocol

import dspy


class ScoredCase(Protocol):
    """What a case scorer returns: a score and, for GEPA, a textual feedback."""

    score: float

    def feedback(self) -> str: ...


class CaseMetric:
    """``metric(example, pred)`` → the float score; with a ``trace`` (bootstrapping) → whether the score reaches
    ``threshold``, so only demos that were right become demos; with ``feedback=True`` (GEPA) →
    ``dspy.Prediction(score=..., feedback=...)``. Subclasses say how one case is scored."""

    __name__ = "case_metric"

    def __init__(self, *, feedback: bool = False, threshold: float = 0.75) -> None:
        self.feedback = feedback
        self.threshold = threshold

    def score_case(self, example: Any, pred: Any) -> ScoredCase:
        raise NotImplementedError

    def __call__(self, example: Any, pred: Any, trace: Any = None, pred_name: str | None = None,
                 pred_trace: Any = None) -> float | bool | dspy.Prediction:
        result = self.score_case(example, pred)
        if self.feedback:
            return dspy.Prediction(score=result.score, feedback=result.feedback())
        if trace is not None:
            return result.score >= self.threshold
        return result.score
