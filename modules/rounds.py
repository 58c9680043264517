"""One diagnosis round: plan → execute → parse → gatekeeper → verifier → code verdict. No routing here."""

from __future__ import annotations

from typing import Any

from evigate.errors import StoreError
from evigate.modules.audit import RoundState, record_step
from evigate.modules.calls import call_agent
from evigate.modules.planner import Planner
from evigate.modules.trace_summary import build_tool_trace_summary, truncate_trace_summary
from evigate.rules import decide_verdict, parse_executor_output
from evigate.signatures import Plan, RetryContext, VerifierInput, VerifierOutput


def run_round(program: Any, session_id: str, query: str, round_number: int, retry: RetryContext | None) -> RoundState:
    """Run one round for ``program`` (a DiagnosisProgram) and return what code decided."""
    settings, store = program.settings, program.store
    timeout = settings.timeouts.agent_seconds
    notes: list[str] = []
    toolbox = program.toolbox(session_id, round_number)

    plan = _plan(program, session_id, query, round_number, retry, notes)

    call = call_agent(
        program.executor,
        "executor",
        program.lm_for("executor"),
        timeout,
        query=query,
        plan=plan,
        retry_context=retry,
        toolbox=toolbox,
    )
    # An audit that cannot be written is no executor failure: surface it as what it is (the session fails).
    store_failures = getattr(toolbox, "store_failures", None)  # a custom toolbox may not keep them
    if store_failures:
        raise store_failures[0]
    if isinstance(call.exception, StoreError):
        raise call.exception
    raw_output = str(getattr(call.prediction, "raw_output", "") or "") if call.ok else ""
    if not call.ok:
        notes.append(f"executor unavailable: {call.error}")
    elif not call.raw_texts:
        call.raw_texts.append(raw_output)
    parsed = parse_executor_output(raw_output)
    repairs = list(getattr(call.prediction, "repairs", None) or []) if call.ok else []
    thought = f"parse={parsed.status}; {len(raw_output)} chars" + (f"; repaired {repairs}" if repairs else "")
    record_step(store, session_id, round_number, call, thought)

    invocations = store.invocations(session_id)
    trace_summary = build_tool_trace_summary(invocations, parsed.data, retry)
    gate = program.gatekeeper.validate(parsed, invocations, session_id, trace_summary=trace_summary, query=query)

    verifier_output: VerifierOutput | None = None
    verifier_trace = trace_summary
    if parsed.status == "valid":
        # V1 truncation priority: the entries the claims cite stay; uncited auxiliary ones go first.
        budget = program.verifier_trace_entries()
        verifier_trace = truncate_trace_summary(trace_summary, parsed.data, retry, max_entries=budget)
        verifier_input = VerifierInput(
            original_query=query,
            executor_raw_output=raw_output,
            executor_final_answer=raw_output,
            executor_structured_output=gate.normalized,
            executor_output_parse_status=parsed.parse_status,
            tool_trace_summary=verifier_trace,
            gatekeeper_result=gate.result,
            retry_context=retry,
        )
        call = call_agent(
            program.verifier, "verifier", program.lm_for("verifier"), timeout, verifier_input=verifier_input
        )
        candidate = getattr(call.prediction, "verifier_output", None) if call.ok else None
        if isinstance(candidate, VerifierOutput):
            verifier_output = candidate
        else:
            # No usable judgement: every claim then counts as unsupported, so this can never become a PASS.
            notes.append(f"verifier unavailable: {call.error or 'no VerifierOutput returned'}")
        verdict_text = verifier_output.verdict if verifier_output else "none"
        shown = f"; trace entries shown {len(verifier_trace)} of {len(trace_summary)}"
        record_step(store, session_id, round_number, call, f"model_verdict={verdict_text}{shown}")
    else:
        notes.append(f"executor output {parsed.status}: verifier not called (§15.4)")

    decision = decide_verdict(
        gate.normalized,
        verifier_output.claim_checks if verifier_output else [],
        gate.result,
        parsed.status,
        program.gatekeeper.verdict_impacts,
        model_verdict=verifier_output.verdict if verifier_output else None,
        failed_claims=gate.failed_claims,
        excluded_claims=gate.excluded_claims,
    )
    if decision.verdict == "PASS" and any(note.startswith("planner") for note in notes):
        # A diagnosis whose plan no model produced is never presented as fully confirmed.
        decision = decision.model_copy(
            update={"verdict": "LOW_CONFID", "reasons": [*decision.reasons, "planner failed: PASS withheld"]}
        )
    return RoundState(
        round=round_number,
        parse_status=parsed.parse_status,
        gate_result=gate.result,
        trace_summary=verifier_trace,
        normalized=gate.normalized,
        decision=decision,
        verifier_output=verifier_output,
        notes=notes,
    )


def _plan(
    program: Any, session_id: str, query: str, round_number: int, retry: RetryContext | None, notes: list[str]
) -> Plan:
    call = call_agent(
        program.planner,
        "planner",
        program.lm_for("planner"),
        program.settings.timeouts.agent_seconds,
        query=query,
        retry_context=retry,
    )
    plan = getattr(call.prediction, "plan", None) if call.ok else None
    fallback = program.planner if isinstance(program.planner, Planner) else program.fallback_planner
    if not isinstance(plan, Plan):
        notes.append(f"planner failed, deterministic plan used: {call.error or 'no Plan returned'}")
        plan = fallback.fallback(query, retry)
    elif not plan.steps:
        plan = fallback.sanitize(plan, query, retry)
    decided_by = getattr(call.prediction, "decided_by", None) if call.ok else "fallback"
    thought = (
        f"skill={plan.skill}" + (f" (chosen by {decided_by})" if decided_by else "") + f"; {len(plan.steps)} steps"
    )
    record_step(program.store, session_id, round_number, call, thought)
    return plan
