"""build_composer_input: the Composer's input, assembled by code from allowed material only (§19.2.1).

No raw tool output and no unfiltered Executor output reaches the Composer. Claims a ``reject_on_fail`` rule hit
are dropped from everything a user sees — not allowed, not a hypothesis, not quoted as a gap. Every fixed text comes
from the locale's catalogue; every text of the Executor's passes the junk checks first (issue 18), and what is left
out is returned with its reason (:func:`assemble_composer_input`) for the audit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast, get_args

from pydantic import ValidationError

from evigate.rules.answer.catalogue import LOCALES, summary, words
from evigate.rules.answer.screen import DroppedText, gate_reasons, screen
from evigate.rules.contract import (
    ACTION_TEXT,
    ACTIONS,
    HYPOTHESES,
    HYPOTHESIS_TEXT,
    MISSING_INFO,
    NEEDED_EVIDENCE,
    REASON,
    claim_key,
    claim_text,
    claim_type,
    iter_claims,
    iter_objects,
    strings_of,
    text_of,
)
from evigate.rules.gate.actions import ITEM_TARGET, flagged_items
from evigate.rules.text.instructions import addresses_model
from evigate.rules.text.normalize import fold, restates
from evigate.rules.text.phrases import EVIDENCE_ACTION, is_question
from evigate.rules.verdict.matrix import ALLOWED_VERIFICATIONS, VerdictDecision
from evigate.rules.verdict.relevance import NO_KEYS_WHY, OFF_TOPIC_WHY
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
VERDICT_KEYS = frozenset({"PASS", "LOW_CONFID", "REJECT"})
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


@dataclass
class ComposerMaterial:
    """The Composer input and every text of the Executor's that code kept out of it, with the reason."""

    composer_input: ComposerInput
    dropped: list[DroppedText] = field(default_factory=list)


def build_composer_input(
    query: str,
    normalized: Mapping[str, Any] | None,
    verifier_output: VerifierOutput | Mapping[str, Any] | None,
    decision: VerdictDecision,
    *,
    gate_result: GatekeeperResult | Mapping[str, Any] | None = None,
    locale: str = "zh",
) -> ComposerInput:
    """The §19.2 payload: allowed claims, allowed hypotheses, gaps and actions, with the code's verdict
    (:func:`assemble_composer_input` without the record of what was left out)."""
    return assemble_composer_input(query, normalized, verifier_output, decision, gate_result=gate_result,
                                   locale=locale).composer_input


def assemble_composer_input(
    query: str,
    normalized: Mapping[str, Any] | None,
    verifier_output: VerifierOutput | Mapping[str, Any] | None,
    decision: VerdictDecision,
    *,
    gate_result: GatekeeperResult | Mapping[str, Any] | None = None,
    locale: str = "zh",
) -> ComposerMaterial:
    """The §19.2 payload and what was left out of it.

    Actions, gaps and hypotheses that any ``gate_result`` error targets (an invented entity, a relayed instruction,
    junk) are left out; text that addresses the model is left out even without a gate result; so is junk that code
    can tell without the session (a repetition, filler, the question restated). A claim ``decision.off_topic``
    names is never shown as confirmed, and a hypothesis, gap or action ``decision.off_topic_items`` names is not shown
    at all. Fixed texts are ``locale``'s.
    """
    verdict, text_of_locale = decision.verdict, words(locale)
    flagged, why_flagged = _flagged(_errors(gate_result), decision)
    dropped: list[DroppedText] = []
    for (name, index), reason in sorted(why_flagged.items()):
        dropped.append(DroppedText(f"{name}[{index}]", _item_text(normalized, name, index), reason))
    allowed, hypotheses, gaps = _from_claims(query, normalized, decision, text_of_locale, dropped)
    if not isinstance(normalized, Mapping):
        _add(gaps, text_of_locale["gap_no_output"])
    missing_info = normalized.get(MISSING_INFO) if isinstance(normalized, Mapping) else None
    for position, item in enumerate(missing_info if isinstance(missing_info, list) else []):
        if not isinstance(item, str) or position in flagged.get(MISSING_INFO, ()) or addresses_model(item):
            continue
        why = screen(item, query)
        if why is None:
            _add(gaps, " ".join(item.split()))
        else:
            dropped.append(DroppedText(f"missing_info[{position}]", item, why))

    if verdict != "REJECT":
        hypotheses += _hypotheses(query, normalized, verifier_output, flagged.get(HYPOTHESES, set()), dropped)

    actions = _actions(normalized, verdict, flagged.get(ACTIONS, set()), query, dropped)
    if verdict == "LOW_CONFID" and not gaps:
        _add(gaps, text_of_locale["gap_generic"])
    if verdict != "PASS" and not actions:
        actions.append(ComposerAction(action_text=text_of_locale["action_more_evidence"],
                                      reason=text_of_locale["action_more_evidence_reason"]))
    if verdict == "REJECT":
        actions.append(ComposerAction(action_text=text_of_locale["action_review"],
                                      reason=text_of_locale["action_review_reason"]))

    composer_input = ComposerInput(
        original_query=query or "", verdict=verdict, allowed_claims=allowed,
        allowed_hypotheses=[] if verdict == "REJECT" else hypotheses, missing_info=gaps,
        recommended_actions=actions, rationale=_code_rationale(verifier_output, decision, locale),
        locale=locale if locale in LOCALES else None,
    )
    return ComposerMaterial(composer_input, dropped)


