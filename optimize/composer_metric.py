"""Scoring a Composer: a safe answer first, then coverage of what must be said, then the §19.4 expression rules.

Per-example score in [0, 1]:

* 0 when the output is unusable: ``check_composer_output`` reports a violation (the program would replace the
  answer by the deterministic renderer) or the answer contains a ``must_not_contain`` string;
* otherwise ``0.3 + 0.4 * coverage + 0.3 * expression``: ``coverage`` is the share of ``must_contain`` groups
  found (one alternative per group), ``expression`` the share of the verdict's §19.4 rules honoured.

§19.4 rules, checked on answer_summary + user_facing_answer:
PASS — no "root cause confirmed" wording unless an allowed root_cause claim exists;
LOW_CONFID — names an evidence gap; keeps hypotheses tentative when there are any; no confirmed root cause;
REJECT — says no reliable conclusion can be drawn; no root-cause statement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.datasets.fixtures import ComposerCase
from evigate.datasets.loaders import case_of
from evigate.optimize.metric_base import CaseMetric
from evigate.signatures import ComposerInput, ComposerOutput

GAP_MARKERS = ("缺口", "缺少", "尚未", "无法确认", "不能确认", "还不能", "仍需", "待确认", "需要进一步", "证据不足",
               "暂无", "未能", "gap", "missing", "not yet")
TENTATIVE_MARKERS = ("可能", "或许", "推测", "尚未证实", "未证实", "待验证", "有待", "不确定", "might", "possibly")
NO_CONCLUSION_MARKERS = ("无法基于", "无法得出可靠", "无法给出可靠", "无法生成可靠", "不能得出可靠", "无法形成可靠",
                         "暂无可靠", "无法确定", "no reliable conclusion")
ROOT_CAUSE_MARKERS = ("根因已确认", "根因是", "根本原因是", "确认根因", "根因为", "root cause is")


@dataclass(frozen=True)
class ComposerScore:
    """One Composer case scored."""

    case_id: str
    score: float
    verdict: str
    violations: tuple[str, ...] = ()
    forbidden_hits: tuple[str, ...] = ()
    missing_groups: tuple[tuple[str, ...], ...] = ()
    coverage: float = 0.0
    expression_failures: tuple[str, ...] = ()
    expression: float = 0.0
    error: str | None = None

    @property
    def clean(self) -> bool:
        return not self.violations and not self.forbidden_hits and self.error is None

    def feedback(self) -> str:
        lines = [f"Score {self.score:.2f} for a {self.verdict} answer."]
        if self.error:
            lines.append(f"No usable output: {self.error}")
        lines += [f"Unsafe (the answer would be discarded): {v}" for v in self.violations]
        lines += [f"Must not say {hit!r}: it is not allowed material." for hit in self.forbidden_hits]
        lines += [f"Missing required content, say one of: {' / '.join(group)}" for group in self.missing_groups]
        lines += [f"Expression rule broken: {rule}" for rule in self.expression_failures]
        return "\n".join(lines)


def composer_output_of(prediction: Any) -> ComposerOutput | None:
    output = getattr(prediction, "composer_output", None) if prediction is not None else None
    if isinstance(output, ComposerOutput):
        return output
    if isinstance(output, dict):
        try:
            return ComposerOutput.model_validate(output)
        except Exception:
            return None
    return None


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()


def _contains(haystack: str, needle: str) -> bool:
    return _squash(needle) in haystack


def expression_checks(composer_input: ComposerInput, text: str) -> list[tuple[str, bool]]:
    """(rule, honoured) pairs of §19.4 for the input's verdict, over the squashed answer text."""
    has_root_cause = any(claim.claim_type == "root_cause" for claim in composer_input.allowed_claims)
    says_root_cause = any(_contains(text, marker) for marker in ROOT_CAUSE_MARKERS)
    if composer_input.verdict == "PASS":
        return [("PASS: confirm a root cause only when an allowed root_cause claim exists",
                 has_root_cause or not says_root_cause)]
    if composer_input.verdict == "LOW_CONFID":
        checks = [
            ("LOW_CONFID: say the evidence still has gaps", any(_contains(text, m) for m in GAP_MARKERS)),
            ("LOW_CONFID: never state a confirmed root cause", not says_root_cause),
        ]
        if composer_input.allowed_hypotheses:
            checks.append(("LOW_CONFID: present hypotheses as possible directions, not facts",
                           any(_contains(text, m) for m in TENTATIVE_MARKERS)))
        return checks
    return [
        ("REJECT: say no reliable conclusion can be drawn from the evidence",
         any(_contains(text, m) for m in NO_CONCLUSION_MARKERS)),
        ("REJECT: no root-cause statement", not says_root_cause),
    ]


