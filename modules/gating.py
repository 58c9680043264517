"""The Executor's output after code's claims and the Gatekeeper: one function for a round and for a stage metric.

:func:`gate_executor_output` is what a round does between the Executor and the Verifier (docs/confirmation.md
§4–4d): code rewrites junk claims and adds the observations the evidence states (``add_code_claims``), the
Gatekeeper judges the result, and an observation code added that a rule then fails is removed before the gate runs
again. ``modules/rounds.py`` calls it on the session's recorded invocations; the Executor's stage metric
(``evigate.optimize.executor_metric``) calls it on cached ones, so the metric scores by the product's own rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evigate.modules.contributions import failed_claim_reasons
from evigate.modules.trace_summary import build_tool_trace_summary
from evigate.rules import Gatekeeper, GateOutcome, ParsedOutput
from evigate.rules.gate.session import SessionIndex
from evigate.rules.verdict.anchor_observations import without_claims
from evigate.rules.verdict.code_claims import add_code_claims
from evigate.rules.verdict.junk_claims import ClaimRewrite
from evigate.signatures import RetryContext, ToolInvocation, ToolTraceEntry
from evigate.signatures.agents import WriteEvidence

EXECUTOR_PROMPT: tuple[str, ...] = (WriteEvidence.instructions,)
"""What the built-in Executor is told: a claim text copied from it is no finding."""


@dataclass
class GatedOutput:
    """The Executor's output after code's claims and the Gatekeeper, with what the later steps need of the round."""

    raw_output: str
    written: dict[str, Any] | None  # the Executor's own output, before code added or rewrote claims
    parsed: ParsedOutput
    gate: GateOutcome
    session: SessionIndex
    trace_summary: list[ToolTraceEntry]
    rewrites: list[ClaimRewrite]
    observed: list[ClaimRewrite]
    observations_dropped: dict[str, str]
    notes: list[str] = field(default_factory=list)
    """What code did on the way, for the round's notes."""


def gate_executor_output(
    gatekeeper: Gatekeeper, invocations: Sequence[ToolInvocation], session_id: str, query: str, raw_output: str,
    parsed: ParsedOutput, retry: RetryContext | None = None, locale: str = "zh", evidence_named: Sequence[str] = (),
) -> GatedOutput:
    """Code's claims (docs/confirmation.md §4–4d), then the Gatekeeper; an added claim a rule fails is removed."""
    calls = list(invocations)
    trace_summary = build_tool_trace_summary(calls, parsed.data, retry)
    session = gatekeeper.session_index(calls, session_id, trace_summary, query, tuple(evidence_named))
    written = parsed.data
    rewrites: list[ClaimRewrite] = []
    observed: list[ClaimRewrite] = []
    notes: list[str] = []
    if parsed.status == "valid":
        added = add_code_claims(parsed.data, session, query=query, instructions=EXECUTOR_PROMPT, locale=locale)
        rewrites, observed = added.rewrites, added.observed
        parsed = ParsedOutput(parsed.status, parsed.detail, added.data)
        notes.extend(f"claim {r.claim_id} rewritten by code ({r.why}): {r.new_text[:120]}" for r in rewrites)

    def validate(output: ParsedOutput) -> GateOutcome:
        return gatekeeper.validate(output, calls, session_id, trace_summary=trace_summary, query=query,
                                  evidence_named=tuple(evidence_named))

    gate = validate(parsed)
    rejected = {item.claim_id for item in observed} & {*gate.failed_claims, *gate.excluded_claims}
    dropped = failed_claim_reasons(gate, rejected)
    if rejected:
        # An observation code added must never cost the verdict: one a rule fails is dropped, and the gate reruns.
        notes.append(f"observation(s) added by code dropped, a Gatekeeper rule failed them: {sorted(rejected)}")
        observed = [item for item in observed if item.claim_id not in rejected]
        rewrites = [item for item in rewrites if item.claim_id not in rejected]
        parsed = ParsedOutput(parsed.status, parsed.detail, without_claims(parsed.data, rejected))
        gate = validate(parsed)
    return GatedOutput(raw_output, written, parsed, gate, session, trace_summary, rewrites, observed, dropped, notes)
