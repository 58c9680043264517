"""``evigate.verify``: the gate for any answer — is every sentence of it supported by the given context?

Code splits the answer into claims, binds each to the passages (each passage is one invocation of a synthetic
session), runs the Gatekeeper and labels what it can decide; with ``model`` the Verifier model judges the rest.
The verdict is the code's §17 matrix over all labels. Without a model nothing but code runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from typing import Any, Literal

from evigate.rules.grounding import Grounding, decide, ground, merge_model_checks
from evigate.rules.verdict.matrix import ALLOWED_VERIFICATIONS
from evigate.signatures import ClaimCheck, ClaimVerification, Verdict

SentenceLabel = ClaimVerification | Literal["not_a_claim"]
NOT_SUPPORTED: frozenset[str] = frozenset({"unsupported", "contradicted", "external_unknown"})
LabelSource = Literal["code", "verifier", "none"]


@dataclass(frozen=True)
class SentenceResult:
    """One sentence of the answer, its label and the evidence behind it.

    ``passage`` names the passage that supports or contradicts it and ``span`` the (start, end) offsets there;
    ``answer_span`` is where the sentence sits in the answer; ``reason`` the rule or Verifier reason; ``source``
    whether code or the Verifier model set the label.
    """

    text: str
    label: SentenceLabel
    reason: str
    source: LabelSource
    answer_span: tuple[int, int]
    passage: str | None = None
    span: tuple[int, int] | None = None
    span_text: str = ""
    coverage: float = 0.0

    @property
    def supported(self) -> bool:
        return self.label not in NOT_SUPPORTED


@dataclass(frozen=True)
class VerifyResult:
    """``supported`` is True when no sentence is unsupported, contradicted or unknown to the context."""

    supported: bool
    verdict: Verdict
    groundedness_score: float
    sentences: list[SentenceResult] = field(default_factory=list)
    model: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (what ``evigate verify --json`` prints)."""
        return asdict(self)


def verify(
    answer: str, context: Sequence[str] | Mapping[str, str], *, model: str | None = None
) -> VerifyResult:
    """Judge ``answer`` against ``context`` (passages as a list, or a mapping name → text).

    ``model=None`` runs code only (fast, deterministic). With a model string (``local/qwen2.5-coder-0.5b``,
    ``openai/gpt-4o-mini`` …) the Verifier model judges the claims code could not decide; a model that fails leaves
    them as code labelled them (unsupported), never more favourable.

    Raises ``TypeError`` when ``answer`` is not text or ``context`` is neither text, a sequence of texts nor a
    mapping name → text: a check of something other than text would say nothing. An empty answer is not supported,
    and text past a cap counts against the answer.
    """
    _check_types(answer, context)
    grounding = ground(answer, context)
    notes: list[str] = []
    model_checks: dict[str, ClaimCheck] = {}
    if model is not None and grounding.undecided:
        from evigate.verification_model import judge_undecided  # DSPy and the LM load only when a model is asked for

        model_checks, notes = judge_undecided(grounding, model)
    checks = merge_model_checks(grounding.labels, model_checks)
    decision = decide(grounding.case, grounding.gate, checks, _impacts())
    sentences = _sentences(grounding, decision.effective_checks, model_checks)
    return VerifyResult(
        supported=all(sentence.supported for sentence in sentences),
        verdict=decision.verdict,
        groundedness_score=decision.groundedness_score,
        sentences=sentences,
        model=model,
        notes=notes,
    )


def _check_types(answer: object, context: object) -> None:
    if not isinstance(answer, str):
        raise TypeError(f"verify() needs the answer as str, not {type(answer).__name__}")
    if isinstance(context, str):
        return
    if isinstance(context, Mapping):
        items = list(context.values())
    elif isinstance(context, Sequence) and not isinstance(context, bytes | bytearray):
        items = list(context)
    else:
        raise TypeError(f"verify() needs the context as passages (a list or mapping of str), not "
                        f"{type(context).__name__}")
    wrong = next((item for item in items if not isinstance(item, str)), None)
    if wrong is not None:
        raise TypeError(f"verify() needs every context passage as str, not {type(wrong).__name__}")


@lru_cache(maxsize=1)
def _impacts() -> dict[str, str]:
    from evigate.rules.engine.gatekeeper import Gatekeeper

    return dict(Gatekeeper.default().verdict_impacts)


def _sentences(
    grounding: Grounding, effective: Mapping[str, ClaimVerification], model_checks: Mapping[str, ClaimCheck]
) -> list[SentenceResult]:
    reasons = {label.claim_id: label.reason for label in grounding.labels}
    used = {label.claim_id: model_checks[label.claim_id] for label in grounding.labels
            if not label.decided and label.claim_id in model_checks}
    case = grounding.case
    results: list[SentenceResult] = []
    for item in case.sentences:
        sentence = item.sentence
        where = (sentence.start, sentence.end)
        if item.claim_id is None:
            label: SentenceLabel = "not_a_claim" if item.note.startswith("not a claim") else "unsupported"
            results.append(SentenceResult(sentence.text, label, item.note, "none", where))
            continue
        verification = effective.get(item.claim_id, "unsupported")
        check = used.get(item.claim_id)
        source: LabelSource = "verifier" if check is not None else "code"
        reason = check.detail if check is not None and check.detail else reasons.get(item.claim_id, "")
        if check is not None and verification != check.verification:
            source, reason = "code", f"{reasons.get(item.claim_id, '')} (the Verifier said {check.verification})"
        binding = item.bindings[0] if item.bindings else None
        results.append(SentenceResult(
            sentence.text, verification, reason, source, where,
            passage=case.passages[binding.passage].name if binding else None,
            span=(binding.start, binding.end) if binding else None,
            span_text=binding.span_text(case.passages) if binding else "",
            coverage=round(item.coverage, 4),
        ))
    return results


def verify_metric(
    context_field: str = "context", answer_field: str = "answer", *, model: str | None = None
) -> Callable[..., float | bool]:
    """A DSPy metric ``(example, prediction, trace=None, pred_name=None, pred_trace=None)`` for users' programs.

    The context is read from the example (or else the prediction) field ``context_field`` — a list of passages, a
    mapping, or one text — and the answer from the prediction's ``answer_field``. During evaluation it returns the
    share of claims that are supported (0.0 when the verdict is REJECT); while an optimizer bootstraps (``trace`` is
    not None) it returns whether the whole answer is supported, so only grounded demos are kept.
    """

    def metric(example: Any, prediction: Any, trace: Any = None, pred_name: Any = None, pred_trace: Any = None
               ) -> float | bool:
        context = _field(example, context_field)
        if context is None:
            context = _field(prediction, context_field)
        answer = _field(prediction, answer_field)
        result = verify(answer if isinstance(answer, str) else "", _passages(context), model=model)
        if trace is not None:
            return result.supported
        claims = [s for s in result.sentences if s.label != "not_a_claim"]
        if result.verdict == "REJECT" or not claims:
            return 0.0
        return sum(s.label in ALLOWED_VERIFICATIONS for s in claims) / len(claims)

    return metric


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(name)
    try:
        return getattr(obj, name, None)
    except Exception:  # a dspy.Example raises for unknown keys in some versions
        return None


def _passages(context: Any) -> Sequence[str] | Mapping[str, str]:
    if isinstance(context, str | Mapping):
        return context if isinstance(context, Mapping) else [context]
    if isinstance(context, Sequence):
        return [item if isinstance(item, str) else str(item) for item in context]
    return []
