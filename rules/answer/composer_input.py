"""build_composer_input: the Composer's input, assembled by code from allowed material only (§19.2.1).

No raw tool output and no unfiltered Executor output reaches the Composer. Claims a ``reject_on_fail`` rule hit
are dropped from everything a user sees — not allowed, not a hypothesis, not quoted as a gap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from pydantic import ValidationError

from evigate.rules.gate.actions import flagged_items
from evigate.rules.gate.session import claim_key, iter_claims, text_of
from evigate.rules.text.instructions import addresses_model
from evigate.rules.text.normalize import fold, restates
from evigate.rules.text.phrases import EVIDENCE_ACTION, is_question
from evigate.rules.verdict.matrix import ALLOWED_VERIFICATIONS, VerdictDecision
from evigate.signatures import (
    AllowedClaim,
    AllowedHypothesis,
    ClaimType,
    ComposerAction,
    ComposerInput,
    GatekeeperResult,
    HypothesisCheck,
    RetryContext,
    VerifierOutput,
)

CLAIM_TYPES = frozenset(get_args(ClaimType))
GAP_UNSUPPORTED = "“{text}”缺少直接证据，尚未确认"
GAP_INDIRECT = "“{text}”只有间接支持，缺少直接证据"
GAP_OVERSTATED = "“{text}”的说法超出了现有证据，尚未确认"
GAP_EXTERNAL = "“{text}”涉及证据之外的信息，无法确认"
GAP_CONTRADICTED = "部分说法与工具证据相矛盾，已不予采用"
GAP_EXCLUDED = "部分说法引用的证据无法核实，已不予采用"
GAP_GENERIC = "当前证据尚不足以确认结论"
GAP_NO_OUTPUT = "本次诊断未得到可用的结构化证据，无法确认任何结论"
ACTION_REVIEW = ComposerAction(action_text="人工复核本次诊断的工具调用记录与证据", reason="自动诊断未能形成可靠结论")
ACTION_MORE_EVIDENCE = ComposerAction(
    action_text="补充与问题直接相关的工具证据后重新诊断", reason="现有证据不足以确认结论"
)
VERDICT_WORDS = {"PASS": "证据充分", "LOW_CONFID": "低置信", "REJECT": "拒绝输出结论"}
REJECTED_HYPOTHESIS = frozenset({"unsupported_hypothesis", "overstated_as_fact"})


def _hypothesis_checks(verifier_output: Any) -> dict[int, str]:
    checks = getattr(verifier_output, "hypothesis_checks", None)
    if checks is None and isinstance(verifier_output, Mapping):
        checks = verifier_output.get("hypothesis_checks")
    verdicts: dict[int, str] = {}
    for item in checks if isinstance(checks, list) else []:
        try:
            check = item if isinstance(item, HypothesisCheck) else HypothesisCheck.model_validate(item)
        except ValidationError:
            continue
        # The less favourable judgement stands when one hypothesis is checked twice.
        if verdicts.get(check.hypothesis_index) not in REJECTED_HYPOTHESIS:
            verdicts[check.hypothesis_index] = check.verification
    return verdicts


def _rationale(verifier_output: Any) -> tuple[str, str | None]:
    if isinstance(verifier_output, VerifierOutput):
        return verifier_output.rationale, verifier_output.verdict
    if isinstance(verifier_output, Mapping):
        rationale = verifier_output.get("rationale")
        verdict = verifier_output.get("verdict")
        return (rationale if isinstance(rationale, str) else ""), (verdict if isinstance(verdict, str) else None)
    return "", None


def _add(items: list[str], text: str) -> None:
    text = text.strip()
    if text and fold(text) not in {fold(item) for item in items}:
        items.append(text)


def build_composer_input(
    query: str,
    normalized: Mapping[str, Any] | None,
    verifier_output: VerifierOutput | Mapping[str, Any] | None,
    decision: VerdictDecision,
    *,
    gate_result: GatekeeperResult | Mapping[str, Any] | None = None,
) -> ComposerInput:
    """The §19.2 payload: allowed claims, allowed hypotheses, gaps and actions, with the code's verdict.

    Actions, gaps and hypotheses that any ``gate_result`` error targets (an invented entity, a relayed instruction,
    a destructive command) are left out; text that addresses the model is left out even without a gate result.
    """
    verdict = decision.verdict
    flagged = flagged_items(_errors(gate_result))
    excluded = set(decision.excluded_claims)
    allowed: list[AllowedClaim] = []
    hypotheses: list[AllowedHypothesis] = []
    gaps: list[str] = []
    contradicted = dropped = False
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        text = " ".join(text_of(claim, "claim_text").split())
        verification = decision.effective_checks.get(key, "unsupported")
        if key in excluded:
            dropped = True
            continue
        if not text or is_question(text):
            continue  # a question (often the user's, copied) is neither a finding, a direction nor a gap
        if verification in ALLOWED_VERIFICATIONS and claim.get("claim_type") in CLAIM_TYPES:
            if verdict == "REJECT" and claim.get("claim_type") == "root_cause":
                continue  # §19.2.1: no root-cause conclusion under REJECT
            # What code decided, not what the Executor wrote: only a direct observation is shown as confirmed.
            allowed.append(AllowedClaim(
                claim_id=key, claim_type=claim["claim_type"], claim_text=text,
                support_level="direct" if verification == "direct_observation" else "indirect",
            ))
        elif verification == "overstated" and verdict != "REJECT":
            hypotheses.append(AllowedHypothesis(hypothesis_text=text))
        elif verification == "overstated":
            _add(gaps, GAP_OVERSTATED.format(text=text))
        elif verification == "external_unknown":
            _add(gaps, GAP_EXTERNAL.format(text=text))
        elif verification == "contradicted":
            contradicted = True
        elif verification not in ALLOWED_VERIFICATIONS:
            _add(gaps, GAP_UNSUPPORTED.format(text=text))
    if contradicted:
        _add(gaps, GAP_CONTRADICTED)
    if dropped:
        _add(gaps, GAP_EXCLUDED)
    if not isinstance(normalized, Mapping):
        _add(gaps, GAP_NO_OUTPUT)
    missing_info = normalized.get("missing_info") if isinstance(normalized, Mapping) else None
    for position, item in enumerate(missing_info if isinstance(missing_info, list) else []):
        if isinstance(item, str) and position not in flagged.get("missing_info", ()) and not addresses_model(item):
            _add(gaps, " ".join(item.split()))

    if verdict != "REJECT":
        judged = _hypothesis_checks(verifier_output)
        for index, hypothesis in enumerate(_objects(normalized, "hypotheses")):
            text = " ".join(text_of(hypothesis, "hypothesis_text").split())
            if index in flagged.get("hypotheses", ()) or addresses_model(text):
                continue
            if text and not is_question(text) and judged.get(index) not in REJECTED_HYPOTHESIS:
                needed = hypothesis.get("needed_evidence")
                needed = [item for item in needed if isinstance(item, str)] if isinstance(needed, list) else []
                hypotheses.append(AllowedHypothesis(hypothesis_text=text, needed_evidence=needed))

    actions = _actions(normalized, verdict, flagged.get("recommended_actions", set()))
    if verdict == "LOW_CONFID" and not gaps:
        _add(gaps, GAP_GENERIC)
    if verdict != "PASS" and not actions:
        actions.append(ACTION_MORE_EVIDENCE)
    if verdict == "REJECT":
        actions.append(ACTION_REVIEW)

    rationale, model_verdict = _rationale(verifier_output)
    model_verdict = decision.model_verdict or model_verdict
    if model_verdict in VERDICT_WORDS and model_verdict != verdict:
        reason = f"（{decision.summary}）" if decision.summary else ""
        code_word, model_word = VERDICT_WORDS[verdict], VERDICT_WORDS[model_verdict]
        rationale = f"系统按证据规则判定为“{code_word}”{reason}，与 Verifier 的“{model_word}”不同。{rationale}".strip()
    return ComposerInput(
        original_query=query or "", verdict=verdict, allowed_claims=allowed,
        allowed_hypotheses=[] if verdict == "REJECT" else hypotheses, missing_info=gaps,
        recommended_actions=actions, rationale=rationale,
    )


def _objects(normalized: Mapping[str, Any] | None, name: str) -> list[dict[str, Any]]:
    items = normalized.get(name) if isinstance(normalized, Mapping) else None
    return [item if isinstance(item, dict) else {} for item in items] if isinstance(items, list) else []


def _errors(gate_result: GatekeeperResult | Mapping[str, Any] | None) -> list[Any]:
    if isinstance(gate_result, GatekeeperResult):
        return list(gate_result.errors)
    errors = gate_result.get("errors") if isinstance(gate_result, Mapping) else None
    return list(errors) if isinstance(errors, list) else []


def _actions(normalized: Mapping[str, Any] | None, verdict: str, flagged: set[int]) -> list[ComposerAction]:
    """Executor actions; under REJECT only evidence-gathering or review actions (§19.2.1); none a rule flagged."""
    actions: list[ComposerAction] = []
    seen: set[str] = set()
    for index, action in enumerate(_objects(normalized, "recommended_actions")):
        text = " ".join(text_of(action, "action_text").split())
        if index in flagged or not text or fold(text) in seen or restates(text, _RETRY_INSTRUCTION):
            continue
        if addresses_model(text) or addresses_model(text_of(action, "reason")):
            continue
        if verdict == "REJECT" and not EVIDENCE_ACTION.search(fold(text)):
            continue
        seen.add(fold(text))
        actions.append(ComposerAction(action_text=text, reason=" ".join(text_of(action, "reason").split())))
    return actions


# An "action" copied from round 2's instruction to the Executor (仅补充…证据) is no step for a user.
_RETRY_INSTRUCTION = RetryContext.model_fields["instruction"].default
