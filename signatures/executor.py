"""Executor V2 output contract (§2–§8): structured diagnostic material, never user-facing prose."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ANSWER_VERSION: Literal["executor_evidence_v2"] = "executor_evidence_v2"

ClaimType = Literal["symptom", "root_cause", "impact", "risk", "context", "remediation"]
"""§4 gives symptom / root_cause / impact / risk as examples; context and remediation are the non-critical rest."""

CRITICAL_CLAIM_TYPES: frozenset[str] = frozenset({"root_cause", "symptom", "impact", "risk"})
"""§16.1.1: these claim types are critical facts."""

SupportLevel = Literal["direct", "indirect"]

DEPRECATED_EXECUTOR_FIELDS: tuple[str, ...] = ("diagnosis_summary", "user_facing_answer")
"""§8: V1 fields whose presence in a V2 output is a schema failure."""


class EvidenceBinding(BaseModel):
    """§5: one pointer from a claim to the tool invocations that show it."""

    source_type: str = Field(default="tool_trace", description="evidence source type, e.g. tool_trace")
    source_id: str | None = Field(default=None, description="trace_ref or other locator; not hard-checked")
    tool_name: str = Field(description="name of the tool that produced the evidence")
    # Non-empty is required by the Gatekeeper (schema.executor_v2), not by parsing: the seeds' own examples show
    # empty lists, and a degraded output must reach the Gatekeeper to be judged. minItems still guides generation.
    source_invocation_ids: list[int] = Field(
        description="tool_invocation ids of this session", json_schema_extra={"minItems": 1, "uniqueItems": True}
    )
    evidence_excerpt: str = Field(description="verbatim text, metric value or log fragment from the tool output")


class Claim(BaseModel):
    """§4: a confirmed or limited-confirmed factual statement with its evidence."""

    # Pattern and sequence guide generation only (like minItems below): parsing accepts any id, and duplicates are
    # the Gatekeeper's business. A 0.5B model otherwise names every claim after the error code, or twice "claim-12";
    # the structured decoder writes the sequence itself (claim-1, claim-2, ...), a grammar keeps to the pattern.
    claim_id: str = Field(
        description="unique id, e.g. claim-1",
        json_schema_extra={"pattern": "^claim-[0-9]{1,2}$", "x-evigate-sequence": "claim-{n}"},
    )
    claim_type: ClaimType
    claim_text: str
    support_level: SupportLevel
    evidence_bindings: list[EvidenceBinding] = Field(
        description="must not be empty (checked by the Gatekeeper)", json_schema_extra={"minItems": 1}
    )


class Hypothesis(BaseModel):
    """§6: a direction worth checking that the evidence does not confirm."""

    hypothesis_text: str
    basis: str
    needed_evidence: list[str] = Field(default_factory=list)


class RecommendedAction(BaseModel):
    """§7: a next step; bindings are optional and never hard-checked."""

    action_text: str
    reason: str
    evidence_bindings: list[EvidenceBinding] = Field(default_factory=list)


class ExecutorOutputV2(BaseModel):
    """§2–§3: the Executor's whole output. Extra keys are kept so the Gatekeeper sees deprecated V1 fields."""

    model_config = ConfigDict(extra="allow")

    answer_version: Literal["executor_evidence_v2"] = ANSWER_VERSION
    claims: list[Claim]
    hypotheses: list[Hypothesis] = Field(default_factory=list)
    recommended_actions: list[RecommendedAction] = Field(default_factory=list)
    missing_info: list[str] = Field(default_factory=list)
