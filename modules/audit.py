"""What a session leaves in the audit trail: agent_step rows and the self_evaluation slots it writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from evigate.modules.calls import AgentCall
from evigate.rules import score_rule_evaluation
from evigate.signatures import (
    BindingSpan,
    ComposerInput,
    ComposerOutput,
    Contributions,
    ExecutorOutputParseStatus,
    GatekeeperResult,
    RetryContext,
    RoundContribution,
    RoundRecord,
    ToolTraceEntry,
    VerifierEvaluation,
    VerifierOutput,
)

_SNAPSHOT_CHARS = 20_000
RoundFlag = Literal["planner_fallback", "executor_unavailable", "verifier_unavailable", "verifier_skipped"]
"""Typed facts about a round that control flow and the audit key on (never the text of a note)."""


@dataclass
class RoundState:
    """Everything one round produced; code-side facts, never re-derived from model text."""

    round: int
    parse_status: ExecutorOutputParseStatus
    gate_result: GatekeeperResult
    trace_summary: list[ToolTraceEntry]
    normalized: dict[str, Any] | None
    decision: Any  # evigate.rules.VerdictDecision
    verifier_output: VerifierOutput | None
    retry_context: RetryContext | None = None
    notes: list[str] = field(default_factory=list)
    flags: set[RoundFlag] = field(default_factory=set)
    rewrites: list[Any] = field(default_factory=list)  # evigate.rules.verdict.junk_claims.ClaimRewrite
    spans: list[BindingSpan] = field(default_factory=list)  # the Gatekeeper's matches of accepted bindings
    contribution: RoundContribution | None = None

    def record(self) -> RoundRecord:
        return RoundRecord(
            round=self.round,
            verdict=self.decision.verdict,
            model_verdict=self.verifier_output.verdict if self.verifier_output else None,
            groundedness_score=self.decision.groundedness_score,
            gatekeeper_result=self.gate_result,
            executor_output_parse_status=self.parse_status,
            reasons=[*self.decision.reasons, *self.notes],
            retry_context=self.retry_context,
        )


def verifier_evaluation(
    state: RoundState,
    history: list[RoundRecord],
    *,
    composer_input: ComposerInput | None = None,
    composer_output: ComposerOutput | None = None,
    composer_violations: list[str] | None = None,
    output_type: str | None = None,
    degraded_reason: str | None = None,
) -> VerifierEvaluation:
    """The §23 slot for the current round, with earlier rounds kept in ``history``."""
    decision = state.decision
    effective = getattr(decision, "effective_checks", None) or {}
    checks = list(state.verifier_output.claim_checks) if state.verifier_output else []
    code_checks = [check for key, check in decision.claim_checks.items() if key in decision.code_confirmed]
    checks = [c for c in checks if c.claim_id not in decision.code_confirmed] + code_checks
    checks = [c.model_copy(update={"verification": effective.get(c.claim_id, c.verification)}) for c in checks]
    return VerifierEvaluation(
        verdict=decision.verdict,
        model_verdict=state.verifier_output.verdict if state.verifier_output else None,
        groundedness_score=decision.groundedness_score,
        critical_fact_count=decision.critical_fact_count,
        claim_checks=checks,
        hypothesis_checks=list(state.verifier_output.hypothesis_checks) if state.verifier_output else [],
        facts_checked=list(decision.facts_checked),
        rationale=state.verifier_output.rationale if state.verifier_output else "",
        reasons=[*decision.reasons, *state.notes],
        round=state.round,
        executor_output_parse_status=state.parse_status,
        executor_structured_output=state.normalized,
        tool_trace_summary=state.trace_summary,
        gatekeeper_result=state.gate_result,
        binding_spans=state.spans,
        composer_input=composer_input,
        composer_output=composer_output,
        composer_violations=composer_violations or [],
        output_type=output_type,  # type: ignore[arg-type]
        degraded_reason=degraded_reason,
        history=history,
        code_confirmation=code_confirmation(state),
    )


def code_confirmation(state: RoundState) -> dict[str, Any]:
    """Which labels came from code, which it capped, which claims it rewrote, and whether the model was asked."""
    decision = state.decision
    return {
        "label_sources": dict(decision.label_sources),
        "confirmed_by_code": list(decision.code_confirmed),
        "capped": dict(decision.capped),
        "rewritten": [{"claim_id": r.claim_id, "original_text": r.original_text, "new_text": r.new_text,
                       "why": r.why} for r in state.rewrites],
        "verifier_model_called": "verifier_skipped" not in state.flags and state.parse_status.status == "valid",
        "flags": sorted(state.flags),
    }


@dataclass
class SessionRun:
    """What a session keeps across its rounds: the earlier rounds' records and every agent's contributions."""

    session_id: str
    query: str
    history: list[RoundRecord] = field(default_factory=list)
    contributions: Contributions = field(default_factory=Contributions)


def write_evaluation(store: Any, run: SessionRun, state: RoundState, **final: Any) -> None:
    """The §23 ``verifier_evaluation`` slot for the current round (``final``: the answer's parts, at the end)."""
    evaluation = verifier_evaluation(state, run.history, **final)
    store.merge_self_evaluation(run.session_id, "verifier_evaluation", evaluation.model_dump(mode="json"))


def write_rule_evaluation(store: Any, session_id: str, state: RoundState) -> None:
    """V1's ``rule_evaluation`` slot: the rule-based evidence score of the final round."""
    score = score_rule_evaluation(state.normalized, store.invocations(session_id), state.gate_result)
    store.merge_self_evaluation(session_id, "rule_evaluation", score.model_dump(mode="json"))


def write_contributions(store: Any, run: SessionRun) -> None:
    """The ``contributions`` slot, whole (it holds every round so far), through the store's atomic slot merge."""
    store.merge_self_evaluation(run.session_id, "contributions", run.contributions.model_dump(mode="json"))


def record_step(store: Any, session_id: str, round_number: int, call: AgentCall, thought: str) -> None:
    """One agent_step row per agent call: a concise thought, the raw model output snapshot, tokens, latency."""
    store.record_step(
        session_id,
        round_number,
        call.agent,
        thought=thought if call.error is None else f"{thought} | {call.error}",
        model_output=call.raw_text[:_SNAPSHOT_CHARS],
        prompt_tokens=call.prompt_tokens,
        completion_tokens=call.completion_tokens,
        latency_ms=call.latency_ms,
        status="ok" if call.error is None else "error",
        error=call.error,
    )