def score_composer(case: ComposerCase, prediction: Any, *, error: str | None = None) -> ComposerScore:
    """Score one Composer prediction against the case."""
    from evigate.rules import check_composer_output

    verdict = case.composer_input.verdict
    output = composer_output_of(prediction)
    if output is None:
        return ComposerScore(case.case_id, 0.0, verdict, error=error or "no ComposerOutput in the prediction")
    violations = tuple(str(v) for v in check_composer_output(case.composer_input, output))
    text = _squash(f"{output.answer_summary}\n{output.user_facing_answer}")
    forbidden = tuple(needle for needle in case.must_not_contain if _contains(text, needle))
    missing = tuple(tuple(group) for group in case.must_contain if not any(_contains(text, alt) for alt in group))
    coverage = 1 - len(missing) / len(case.must_contain) if case.must_contain else 1.0
    checks = expression_checks(case.composer_input, text)
    failures = tuple(rule for rule, ok in checks if not ok)
    expression = 1 - len(failures) / len(checks) if checks else 1.0
    usable = not violations and not forbidden
    score = 0.3 + 0.4 * coverage + 0.3 * expression if usable else 0.0
    return ComposerScore(case.case_id, score, verdict, violations, forbidden, missing, coverage, failures, expression,
                         error)


class ComposerMetric(CaseMetric):
    """DSPy metric over :func:`evigate.datasets.composer_examples`; modes as in :class:`CaseMetric`."""

    __name__ = "composer_metric"

    def __init__(self, *, feedback: bool = False, threshold: float = 0.9) -> None:
        super().__init__(feedback=feedback, threshold=threshold)

    def score_case(self, example: Any, pred: Any) -> ComposerScore:
        return score_composer(case_of(example), pred)


@dataclass
class ComposerSummary:
    """Set-level figures of scored Composer cases."""

    count: int
    mean_score: float
    clean_rate: float
    mean_coverage: float
    mean_expression: float
    by_verdict: dict[str, float] = field(default_factory=dict)
    errors: int = 0

    def metrics(self, prefix: str = "") -> dict[str, float]:
        values = {"score": self.mean_score, "clean_rate": self.clean_rate, "coverage": self.mean_coverage,
                  "expression": self.mean_expression, "examples": float(self.count), "errors": float(self.errors)}
        values.update({f"score_{verdict}": value for verdict, value in self.by_verdict.items()})
        return {f"{prefix}{key}": value for key, value in values.items()}


def summarize_composer(scores: Sequence[ComposerScore]) -> ComposerSummary:
    count = len(scores)

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    by_verdict = {}
    for verdict in ("PASS", "LOW_CONFID", "REJECT"):
        subset = [s.score for s in scores if s.verdict == verdict]
        if subset:
            by_verdict[verdict] = mean(subset)
    usable = [s for s in scores if s.error is None]
    return ComposerSummary(
        count=count,
        mean_score=mean([s.score for s in scores]),
        clean_rate=mean([float(s.clean) for s in scores]),
        mean_coverage=mean([s.coverage for s in usable]),
        mean_expression=mean([s.expression for s in usable]),
        by_verdict=by_verdict,
        errors=sum(s.error is not None for s in scores),
    )