def _flagged(errors: list[Any], decision: VerdictDecision) -> tuple[dict[str, set[int]], dict[tuple[str, int], str]]:
    """The hypotheses, gaps and actions left out (field → indexes), and why: what a Gatekeeper error targets, then
    what is not about the question (issue 18: ``decision.off_topic_items``)."""
    flagged, why_flagged = flagged_items(errors), gate_reasons(errors)
    for target, why in decision.off_topic_items.items():
        match = ITEM_TARGET.match(target)
        if match is not None:
            flagged.setdefault(match.group(1), set()).add(int(match.group(2)))
            why_flagged.setdefault((match.group(1), int(match.group(2))), why)
    return flagged, why_flagged


def _code_rationale(verifier_output: VerifierOutput | Mapping[str, Any] | None, decision: VerdictDecision,
                    locale: str) -> str:
    """The Verifier's rationale, prefixed by the code's reason when the code's verdict differs from the model's."""
    text_of_locale, verdict = words(locale), decision.verdict
    rationale, model_verdict = _rationale(verifier_output)
    model_verdict = decision.model_verdict or model_verdict
    if model_verdict in VERDICT_KEYS and model_verdict != verdict:
        code = decision.rows[0].code if decision.rows else None
        said = summary(code, decision.summary, locale) if decision.summary else ""
        reason = text_of_locale["verdict_reason"].format(summary=said) if said else ""
        differs = text_of_locale["verdict_differs"].format(
            code=text_of_locale[f"verdict_{verdict}"], reason=reason, model=text_of_locale[f"verdict_{model_verdict}"])
        rationale = f"{differs}{' ' if locale == 'en' and rationale else ''}{rationale}".strip()
    return rationale


def _from_claims(
    query: str, normalized: Mapping[str, Any] | None, decision: VerdictDecision, catalogue: dict[str, str],
    dropped: list[DroppedText],
) -> tuple[list[AllowedClaim], list[AllowedHypothesis], list[str]]:
    """Allowed claims, hypotheses from overstated claims and gaps quoting claims, per the code's labels."""
    verdict = decision.verdict
    excluded, off_topic = set(decision.excluded_claims), dict(decision.off_topic)
    allowed: list[AllowedClaim] = []
    hypotheses: list[AllowedHypothesis] = []
    gaps: list[str] = []
    contradicted = dropped_claim = junk_gap = False
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        text = " ".join(claim_text(claim).split())
        verification = decision.effective_checks.get(key, "unsupported")
        if key in excluded:
            dropped_claim = True
            continue
        if not text or is_question(text):
            continue  # a question (often the user's, copied) is neither a finding, a direction nor a gap
        kind = claim_type(claim)
        if key in off_topic and verification != "contradicted":
            # Issue 18: about something else, or no finding; never 已确认 / "Confirmed", nor a direction or gap.
            dropped.append(DroppedText(f"claims[{key}]", text, off_topic[key]))
            if verification in ALLOWED_VERIFICATIONS and off_topic[key] in (OFF_TOPIC_WHY, NO_KEYS_WHY):
                _add(gaps, catalogue["gap_off_topic"])  # true evidence left out: the user is told so
            continue
        if verification in ALLOWED_VERIFICATIONS and kind in CLAIM_TYPES:
            if verdict == "REJECT" and kind == "root_cause":
                continue  # §19.2.1: no root-cause conclusion under REJECT
            # What code decided, not what the Executor wrote: only a direct observation is shown as confirmed.
            allowed.append(AllowedClaim(
                claim_id=key, claim_type=cast(ClaimType, kind), claim_text=text,
                support_level="direct" if verification == "direct_observation" else "indirect",
            ))
            continue
        if verification == "contradicted":
            contradicted = True
            continue
        why = screen(text, query)
        if why is not None:
            dropped.append(DroppedText(f"claims[{key}]", text, why))
            junk_gap = verification not in ALLOWED_VERIFICATIONS
            continue
        if verification == "overstated" and verdict != "REJECT":
            hypotheses.append(AllowedHypothesis(hypothesis_text=text))
        elif verification == "overstated":
            _add(gaps, catalogue["gap_overstated"].format(text=text))
        elif verification == "external_unknown":
            _add(gaps, catalogue["gap_external"].format(text=text))
        elif verification not in ALLOWED_VERIFICATIONS:
            _add(gaps, catalogue["gap_unsupported"].format(text=text))
    if junk_gap:
        _add(gaps, catalogue["gap_some_unsupported"])  # the template's fixed text instead of quoting junk
    if contradicted:
        _add(gaps, catalogue["gap_contradicted"])
    if dropped_claim:
        _add(gaps, catalogue["gap_excluded"])
    return allowed, hypotheses, gaps


