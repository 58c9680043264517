"""One diagnosis round: plan → execute → parse → gatekeeper → verifier → code verdict. No routing here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from evigate.errors import StoreError
from evigate.modules.audit import RoundFlag, RoundState, record_step
from evigate.modules.calls import call_agent
from evigate.modules.contributions import executor_contribution, failed_claim_reasons, verifier_contribution
from evigate.modules.judgement import judge, verifier_output_or_none
from evigate.modules.planner import Planner
from evigate.modules.trace_summary import build_tool_trace_summary, truncate_trace_summary
from evigate.rules import ParsedOutput, parse_executor_output
from evigate.rules.verdict.anchor_observations import without_claims
from evigate.rules.verdict.code_claims import add_code_claims
from evigate.rules.verdict.junk_claims import ClaimRewrite
from evigate.signatures import Plan, RetryContext, RoundContribution, VerifierInput, VerifierOutput
from evigate.signatures.agents import WriteEvidence

VERIFIER_SKIPPED = "not called"
"""How a verifier agent_step row says the model was skipped because code decided every claim."""
_EXECUTOR_PROMPT: tuple[str, ...] = (WriteEvidence.instructions,)
"""What the built-in Executor is told: a claim text copied from it is no finding."""


def as_plan(value: Any) -> tuple[Plan | None, str | None]:
    """A planner's ``plan`` as a Plan: a Plan, or a mapping that validates into one; else (None, what is wrong).

    The error names the offending field (``steps.0.tool: Field required``), so a user's planner can be fixed.
    """
    if isinstance(value, Plan):
        return value, None
    if isinstance(value, Mapping):
        try:
            return Plan.model_validate(dict(value)), None
        except ValidationError as exc:
            fields = "; ".join(
                f"{'.'.join(str(part) for part in error['loc']) or 'plan'}: {error['msg']}"
                for error in exc.errors()[:5]
            )
            return None, f"plan mapping does not fit Plan ({fields})"
    return None, f"plan is a {type(value).__name__}, not a Plan or a mapping" if value is not None else None


def run_round(program: Any, session_id: str, query: str, round_number: int, retry: RetryContext | None) -> RoundState:
    """Run one round for ``program`` (a DiagnosisProgram) and return what code decided."""
    settings, store = program.settings, program.store
    timeout = settings.timeouts.agent_seconds
    notes: list[str] = []
    flags: set[RoundFlag] = set()
    toolbox = program.toolbox(session_id, round_number)

    plan = _plan(program, session_id, query, round_number, retry, notes, flags)

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
        flags.add("executor_unavailable")
    elif not call.raw_texts:
        call.raw_texts.append(raw_output)
    parsed = parse_executor_output(raw_output)
    repairs = list(getattr(call.prediction, "repairs", None) or []) if call.ok else []
    thought = f"parse={parsed.status}; {len(raw_output)} chars" + (f"; repaired {repairs}" if repairs else "")
    record_step(store, session_id, round_number, call, thought)

    invocations = store.invocations(session_id)
    trace_summary = build_tool_trace_summary(invocations, parsed.data, retry)
    session = program.gatekeeper.session_index(invocations, session_id, trace_summary, query)
    rewrites: list[ClaimRewrite] = []
    observed: list[ClaimRewrite] = []
    written = parsed.data  # the Executor's own output, before code adds or rewrites claims
    if parsed.status == "valid":
        added = add_code_claims(parsed.data, session, query=query, instructions=_EXECUTOR_PROMPT,
                                locale=settings.locale)
        rewrites, observed = added.rewrites, added.observed
        parsed = ParsedOutput(parsed.status, parsed.detail, added.data)
        notes.extend(f"claim {r.claim_id} rewritten by code ({r.why}): {r.new_text[:120]}" for r in rewrites)
    gate = program.gatekeeper.validate(parsed, invocations, session_id, trace_summary=trace_summary, query=query)
    rejected = {item.claim_id for item in observed} & {*gate.failed_claims, *gate.excluded_claims}
    observations_dropped = failed_claim_reasons(gate, rejected)
    if rejected:
        # An observation code added must never cost the verdict: one a rule fails is dropped, and the gate reruns.
        notes.append(f"observation(s) added by code dropped, a Gatekeeper rule failed them: {sorted(rejected)}")
        observed = [item for item in observed if item.claim_id not in rejected]
        rewrites = [item for item in rewrites if item.claim_id not in rejected]
        parsed = ParsedOutput(parsed.status, parsed.detail, without_claims(parsed.data, rejected))
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

    def ask_model(model_input: VerifierInput) -> VerifierOutput | None:
        call = call_agent(
            program.verifier, "verifier", program.lm_for("verifier"), timeout, verifier_input=model_input
        )
        output = verifier_output_or_none(call.prediction) if call.ok else None
        if output is None:
            # No usable judgement: every claim it was asked about counts as unsupported: never a PASS from this.
            notes.append(f"verifier unavailable: {call.error or 'no VerifierOutput returned'}")
            flags.add("verifier_unavailable")
        asked = len((model_input.executor_structured_output or {}).get("claims") or [])
        shown = f"; claims asked {asked}; trace entries shown {len(verifier_trace)} of {len(trace_summary)}"
        verdict = output.verdict if output else "none"
        record_step(store, session_id, round_number, call, f"model_verdict={verdict}{shown}")
        return output

    judgement = judge(ask_model, verifier_input, gate, parsed.status, program.gatekeeper.verdict_impacts, session,
                      observations=[item.claim_id for item in observed])
    verifier_output = judgement.verifier_output
    if parsed.status != "valid":
        notes.append(f"executor output {parsed.status}: verifier not called (§15.4)")
    elif not judgement.model_called:
        flags.add("verifier_skipped")
        notes.append("every claim restates a cited output, confirmed by code: the Verifier model was not called")
        store.record_step(session_id, round_number, "verifier", model_output="", thought=(
            f"{VERIFIER_SKIPPED}: code confirmed every claim ({', '.join(judgement.decision.code_confirmed)})"))
    return RoundState(
        round=round_number,
        parse_status=parsed.parse_status,
        gate_result=gate.result,
        trace_summary=verifier_trace,
        normalized=gate.normalized,
        decision=judgement.decision,
        verifier_output=verifier_output,
        notes=notes,
        flags=flags,
        rewrites=rewrites,
        contribution=RoundContribution(
            round=round_number,
            executor=executor_contribution(written, gate, rewrites=rewrites, observed=observed,
                                           observations_dropped=observations_dropped),
            verifier=verifier_contribution(judgement.decision, model_called=judgement.model_called),
        ),
    )


def _plan(
    program: Any,
    session_id: str,
    query: str,
    round_number: int,
    retry: RetryContext | None,
    notes: list[str],
    flags: set[RoundFlag],
) -> Plan:
    call = call_agent(
        program.planner,
        "planner",
        program.lm_for("planner"),
        program.settings.timeouts.agent_seconds,
        query=query,
        retry_context=retry,
    )
    plan, problem = as_plan(getattr(call.prediction, "plan", None)) if call.ok else (None, call.error)
    fallback = program.planner if isinstance(program.planner, Planner) else program.fallback_planner
    if plan is None:
        # The deterministic plan only chooses which evidence to collect; every claim is still judged against the
        # recorded invocations, so the evidence, not the planner's failure, decides the verdict (docs/confirmation.md).
        notes.append(f"planner failed, deterministic plan used: {problem or 'no Plan returned'}")
        flags.add("planner_fallback")
        plan = fallback.fallback(query, retry)
    elif not plan.steps:
        plan = fallback.sanitize(plan, query, retry)
    decided_by = getattr(call.prediction, "decided_by", None) if call.ok else "fallback"
    thought = (
        f"skill={plan.skill}" + (f" (chosen by {decided_by})" if decided_by else "") + f"; {len(plan.steps)} steps"
    )
    if "planner_fallback" in flags:
        thought += f"; deterministic fallback plan: {problem or 'no Plan returned'}"
    record_step(program.store, session_id, round_number, call, thought)
    return plan
