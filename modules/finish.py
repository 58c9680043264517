"""The last stage of a diagnosis: the answer (composed and guarded, or rendered), the final evaluation, the end.

Code decides which: a parse failure or a REJECT is rendered from templates; otherwise the Composer writes and
:func:`~evigate.modules.judgement.guard_composer_output` decides whether its text may stand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evigate.modules.audit import (
    RoundState,
    SessionRun,
    record_step,
    write_contributions,
    write_evaluation,
    write_rule_evaluation,
)
from evigate.modules.contributions import composer_contribution, dropped_lines
from evigate.modules.judgement import guard_composer_output
from evigate.modules.rule_writer import RuleEvaluationWriter
from evigate.rules import OUTPUT_TYPE_OF_VERDICT, render_answer, render_parse_failure
from evigate.rules.answer.composer_input import assemble_composer_input
from evigate.rules.answer.render import facts_left_out
from evigate.signatures import ComposerInput, ComposerOutput, DiagnosisResult, VerifierOutput

if TYPE_CHECKING:  # rounds imports nothing from here; the runner is only passed in
    from evigate.modules.rounds import RoundRunner


def finish_diagnosis(runner: RoundRunner, run: SessionRun, state: RoundState) -> DiagnosisResult:
    """Compose (or render) the answer, write the final evaluation and finish the session, after the last round."""
    store, session_id = runner.store, run.session_id
    # V1: the rule score is a second, independent writer of self_evaluation; its failure is recorded, not lost.
    rule_writer = RuleEvaluationWriter(lambda: write_rule_evaluation(store, session_id, state))
    decision, locale = state.decision, runner.settings.locale
    output_type = OUTPUT_TYPE_OF_VERDICT[decision.verdict]
    material = assemble_composer_input(
        run.query, state.normalized, state.verifier_output or _no_judgement(), decision, gate_result=state.gate_result,
        locale=locale,
    )
    composer_input = material.composer_input
    # Issue 18: what code kept from the user, and why, goes into the audit (verifier_evaluation.reasons and the
    # composer record's lines_dropped).
    state.notes.extend(f"not shown: {item.field}: {item.reason}" for item in material.dropped)
    composer_output: ComposerOutput | None = None
    violations: list[str] = []
    degraded_reason = "; ".join(decision.reasons) if decision.verdict == "REJECT" else None
    skipped = _composer_skipped(state, runner.settings.composer.enabled)
    if state.parse_status.status != "valid":
        answer = render_parse_failure(run.query, state.parse_status, locale=locale)
    elif skipped is not None:
        answer = render_answer(composer_input, None, locale=locale)
    else:
        composer_output, violations = _compose(runner, session_id, state, composer_input)
        answer = render_answer(composer_input, composer_output if not violations else None, locale=locale)
    shown = composer_output.user_facing_answer if composer_output is not None and not violations else None
    run.contributions.composer = composer_contribution(
        skipped=skipped, violations=violations, lines_dropped=dropped_lines(material.dropped),
        facts_added=facts_left_out(composer_input, shown) if shown and decision.verdict != "REJECT" else [],
    )
    write_contributions(store, run)
    write_evaluation(
        store,
        run,
        state,
        composer_input=composer_input,
        composer_output=composer_output,
        composer_violations=violations,
        output_type=output_type,
        degraded_reason=degraded_reason,
    )
    rule_writer.settle(store, session_id, state.round, runner.rule_evaluation_wait_seconds)
    store.finish_session(
        session_id,
        output_type=output_type,
        verdict=decision.verdict,
        answer=answer,
        rounds=state.round,
        groundedness_score=decision.groundedness_score,
    )
    return DiagnosisResult(
        session_id=session_id,
        output_type=output_type,
        answer=answer,
        verdict=decision.verdict,
        groundedness_score=decision.groundedness_score,
        rounds=state.round,
        degraded_reason=degraded_reason,
    )


def _compose(
    runner: RoundRunner, session_id: str, state: RoundState, composer_input: ComposerInput
) -> tuple[ComposerOutput | None, list[str]]:
    call = runner.call("composer", session_id, state.round, composer_input=composer_input)
    output = getattr(call.prediction, "composer_output", None) if call.ok else None
    if not isinstance(output, ComposerOutput):
        violations = [f"composer output unusable: {call.error or type(output).__name__}"]
        output = None
    else:
        violations = guard_composer_output(composer_input, output, state.normalized, state.decision)
    record_step(
        runner.store,
        session_id,
        state.round,
        call,
        "composer output accepted" if not violations else f"replaced by renderer: {violations[:2]}",
    )
    return output, violations


def _composer_skipped(state: RoundState, enabled: bool) -> str | None:
    """Why the Composer is not asked for this answer (the templates alone write it), or None when it is."""
    if state.parse_status.status != "valid":
        return f"executor output {state.parse_status.status}: the answer is rendered from templates (§15.4)"
    if state.decision.verdict == "REJECT":
        return "verdict REJECT: the answer is rendered from templates (§19.2.1)"
    if not enabled:
        return "the Composer is disabled in the settings (composer.enabled: false)"
    return None


def _no_judgement() -> VerifierOutput:
    return VerifierOutput(verdict="LOW_CONFID", rationale="")
