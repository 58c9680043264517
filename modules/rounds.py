"""One diagnosis round: plan → execute → parse → gatekeeper → verifier → code verdict. No routing here.

:class:`RoundRunner` owns a round: it holds the collaborators every round needs (agents, their LMs, the toolbox
factory, the Gatekeeper, the store, the settings) as typed fields, and the data of one round goes in as arguments.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from evigate.errors import StoreError
from evigate.modules.audit import RoundFlag, RoundState, record_step
from evigate.modules.calls import AgentCall, call_agent, discarded_step_note
from evigate.modules.contributions import executor_contribution, verifier_contribution
from evigate.modules.gating import GatedOutput, gate_executor_output
from evigate.modules.judgement import Judgement, judge, verifier_output_or_none
from evigate.modules.planner import Planner
from evigate.modules.progress import Progress
from evigate.modules.rule_writer import RULE_EVALUATION_WAIT_SECONDS
from evigate.modules.trace_summary import truncate_trace_summary
from evigate.rules import Gatekeeper, ParsedOutput, parse_executor_output
from evigate.settings import Settings
from evigate.signatures import (
    Plan,
    RetryContext,
    RoundContribution,
    ToolTraceEntry,
    VerifierInput,
    VerifierOutput,
)
from evigate.store import AuditStore
from evigate.tools import Toolbox

VERIFIER_SKIPPED = "not called"
"""How a verifier agent_step row says the model was skipped because code decided every claim."""


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


@dataclass(frozen=True)
class Agents:
    """The four injected agents; any ``dspy.Module`` honouring its stage contract can stand in for one."""

    planner: Any
    executor: Any
    verifier: Any
    composer: Any


@dataclass
class Round:
    """The state of one round while it runs: what it is about, and the notes and flags code writes on the way."""

    session_id: str
    query: str
    number: int
    retry: RetryContext | None
    notes: list[str] = field(default_factory=list)
    flags: set[RoundFlag] = field(default_factory=set)
    evidence_named: tuple[str, ...] = ()
    """What the evidence named for the question and what the domain read in it (the plan's ``evidence_named`` and
    ``question_read``), read like its own anchors."""


@dataclass
class RoundRunner:
    """Runs rounds for one program; every collaborator a round needs is a field, nothing is read from elsewhere."""

    settings: Settings
    store: AuditStore
    gatekeeper: Gatekeeper
    agents: Agents
    lm_for: Callable[[str], Any]
    """The LM an agent runs with (None: the agent brings its own)."""
    toolbox_for: Callable[[str, int], Toolbox]
    """The recorded toolbox of a session's round."""
    fallback_planner: Callable[[], Planner]
    """The deterministic planner used when the injected one fails."""
    verifier_trace_entries: Callable[[], int]
    """How many tool-trace entries the Verifier model reads."""
    rule_evaluation_wait_seconds: float = RULE_EVALUATION_WAIT_SECONDS
    progress: Progress = field(default_factory=Progress)
    """Where this diagnosis reports its progress (default: nobody listens)."""
    program: dict[str, Any] = field(default_factory=dict)
    """Which compiled program answers (``ProgramChoice.record()``); the session's settings snapshot keeps it."""

    def call(self, agent_name: str, session_id: str, round_number: int, **inputs: Any) -> AgentCall:
        """One agent call with its LM and time limit; a late result is noted as a step of this session and round."""
        return call_agent(
            getattr(self.agents, agent_name),
            agent_name,
            self.lm_for(agent_name),
            self.settings.timeouts.agent_seconds,
            note_late=discarded_step_note(self.store, session_id, round_number, agent_name),
            progress=self.progress,
            **inputs,
        )

    def run(self, session_id: str, query: str, round_number: int, retry: RetryContext | None) -> RoundState:
        """Run one round and return what code decided."""
        current = Round(session_id, query, round_number, retry)
        plan = self._plan(current)
        current.evidence_named = (*plan.evidence_named, *plan.question_read)
        raw_output, parsed = self._execute(current, plan)
        gated = self._gate(current, raw_output, parsed)
        verifier_trace = self._verifier_trace(current, gated)
        judgement = self._judge(current, gated, verifier_trace)
        return RoundState(
            round=round_number,
            parse_status=gated.parsed.parse_status,
            gate_result=gated.gate.result,
            trace_summary=verifier_trace,
            normalized=gated.gate.normalized,
            decision=judgement.decision,
            verifier_output=judgement.verifier_output,
            notes=current.notes,
            flags=current.flags,
            rewrites=gated.rewrites,
            spans=gated.gate.spans,
            contribution=RoundContribution(
                round=round_number,
                executor=executor_contribution(gated.written, gated.gate, rewrites=gated.rewrites,
                                               observed=gated.observed,
                                               observations_dropped=gated.observations_dropped),
                verifier=verifier_contribution(judgement.decision, model_called=judgement.model_called),
            ),
        )

    # -- the steps of a round ------------------------------------------------------------------------------------
    def _plan(self, current: Round) -> Plan:
        call = self.call("planner", current.session_id, current.number, query=current.query,
                         retry_context=current.retry)
        plan, problem = as_plan(getattr(call.prediction, "plan", None)) if call.ok else (None, call.error)
        planner = self.agents.planner
        fallback = planner if isinstance(planner, Planner) else self.fallback_planner()
        if plan is None:
            # The deterministic plan only chooses which evidence to collect; every claim is still judged against the
            # recorded invocations, so the evidence, not the planner's failure, decides the verdict
            # (docs/confirmation.md).
            current.notes.append(f"planner failed, deterministic plan used: {problem or 'no Plan returned'}")
            current.flags.add("planner_fallback")
            plan = fallback.fallback(current.query, current.retry)
        elif not plan.steps:
            plan = fallback.sanitize(plan, current.query, current.retry)
        decided_by = getattr(call.prediction, "decided_by", None) if call.ok else "fallback"
        thought = (
            f"skill={plan.skill}" + (f" (chosen by {decided_by})" if decided_by else "") + f"; {len(plan.steps)} steps"
        )
        if "planner_fallback" in current.flags:
            thought += f"; deterministic fallback plan: {problem or 'no Plan returned'}"
        record_step(self.store, current.session_id, current.number, call, thought)
        return plan

    def _execute(self, current: Round, plan: Plan) -> tuple[str, ParsedOutput]:
        toolbox = self.toolbox_for(current.session_id, current.number)
        call = self.call("executor", current.session_id, current.number, query=current.query, plan=plan,
                         retry_context=current.retry, toolbox=toolbox)
        # An audit that cannot be written is no executor failure: surface it as what it is (the session fails).
        store_failures = getattr(toolbox, "store_failures", None)  # a custom toolbox may not keep them
        if store_failures:
            raise store_failures[0]
        if isinstance(call.exception, StoreError):
            raise call.exception
        raw_output = str(getattr(call.prediction, "raw_output", "") or "") if call.ok else ""
        if not call.ok:
            current.notes.append(f"executor unavailable: {call.error}")
            current.flags.add("executor_unavailable")
        elif not call.raw_texts:
            call.raw_texts.append(raw_output)
        parsed = parse_executor_output(raw_output)
        repairs = list(getattr(call.prediction, "repairs", None) or []) if call.ok else []
        thought = f"parse={parsed.status}; {len(raw_output)} chars" + (f"; repaired {repairs}" if repairs else "")
        record_step(self.store, current.session_id, current.number, call, thought)
        return raw_output, parsed

    def _gate(self, current: Round, raw_output: str, parsed: ParsedOutput) -> GatedOutput:
        """Code's claims, then the Gatekeeper (``modules/gating.py``, shared with the Executor's stage metric)."""
        invocations = self.store.invocations(current.session_id)
        self.progress.stage_started("gatekeeper")
        gated = gate_executor_output(self.gatekeeper, invocations, current.session_id, current.query, raw_output,
                                     parsed, current.retry, self.settings.locale, current.evidence_named)
        current.notes.extend(gated.notes)
        gate = gated.gate
        failed = f"; failed: {', '.join(gate.result.failed_rules)}" if gate.result.failed_rules else ""
        self.progress.stage_finished("gatekeeper", ok=True, detail=f"{gate.result.status}{failed}")
        return gated

    def _verifier_trace(self, current: Round, gated: GatedOutput) -> list[ToolTraceEntry]:
        """V1 truncation priority: the entries the claims cite stay; uncited auxiliary ones go first."""
        if gated.parsed.status != "valid":
            return gated.trace_summary
        return truncate_trace_summary(gated.trace_summary, gated.parsed.data, current.retry,
                                      max_entries=self.verifier_trace_entries())

    def _judge(self, current: Round, gated: GatedOutput, verifier_trace: list[ToolTraceEntry]) -> Judgement:
        """Code's labels, the Verifier model on the claims code left (if any), and the code's verdict."""
        verifier_input = VerifierInput(
            original_query=current.query,
            executor_raw_output=gated.raw_output,
            executor_final_answer=gated.raw_output,
            executor_structured_output=gated.gate.normalized,
            executor_output_parse_status=gated.parsed.parse_status,
            tool_trace_summary=verifier_trace,
            gatekeeper_result=gated.gate.result,
            retry_context=current.retry,
        )

        def ask_model(model_input: VerifierInput) -> VerifierOutput | None:
            return self._ask_verifier(current, model_input, shown=len(verifier_trace), of=len(gated.trace_summary))

        judgement = judge(ask_model, verifier_input, gated.gate, gated.parsed.status,
                          self.gatekeeper.verdict_impacts, gated.session,
                          observations=[item.claim_id for item in gated.observed])
        if gated.parsed.status != "valid":
            current.notes.append(f"executor output {gated.parsed.status}: verifier not called (§15.4)")
        elif not judgement.model_called:
            current.flags.add("verifier_skipped")
            current.notes.append(
                "every claim restates a cited output, confirmed by code: the Verifier model was not called")
            self.store.record_step(current.session_id, current.number, "verifier", model_output="", thought=(
                f"{VERIFIER_SKIPPED}: code confirmed every claim ({', '.join(judgement.decision.code_confirmed)})"))
        return judgement

    def _ask_verifier(
        self, current: Round, model_input: VerifierInput, *, shown: int, of: int
    ) -> VerifierOutput | None:
        call = self.call("verifier", current.session_id, current.number, verifier_input=model_input)
        output = verifier_output_or_none(call.prediction) if call.ok else None
        if output is None:
            # No usable judgement: every claim it was asked about counts as unsupported: never a PASS from this.
            current.notes.append(f"verifier unavailable: {call.error or 'no VerifierOutput returned'}")
            current.flags.add("verifier_unavailable")
        asked = len((model_input.executor_structured_output or {}).get("claims") or [])
        verdict = output.verdict if output else "none"
        record_step(self.store, current.session_id, current.number, call,
                    f"model_verdict={verdict}; claims asked {asked}; trace entries shown {shown} of {of}")
        return output
