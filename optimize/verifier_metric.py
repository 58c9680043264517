"""Scoring a Verifier: claim labels against gold, and the verdict *code* reaches from the Verifier's checks.

The model's own verdict is never scored. For each case the default Gatekeeper and ``decide_verdict`` re-run over
the case's invocations and the module's ``claim_checks``; that code verdict is compared with the gold verdict.

Per-example score (what DSPy optimizers maximise), in [-1, 1]:

* ``0.5 * claim_accuracy + 0.5 * (code verdict == gold verdict)``, where a claim is right when the module's
  verification is the gold one or one of the case's acceptable alternatives, and a claim without a check
  counts as ``unsupported`` (as the verdict matrix counts it);
* ``WRONG_PASS_SCORE`` (-1) whenever code reaches PASS but gold is not PASS: letting an unproven answer through
  is the one mistake the product exists to prevent, so it costs more than getting every claim wrong.

Set-level figures: claim macro-F1 over the six verifications, verdict accuracy, wrong-PASS rate, mean score.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.datasets.fixtures import VerifierCase
from evigate.datasets.loaders import case_of
from evigate.optimize.metric_base import CaseMetric
from evigate.signatures import ClaimCheck, VerifierOutput

VERIFICATIONS: tuple[str, ...] = (
    "direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown", "contradicted",
)
VERDICTS: tuple[str, ...] = ("PASS", "LOW_CONFID", "REJECT")
WRONG_PASS_SCORE = -1.0
MISSING_CHECK = "unsupported"


@dataclass(frozen=True)
class ClaimOutcome:
    """One claim's gold label against the module's verification."""

    claim_id: str
    gold: str
    predicted: str
    correct: bool
    checked: bool
    note: str = ""


@dataclass(frozen=True)
class VerifierScore:
    """One case scored: claim outcomes, the code verdict, the score and a feedback text for GEPA."""

    case_id: str
    score: float
    claims: tuple[ClaimOutcome, ...]
    gold_verdict: str
    code_verdict: str
    model_verdict: str | None
    reasons: tuple[str, ...] = ()
    error: str | None = None
    decision: Any = field(default=None, compare=False, repr=False)

    @property
    def verdict_correct(self) -> bool:
        return self.code_verdict == self.gold_verdict

    @property
    def wrong_pass(self) -> bool:
        return self.code_verdict == "PASS" and self.gold_verdict != "PASS"

    @property
    def claim_accuracy(self) -> float:
        return sum(c.correct for c in self.claims) / len(self.claims) if self.claims else 1.0

    def feedback(self) -> str:
        """Per-claim feedback a reflective optimizer can act on."""
        lines = []
        if self.wrong_pass:
            lines.append(
                f"WRONG PASS: your checks let code decide PASS, but the evidence only supports {self.gold_verdict}. "
                "Never label a claim direct_observation or reasonable_inference unless the cited output shows it."
            )
        elif not self.verdict_correct:
            lines.append(
                f"Verdict: your checks led code to {self.code_verdict}; the correct verdict is {self.gold_verdict}."
            )
        else:
            lines.append(f"Verdict {self.code_verdict} is correct.")
        for claim in self.claims:
            if claim.correct:
                lines.append(f"{claim.claim_id}: correct ({claim.gold}).")
                continue
            said = f"you said {claim.predicted}" if claim.checked else "you gave no check (counts as unsupported)"
            why = f" Why: {claim.note}" if claim.note else ""
            lines.append(f"{claim.claim_id}: {said}; correct is {claim.gold}.{why}")
        if self.error:
            lines.append(f"The module failed: {self.error}")
        return "\n".join(lines)


class GateCache:
    """The Gatekeeper outcome per case: it depends on the case only, so it is computed once and shared."""

    def __init__(self) -> None:
        from evigate.rules import Gatekeeper

        self.gatekeeper = Gatekeeper.default()
        self._outcomes: dict[str, tuple[Any, str]] = {}
        self._lock = threading.Lock()

    def outcome(self, case: VerifierCase) -> tuple[Any, str]:
        """``(GateOutcome, parse_status)`` for the case's raw executor output and invocations."""
        with self._lock:
            cached = self._outcomes.get(case.case_id)
        if cached is not None:
            return cached
        from evigate.rules import parse_executor_output

        parsed = parse_executor_output(case.verifier_input.executor_raw_output)
        gate = self.gatekeeper.validate(
            parsed, case.invocations, case.session_id, trace_summary=case.verifier_input.tool_trace_summary
        )
        result = (gate, parsed.status)
        with self._lock:
            self._outcomes[case.case_id] = result
        return result

    def code_judgement(self, case: VerifierCase) -> Any:
        """What code confirms in the case before any model (``confirm_by_code``), as the program does."""
        from evigate.rules.verdict.confirmation import confirm_by_code

        gate, _ = self.outcome(case)
        session = self.gatekeeper.session_index(case.invocations, case.session_id,
                                                case.verifier_input.tool_trace_summary)
        return confirm_by_code(gate.normalized, session, failed_claims=gate.failed_claims)


