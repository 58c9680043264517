"""What each agent contributed to a round and to the answer, for the ``contributions`` audit slot (issue 18).

Read from what the round's code already decided (the rewrites and observations of ``add_code_claims``, the
Gatekeeper's exclusions, the verdict's label sources and caps): nothing here judges anything again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evigate.rules import GateOutcome, VerdictDecision
from evigate.rules.contract import claim_key, claim_text, iter_claims
from evigate.rules.engine.gatekeeper import claim_ids_of_targets
from evigate.rules.text.phrases import is_question
from evigate.rules.verdict.junk_claims import ClaimRewrite
from evigate.signatures import (
    ClaimContribution,
    ComposerContribution,
    DroppedLine,
    ExecutorContribution,
    GatekeeperError,
    VerifierContribution,
)

_MAX_REASON_CHARS = 300


def executor_contribution(
    original: Mapping[str, Any] | None,
    gate: GateOutcome,
    *,
    rewrites: Sequence[ClaimRewrite] = (),
    observed: Sequence[ClaimRewrite] = (),
    observations_dropped: Mapping[str, str] | None = None,
) -> ExecutorContribution:
    """Each claim of the Executor's ``original`` output (before code touched it) and each claim code added, by what
    became of it in the output the Gatekeeper judged last (``gate.normalized``).

    ``rewrites`` are code's changes (junk rewrites and the added ``observed`` claims); ``observations_dropped`` the
    claims code added that a Gatekeeper rule then failed (removed before the verdict), with the reason.

    Dropped: a claim a ``reject_on_fail`` rule hit (never shown to a user), one the output the Gatekeeper judged no
    longer holds, or one whose text is empty or a question (the Composer input never shows those, §19.2.1).
    """
    added = {item.claim_id: item for item in observed}
    rewritten = {item.claim_id: item for item in rewrites if item.claim_id not in added}
    final = {claim_key(claim, index): claim for index, claim in iter_claims(gate.normalized)}
    excluded = _reasons(gate.normalized, gate.result.errors, set(gate.excluded_claims))
    claims: list[ClaimContribution] = []
    for index, claim in iter_claims(original):
        key = claim_key(claim, index)
        if key in excluded:
            claims.append(_entry(key, "dropped", f"a Gatekeeper rule excluded it: {excluded[key]}"))
        elif key not in final:
            claims.append(_entry(key, "dropped", "not in the output the Gatekeeper judged"))
        elif (why := _unshowable(final[key])) is not None:
            claims.append(_entry(key, "dropped", why))
        elif key in rewritten:
            change = rewritten[key]
            claims.append(_entry(key, "rewritten", f"{change.why}; now: {change.new_text}"))
        else:
            claims.append(_entry(key, "kept", ""))
    for key, item in added.items():
        if key in excluded:
            claims.append(_entry(key, "dropped", f"added by code, then excluded by a Gatekeeper rule: {excluded[key]}"))
        else:
            claims.append(_entry(key, "added_by_code", item.why))
    for key, why in (observations_dropped or {}).items():
        claims.append(_entry(key, "dropped", f"added by code, then failed by a Gatekeeper rule: {why}"))
    return ExecutorContribution.of(claims)


def failed_claim_reasons(gate: GateOutcome, claim_ids: Iterable[str]) -> dict[str, str]:
    """For each of ``claim_ids``, the fail-level Gatekeeper errors that target it ("rule: message; …")."""
    return _reasons(gate.normalized, gate.result.errors, set(claim_ids))


def verifier_contribution(decision: VerdictDecision, *, model_called: bool) -> VerifierContribution:
    """Where each judged claim's final label came from (see ``VerifierContribution``)."""
    counts = {"model": 0, "code": 0, "caps": 0}
    for key, source in decision.label_sources.items():
        check = decision.claim_checks.get(key)
        lowered = check is not None and decision.effective_checks.get(key, check.verification) != check.verification
        counts["caps" if lowered else "model" if source == "model" else "code"] += 1
    return VerifierContribution(model_called=model_called, labels_from_model=counts["model"],
                                labels_from_code=counts["code"], labels_from_caps=counts["caps"])


def composer_contribution(
    *,
    skipped: str | None,
    violations: Sequence[str] = (),
    lines_dropped: Sequence[DroppedLine] = (),
    facts_added: Sequence[str] = (),
) -> ComposerContribution:
    """``skipped`` says why the Composer was not asked (None when it was); ``violations`` why its text was replaced;
    ``facts_added`` the confirmed facts its shown text left out, which code lists after it."""
    if skipped is not None:
        return ComposerContribution(status="skipped", reason=skipped, lines_dropped=list(lines_dropped))
    if violations:
        return ComposerContribution(status="replaced", violations=list(violations), lines_dropped=list(lines_dropped),
                                    reason="the output guards refused the Composer's text: the renderer's is shown")
    return ComposerContribution(status="shown", reason="the Composer's text passed the output guards",
                                lines_dropped=list(lines_dropped), facts_added=list(facts_added))


_KIND_OF_FIELD = {"hypotheses": "hypothesis", "missing_info": "gap", "recommended_actions": "action", "claims": "claim"}


def dropped_lines(dropped: Iterable[Any]) -> list[DroppedLine]:
    """The texts the Composer input left out (``rules.answer.screen.DroppedText``: field, text, reason) as the
    composer record's ``lines_dropped``; ``kind`` is what the text was (hypothesis, gap, action, claim)."""
    lines: list[DroppedLine] = []
    for item in dropped:
        name = str(getattr(item, "field", "")).split("[", 1)[0].split(".", 1)[0]
        lines.append(DroppedLine(kind=_KIND_OF_FIELD.get(name, name or "text"), text=str(getattr(item, "text", "")),
                                 reason=_short(str(getattr(item, "reason", "")))))
    return lines


def _entry(claim_id: str, status: str, reason: str) -> ClaimContribution:
    return ClaimContribution(claim_id=claim_id, status=status, reason=_short(reason))  # type: ignore[arg-type]


def _unshowable(claim: Mapping[str, Any]) -> str | None:
    text = claim_text(claim).strip()
    if not text:
        return "the claim text is empty: never shown"
    if is_question(text):
        return "the claim text is a question: never shown"
    return None


def _reasons(
    normalized: Mapping[str, Any] | None, errors: Sequence[GatekeeperError], wanted: set[str]
) -> dict[str, str]:
    found: dict[str, list[str]] = {}
    for error in errors:
        if error.level != "fail":
            continue
        for key in claim_ids_of_targets(normalized, [error], lambda _: True):
            if key in wanted and f"{error.rule_id}: {error.message}" not in found.get(key, []):
                found.setdefault(key, []).append(f"{error.rule_id}: {error.message}")
    return {key: "; ".join(found.get(key) or ["a fail-level rule"]) for key in wanted}


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_REASON_CHARS else text[: _MAX_REASON_CHARS - 1] + "…"
