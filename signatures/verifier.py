"""Verifier input (§14) and output (§16) contracts, with the V1 facts_checked compatibility shape (§16.1.1)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from evigate.signatures.gatekeeper import ExecutorOutputParseStatus, GatekeeperResult
from evigate.signatures.tooling import RetryContext, ToolTraceEntry

Verdict = Literal["PASS", "LOW_CONFID", "REJECT"]
ClaimVerification = Literal[
    "direct_observation", "reasonable_inference", "overstated", "unsupported", "external_unknown", "contradicted"
]
HypothesisVerification = Literal["reasonable_hypothesis", "unsupported_hypothesis", "overstated_as_fact"]
FactVerification = Literal["direct_evidence", "indirect_support", "no_evidence", "contradicted"]

FACT_VERIFICATION_OF: dict[str, FactVerification] = {
    "direct_observation": "direct_evidence",
    "reasonable_inference": "indirect_support",
    "overstated": "indirect_support",
    "unsupported": "no_evidence",
    "external_unknown": "no_evidence",
    "contradicted": "contradicted",
}
"""§16.1.1 mapping from a V2 claim verification to the V1 facts_checked class."""


class VerifierInput(BaseModel):
    """§14: the explicit, isolated Verifier payload. No Planner or Executor reasoning ever enters it."""

    original_query: str
    executor_raw_output: str = Field(default="", description="debug/fallback only; never a source of facts")
    executor_final_answer: str = Field(default="", description="deprecated alias of executor_raw_output")
    executor_structured_output: dict[str, Any] | None = None
    executor_output_parse_status: ExecutorOutputParseStatus
    tool_trace_summary: list[ToolTraceEntry] = Field(default_factory=list)
    gatekeeper_result: GatekeeperResult = Field(default_factory=GatekeeperResult)
    retry_context: RetryContext | None = None


class EvidenceRef(BaseModel):
    """§16: which trace entry and invocations a check relied on."""

    trace_ref: str | None = None
    tool_name: str | None = None
    source_invocation_ids: list[int] = Field(default_factory=list)
    note: str = ""


class ClaimCheck(BaseModel):
    """§16: the Verifier's derivability judgement of one claim."""

    claim_id: str
    verification: ClaimVerification
    detail: str = ""
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)


class HypothesisCheck(BaseModel):
    """§16: whether a hypothesis stays a hypothesis."""

    hypothesis_index: int = Field(ge=0)
    verification: HypothesisVerification
    detail: str = ""


class FactChecked(BaseModel):
    """V1 facts_checked entry, produced by code from claim_checks (§16.1.1)."""

    fact: str = Field(description='exactly "{claim_id}: {claim_text}"')
    verification: FactVerification
    is_critical: bool
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)


class VerifierOutput(BaseModel):
    """§16: what the Verifier model proposes. Code recomputes verdict and score; these are kept as the model's."""

    verdict: Verdict
    groundedness_score: float = Field(default=0.0, ge=0.0, le=1.0)
    claim_checks: list[ClaimCheck] = Field(default_factory=list)
    hypothesis_checks: list[HypothesisCheck] = Field(default_factory=list)
    rationale: str = ""
    facts_checked: list[FactChecked] = Field(default_factory=list)