def verifier_output_of(prediction: Any) -> VerifierOutput | None:
    """The ``VerifierOutput`` inside a module's prediction, tolerating dicts and partial objects."""
    output = getattr(prediction, "verifier_output", None) if prediction is not None else None
    if isinstance(output, VerifierOutput):
        return output
    if isinstance(output, dict):
        checks = [check for check in (_as_check(item) for item in output.get("claim_checks") or []) if check]
        verdict = output.get("verdict")
        return VerifierOutput(
            verdict=verdict if verdict in VERDICTS else "LOW_CONFID",
            claim_checks=checks,
            rationale=str(output.get("rationale") or ""),
        )
    return None


def _as_check(item: Any) -> ClaimCheck | None:
    if isinstance(item, ClaimCheck):
        return item
    try:
        return ClaimCheck.model_validate(item)
    except Exception:  # a malformed check is ignored, as decide_verdict ignores it
        return None


def score_verifier(case: VerifierCase, prediction: Any, gates: GateCache, *, error: str | None = None,
                   code_confirmation: bool = False) -> VerifierScore:
    """Score one prediction against the case: claim outcomes plus the verdict code decides from the checks.

    With ``code_confirmation`` (what the program does) the labels scored are code's for the claims it confirms and
    the module's, capped by code (``ceilings_of``), for the rest; without it (the default, what an optimizer
    teaches from) the module's own labels alone. Either way the verdict is code's, caps included.
    """
    from evigate.rules import decide_verdict
    from evigate.rules.verdict.ceilings import cap, ceilings_of

    output = verifier_output_of(prediction)
    checks = list(output.claim_checks) if output else []
    gate, parse_status = gates.outcome(case)
    code_checks = gates.code_judgement(case).confirmed if code_confirmation and parse_status == "valid" else {}
    decision = decide_verdict(
        gate.normalized,
        checks,
        gate.result,
        parse_status,
        gates.gatekeeper.verdict_impacts,
        model_verdict=output.verdict if output else None,
        failed_claims=gate.failed_claims,
        excluded_claims=gate.excluded_claims,
        code_checks=code_checks if code_confirmation else None,
    )
    # The check code judged each claim by (a claim checked twice keeps the less favourable one), before any
    # Gatekeeper override: the label scored is the module's own judgement (with code's, when code confirms).
    ceilings = ceilings_of(gate.normalized) if code_confirmation else {}
    judged = {claim_id: cap(check.verification, ceilings.get(claim_id))
              for claim_id, check in decision.claim_checks.items()}
    outcomes = []
    for claim_id, gold in case.gold_labels.items():
        predicted = judged.get(claim_id, MISSING_CHECK)
        outcomes.append(
            ClaimOutcome(
                claim_id=claim_id,
                gold=gold,
                predicted=predicted,
                correct=case.accepts(claim_id, predicted),
                checked=claim_id in judged,
                note=case.notes.get(claim_id, ""),
            )
        )
    code_verdict = str(decision.verdict)
    verdict_ok = code_verdict == case.gold_verdict
    claim_accuracy = sum(o.correct for o in outcomes) / len(outcomes) if outcomes else 1.0
    wrong_pass = code_verdict == "PASS" and case.gold_verdict != "PASS"
    score = WRONG_PASS_SCORE if wrong_pass else 0.5 * claim_accuracy + 0.5 * float(verdict_ok)
    return VerifierScore(
        case_id=case.case_id,
        score=score,
        claims=tuple(outcomes),
        gold_verdict=case.gold_verdict,
        code_verdict=code_verdict,
        model_verdict=output.verdict if output else None,
        reasons=tuple(str(reason) for reason in getattr(decision, "reasons", ()) or ()),
        error=error,
        decision=decision,
    )


