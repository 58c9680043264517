"""The model half of ``evigate.verify``: the Verifier module judges the claims code could not decide.

It reads the §14 payload of the synthetic session: only the undecided claims, and one trace entry per passage they
are bound to. Its labels replace code's for those claims only, and the verdict matrix still decides.
"""

from __future__ import annotations

from typing import Any

from evigate.rules.grounding import Grounding
from evigate.signatures import (
    ANSWER_VERSION,
    ClaimCheck,
    ExecutorOutputParseStatus,
    ToolTraceEntry,
    VerifierInput,
    VerifierOutput,
)

MAX_PASSAGE_CHARS_SHOWN = 3000
"""A passage longer than this is shown to the model as its bound spans only (a small model's context is short)."""


def _verifier_lm(model: str) -> Any:
    """The Verifier's LM for ``model`` under the settings, from the one LM builder, with the agent deadline."""
    from evigate.llm import lm_from_settings
    from evigate.settings import load_settings

    settings = load_settings()
    return lm_from_settings(settings, "verifier", model=model), settings.timeouts.agent_seconds


def verifier_input(grounding: Grounding) -> VerifierInput:
    """The §14 payload of the undecided claims and the passages they cite."""
    undecided = {label.claim_id for label in grounding.undecided}
    case = grounding.case
    claims = [claim for claim in case.output["claims"] if claim["claim_id"] in undecided]
    cited = sorted({b.passage for item in case.sentences if item.claim_id in undecided for b in item.bindings})
    trace = []
    for index in cited:
        passage = case.passages[index]
        shown = passage.text
        if len(shown) > MAX_PASSAGE_CHARS_SHOWN:
            spans = {b.span_text(case.passages) for item in case.sentences for b in item.bindings
                     if item.claim_id in undecided and b.passage == index}
            shown = " … ".join(sorted(spans))[:MAX_PASSAGE_CHARS_SHOWN]
        trace.append(ToolTraceEntry(
            trace_ref=f"trace-{index + 1}", tool_name="context", success=True, input_summary=passage.name,
            output_summary=shown, evidence_level="direct", source_invocation_ids=[index + 1],
        ))
    return VerifierInput(
        original_query="Is every claim supported by the context passages?",
        executor_structured_output={"answer_version": ANSWER_VERSION, "claims": claims},
        executor_output_parse_status=ExecutorOutputParseStatus(status="valid"),
        tool_trace_summary=trace,
        gatekeeper_result=grounding.gate.result,
    )


def judge_undecided(grounding: Grounding, model: str) -> tuple[dict[str, ClaimCheck], list[str]]:
    """The model's checks of the undecided claims (by claim id) and notes on what happened."""
    from evigate.modules.calls import call_agent
    from evigate.modules.verifier import Verifier

    lm, timeout = _verifier_lm(model)
    call = call_agent(Verifier(), "verifier", lm, timeout, verifier_input=verifier_input(grounding))
    output = getattr(call.prediction, "verifier_output", None) if call.ok else None
    if not isinstance(output, VerifierOutput):
        return {}, [f"verifier unavailable: {call.error or 'no VerifierOutput returned'}; code labels kept"]
    undecided = {label.claim_id for label in grounding.undecided}
    checks: dict[str, ClaimCheck] = {}
    for check in output.claim_checks:
        if check.claim_id in undecided and check.claim_id not in checks:
            checks[check.claim_id] = check
    notes = [f"verifier judged {len(checks)} of {len(undecided)} undecided claims"]
    return checks, notes
