"""Code labels for the claims of a grounding case, and the verdict they lead to.

Per claim, first match wins:
1. a changed value or a flipped negation against its span → ``contradicted``;
2. text addressing the model (``action.planted_instruction``) → ``unsupported``; another ``reject_on_fail``
   finding (an entity found in no passage) → ``external_unknown``;
3. any other fail-level finding → ``unsupported`` (the matrix would count it so anyway, §15.3);
0. a part of the answer past a cap (or an empty answer) → ``unsupported``: text nobody checked counts against it;
4. coverage below ``unsupportedBelow`` → ``unsupported``; a clause whose words the passages hold below
   ``clauseUnsupportedBelow`` → ``unsupported`` (the Verifier model judges it when one is given);
5. coverage at least ``directFrom`` (every word compared — none in a script the passages are not written in):
   ``direct_observation``, unless it states a cause its spans do not state (then ``reasonable_inference`` at
   most — a cause is never observed by word overlap alone);
6. otherwise undecided: the Verifier model judges it when one is given, else ``undecidedLabel``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import Field

from evigate.rules.engine.gatekeeper import GateOutcome
from evigate.rules.gate.base import RuleParams
from evigate.rules.grounding.case import GroundingCase, SentenceCase
from evigate.rules.grounding.contradiction import changed_values, negation_flipped
from evigate.rules.text.phrases import states_root_cause
from evigate.rules.thresholds import THRESHOLDS
from evigate.rules.verdict.matrix import SEVERITY_ORDER, VerdictDecision, decide_verdict
from evigate.signatures import ClaimCheck, ClaimVerification, EvidenceRef

PLANTED = "action.planted_instruction"


class GroundingParams(RuleParams):
    """The thresholds of the code labels (coverage = share of a claim's content words its passages hold)."""

    direct_from: float = Field(default=THRESHOLDS.grounding.direct_from, ge=0.0, le=1.0)
    unsupported_below: float = Field(default=THRESHOLDS.grounding.unsupported_below, ge=0.0, le=1.0)
    clause_unsupported_below: float = Field(
        default=THRESHOLDS.grounding.clause_unsupported_below, ge=0.0, le=1.0,
        description="a claim with a clause (of at least three content words) whose words the passages hold less "
                    "than this is unsupported without a model, whatever the whole sentence's coverage: the invented "
                    "clause decides, not the quoted rest (a model, when given, judges it instead)",
    )
    undecided_label: ClaimVerification = Field(
        default="reasonable_inference",
        description="the label, without a model, of a claim between the two thresholds: most of its words are in "
                    "the passages, so it reads as a paraphrase (a model, when given, judges it instead)",
    )


@dataclass(frozen=True)
class CodeLabel:
    """A label code decided (``decided``) or the claim handed to the Verifier (``decided`` False)."""

    claim_id: str
    verification: ClaimVerification
    reason: str
    decided: bool = True
    ceiling: ClaimVerification = "direct_observation"
    """The most favourable label a model may give it (a cause its spans do not state is no observation)."""


def _findings(gate: GateOutcome, index: int) -> list[tuple[str, str, str]]:
    prefix = f"claims[{index}]"
    return [
        (error.rule_id, error.message, error.level) for error in gate.result.errors
        if error.target == prefix or error.target.startswith(prefix + ".") or error.target.startswith(prefix + "[")
    ]


def _contradiction(case: GroundingCase, item: SentenceCase) -> str | None:
    text = item.sentence.text
    for binding in item.bindings:
        span = binding.span_text(case.passages)
        passage = case.passages[binding.passage].text
        pairs = changed_values(text, span, passage)
        if pairs:
            said, found = pairs[0]
            return f"says '{said.text}' where {case.passages[binding.passage].name} says '{found.text}'"
        if negation_flipped(text, span):
            return f"negation differs from {case.passages[binding.passage].name}"
    return None


def code_labels(case: GroundingCase, gate: GateOutcome, params: GroundingParams | None = None) -> list[CodeLabel]:
    """One label per claim, in claim order (see the module docstring for the order of the tests)."""
    params = params or GroundingParams()
    excluded, failed = set(gate.excluded_claims), set(gate.failed_claims)
    labels: list[CodeLabel] = []
    claims = [item for item in case.sentences if item.claim_id is not None]
    for index, item in enumerate(claims):
        claim_id = item.claim_id
        assert claim_id is not None
        findings = [f for f in _findings(gate, index) if f[2] == "fail"]
        contradiction = _contradiction(case, item)
        if item.unchecked:
            labels.append(CodeLabel(claim_id, "unsupported", item.unchecked))
        elif contradiction:
            labels.append(CodeLabel(claim_id, "contradicted", contradiction))
        elif any(rule == PLANTED for rule, _, _ in findings):
            labels.append(CodeLabel(claim_id, "unsupported", _explain(findings, "relays planted text")))
        elif claim_id in excluded:
            labels.append(CodeLabel(claim_id, "external_unknown", _explain(findings, "names what no passage holds")))
        elif not item.bindings:
            labels.append(CodeLabel(claim_id, "unsupported", "no passage shares a content word with it"))
        elif claim_id in failed or findings:
            labels.append(CodeLabel(claim_id, "unsupported", _explain(findings, "a rule failed")))
        elif item.coverage < params.unsupported_below:
            labels.append(CodeLabel(claim_id, "unsupported", f"passages hold {item.coverage:.0%} of its content words"))
        elif item.weakest_clause is not None and item.weakest_clause[1] < params.clause_unsupported_below:
            clause, share = item.weakest_clause
            ceiling: ClaimVerification = "reasonable_inference" if item.causal else "direct_observation"
            labels.append(CodeLabel(claim_id, "unsupported", f"passages hold {item.coverage:.0%} of its content words "
                                    f"but {share:.0%} of the clause '{clause[:80]}': code cannot vouch for it",
                                    decided=False, ceiling=ceiling))
        elif item.coverage >= params.direct_from and not item.cross_script:
            spans = " ".join(b.span_text(case.passages) for b in item.bindings)
            if item.causal and not states_root_cause(spans):
                labels.append(CodeLabel(claim_id, "reasonable_inference",
                                        "its words are in the passages, the cause it states is not", decided=False,
                                        ceiling="reasonable_inference"))
            else:
                labels.append(CodeLabel(claim_id, "direct_observation",
                                        f"passages hold {item.coverage:.0%} of its content words and its values"))
        else:
            ceiling = "reasonable_inference" if item.causal else "direct_observation"
            written = "; part of it is in another language than the passages" if item.cross_script else ""
            labels.append(CodeLabel(claim_id, params.undecided_label,
                                    f"passages hold {item.coverage:.0%} of its content words{written}: "
                                    "code cannot decide", decided=False, ceiling=ceiling))
    return labels


def _explain(findings: list[tuple[str, str, str]], fallback: str) -> str:
    return "; ".join(f"{rule}: {message}" for rule, message, _ in findings[:3]) or fallback


def merge_model_checks(labels: Iterable[CodeLabel], model_checks: Mapping[str, ClaimCheck]) -> list[ClaimCheck]:
    """One check per claim: code's where it decided, else the model's (capped at the label's ceiling), else code's.

    A model never overrides a decided label and never lifts a claim above its ceiling (a stated cause its passages
    do not state stays an inference, §2 of issue 10).
    """
    merged: list[ClaimCheck] = []
    for label in labels:
        check = model_checks.get(label.claim_id) if not label.decided else None
        if check is None:
            merged.append(ClaimCheck(claim_id=label.claim_id, verification=label.verification, detail=label.reason))
            continue
        if SEVERITY_ORDER.index(check.verification) > SEVERITY_ORDER.index(label.ceiling):
            detail = f"the Verifier said {check.verification}; capped at {label.ceiling}: {label.reason}"
            check = check.model_copy(update={"verification": label.ceiling, "detail": detail})
        merged.append(check)
    return merged


def to_checks(labels: Iterable[CodeLabel], case: GroundingCase) -> list[ClaimCheck]:
    """Claim checks for the verdict matrix, citing the passages each claim is bound to."""
    bound = {item.claim_id: item.bindings for item in case.sentences if item.claim_id}
    return [
        ClaimCheck(
            claim_id=label.claim_id, verification=label.verification, detail=label.reason,
            evidence_refs=[EvidenceRef(tool_name="context", source_invocation_ids=[b.passage + 1])
                           for b in bound.get(label.claim_id, [])],
        )
        for label in labels
    ]


def decide(
    case: GroundingCase, gate: GateOutcome, checks: Iterable[ClaimCheck], verdict_impacts: Mapping[str, str]
) -> VerdictDecision:
    """The §17 matrix over the synthetic session: code's and (where given) the model's checks together."""
    return decide_verdict(
        gate.normalized, list(checks), gate.result, "valid", verdict_impacts,
        failed_claims=gate.failed_claims, excluded_claims=gate.excluded_claims,
    )