class VerifierMetric(CaseMetric):
    """DSPy metric over examples from :func:`evigate.datasets.verifier_examples`; modes as in :class:`CaseMetric`.

    It scores the verdict code decides (decide_verdict over the module's claim checks), never the model's own.
    """

    __name__ = "verifier_metric"

    def __init__(self, *, feedback: bool = False, threshold: float = 0.75, gates: GateCache | None = None) -> None:
        super().__init__(feedback=feedback, threshold=threshold)
        self.gates = gates or GateCache()

    def score_case(self, example: Any, pred: Any) -> VerifierScore:
        return score_verifier(case_of(example), pred, self.gates)


@dataclass
class VerifierSummary:
    """Set-level figures of a list of scored cases."""

    count: int
    mean_score: float
    claim_macro_f1: float
    claim_accuracy: float
    verdict_accuracy: float
    wrong_pass_count: int
    per_class_f1: dict[str, float] = field(default_factory=dict)
    verdict_confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    errors: int = 0

    @property
    def wrong_pass_rate(self) -> float:
        return self.wrong_pass_count / self.count if self.count else 0.0

    def metrics(self, prefix: str = "") -> dict[str, float]:
        """Flat numeric metrics for MLflow."""
        values = {
            "score": self.mean_score, "claim_macro_f1": self.claim_macro_f1, "claim_accuracy": self.claim_accuracy,
            "verdict_accuracy": self.verdict_accuracy, "wrong_pass_rate": self.wrong_pass_rate,
            "wrong_pass_count": float(self.wrong_pass_count), "examples": float(self.count),
            "errors": float(self.errors),
        }
        values.update({f"f1_{label}": value for label, value in self.per_class_f1.items()})
        return {f"{prefix}{key}": value for key, value in values.items()}


def summarize_verifier(scores: Sequence[VerifierScore]) -> VerifierSummary:
    """Macro-F1 over claims (accepted alternatives count as the gold label), verdict accuracy, wrong PASSes."""
    pairs = [(c.gold, c.gold if c.correct else c.predicted) for s in scores for c in s.claims]
    per_class = macro_f1_by_class(pairs)
    confusion = {gold: dict.fromkeys(VERDICTS, 0) for gold in VERDICTS}
    for score in scores:
        confusion[score.gold_verdict][score.code_verdict] += 1
    count = len(scores)
    return VerifierSummary(
        count=count,
        mean_score=sum(s.score for s in scores) / count if count else 0.0,
        claim_macro_f1=sum(per_class.values()) / len(per_class) if per_class else 0.0,
        claim_accuracy=sum(g == p for g, p in pairs) / len(pairs) if pairs else 0.0,
        verdict_accuracy=sum(s.verdict_correct for s in scores) / count if count else 0.0,
        wrong_pass_count=sum(s.wrong_pass for s in scores),
        per_class_f1=per_class,
        verdict_confusion=confusion,
        errors=sum(s.error is not None for s in scores),
    )


def macro_f1_by_class(pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
    """F1 per label over (gold, predicted) pairs, for every label that occurs as gold or prediction."""
    pairs = list(pairs)
    true_pos: Counter[str] = Counter()
    gold_count: Counter[str] = Counter()
    pred_count: Counter[str] = Counter()
    for gold, predicted in pairs:
        gold_count[gold] += 1
        pred_count[predicted] += 1
        if gold == predicted:
            true_pos[gold] += 1
    labels = [label for label in VERIFICATIONS if gold_count[label] or pred_count[label]]
    scores = {}
    for label in labels:
        denominator = gold_count[label] + pred_count[label]
        scores[label] = 2 * true_pos[label] / denominator if denominator else 0.0
    return scores
