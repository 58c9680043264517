"""Tool invocation facts and the V1 tool trace summary (with the "Traceability model" index fields)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

EvidenceLevel = Literal["direct", "indirect", "none"]

WITHIN_THRESHOLD = "within_threshold"
"""The ``retrieval_details`` key a metric tool sets to ``true`` when it checked the series against an alert threshold
and no point of the window crossed it: a healthy reading, which shows nothing went wrong (docs/domains.md)."""


class ToolInvocation(BaseModel):
    """One recorded tool call as the Gatekeeper and Verifier see it (a `tool_invocation` row)."""

    id: int
    session_id: str
    tool_name: str
    input: dict[str, Any] = Field(default_factory=dict)
    output_preview: str = ""
    retrieval_details: dict[str, Any] | list[Any] | None = None
    success: bool = True
    round: int = 1
    error: str | None = None
    is_evidence: bool = True
    output: str | None = Field(
        default=None, exclude=True, repr=False,
        description="the whole recorded output when the preview was cut (None: the preview is the whole output); "
                    "for the Gatekeeper only, never serialised",
    )

    @property
    def within_threshold(self) -> bool:
        """Whether the tool said its series stayed within its alert threshold (``WITHIN_THRESHOLD``)."""
        return isinstance(self.retrieval_details, dict) and self.retrieval_details.get(WITHIN_THRESHOLD) is True


class ToolTraceEntry(BaseModel):
    """V1 `tool_trace_summary` entry: the minimal evidence summary of one call or of a folded group of calls."""

    trace_ref: str = Field(default="", description="stable reference, e.g. trace-1, used by evidence_refs")
    tool_name: str
    success: bool
    input_summary: str
    output_summary: str = Field(description="1-3 sentences: what the call proved or failed to prove")
    evidence_level: EvidenceLevel
    source_invocation_ids: list[int] = Field(default_factory=list)
    query_samples: list[str] = Field(default_factory=list)
    retrieval_layers: list[str] = Field(default_factory=list)
    relevance_levels: list[str] = Field(default_factory=list)
    source_documents: list[str] = Field(default_factory=list)
    call_count: int = 1
    repeat_count: int = 0
    miss_count: int = 0
    failure_count: int = 0


class RetryContext(BaseModel):
    """V1 `retry_context`: the evidence gaps round 1 left, injected into round 2 only."""

    round: int = 1
    missing_evidence_facts: list[str] = Field(default_factory=list)
    instruction: str = "仅补充以上断言相关证据，不要重复已完成检索"
    completed_queries: list[str] = Field(
        default_factory=list, description="tool calls already made in round 1, so round 2 does not repeat them"
    )