def _hypotheses(
    query: str, normalized: Mapping[str, Any] | None, verifier_output: Any, flagged: set[int],
    dropped: list[DroppedText],
) -> list[AllowedHypothesis]:
    judged = _hypothesis_checks(verifier_output)
    kept: list[AllowedHypothesis] = []
    for index, hypothesis in iter_objects(normalized, HYPOTHESES):
        text = " ".join(text_of(hypothesis, HYPOTHESIS_TEXT).split())
        if index in flagged or addresses_model(text) or not text or is_question(text):
            continue
        if judged.get(index) in REJECTED_HYPOTHESIS:
            continue
        why = screen(text, query)
        if why is not None:
            dropped.append(DroppedText(f"hypotheses[{index}]", text, why))
            continue
        needed = strings_of(hypothesis, NEEDED_EVIDENCE)
        kept.append(AllowedHypothesis(hypothesis_text=text,
                                      needed_evidence=[item for item in needed if screen(item, query) is None]))
    return kept


def _item_text(normalized: Mapping[str, Any] | None, name: str, index: int) -> str:
    items = normalized.get(name) if isinstance(normalized, Mapping) else None
    item = items[index] if isinstance(items, list) and 0 <= index < len(items) else None
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping):
        return text_of(item, HYPOTHESIS_TEXT) or text_of(item, ACTION_TEXT)
    return ""


def _errors(gate_result: GatekeeperResult | Mapping[str, Any] | None) -> list[Any]:
    if isinstance(gate_result, GatekeeperResult):
        return list(gate_result.errors)
    errors = gate_result.get("errors") if isinstance(gate_result, Mapping) else None
    return list(errors) if isinstance(errors, list) else []


def _actions(normalized: Mapping[str, Any] | None, verdict: str, flagged: set[int], query: str,
             dropped: list[DroppedText]) -> list[ComposerAction]:
    """Executor actions; under REJECT only evidence-gathering or review actions (§19.2.1); none a rule flagged, none
    junk (a junk reason is left off, the action kept)."""
    actions: list[ComposerAction] = []
    seen: set[str] = set()
    for index, action in iter_objects(normalized, ACTIONS):
        text = " ".join(text_of(action, ACTION_TEXT).split())
        if index in flagged or not text or fold(text) in seen or restates(text, _RETRY_INSTRUCTION):
            continue
        if addresses_model(text) or addresses_model(text_of(action, REASON)):
            continue
        if verdict == "REJECT" and not EVIDENCE_ACTION.search(fold(text)):
            continue
        why = screen(text, query)
        if why is not None:
            dropped.append(DroppedText(f"recommended_actions[{index}]", text, why))
            continue
        reason = " ".join(text_of(action, REASON).split())
        why = screen(reason, query)
        if why is not None:
            dropped.append(DroppedText(f"recommended_actions[{index}].reason", reason, why))
            reason = ""
        seen.add(fold(text))
        actions.append(ComposerAction(action_text=text, reason=reason))
    return actions


# An "action" copied from round 2's instruction to the Executor (仅补充…证据) is no step for a user.
_RETRY_INSTRUCTION = RetryContext.model_fields["instruction"].default
