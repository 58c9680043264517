"""Parse status (§13.1.1) and Gatekeeper result (§12) contracts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

ParseStatusValue = Literal["valid", "missing", "malformed"]
GateStatus = Literal["pass", "warn", "fail"]
VerdictImpact = Literal["reject_on_fail", "low_confid_on_fail", "warn_only"]


class ExecutorOutputParseStatus(BaseModel):
    """§13.1.1: JSON parse result only; schema validity belongs to the Gatekeeper."""

    status: ParseStatusValue
    detail: str = ""


class GatekeeperError(BaseModel):
    """§12: one minimal error record with the path of the offending field."""

    rule_id: str
    target: str = Field(description="field path, e.g. claims[0].evidence_bindings[1]")
    message: str
    level: Literal["fail", "warn"] = "fail"


class BindingSpan(BaseModel):
    """Where the Gatekeeper found an accepted binding's excerpt: offsets in the invocation's whole stored output.

    ``start``/``end`` index the invocation's ``output`` (the whole text the store kept, not the capped preview), so
    a viewer highlights the gate's own match. ``match`` is ``verbatim`` (the excerpt, or one "A … B" segment of it,
    occurs as written) or ``aligned`` (the best-aligned window the similarity rule scored; ``score`` in [0, 1]).
    """

    claim_id: str
    target: str = Field(description="the binding's path, e.g. claims[0].evidence_bindings[1]")
    invocation_id: int
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    match: Literal["verbatim", "aligned"]
    score: float = Field(default=1.0, ge=0.0, le=1.0)


class GatekeeperResult(BaseModel):
    """§12: status, failed and warning rule ids, and error details. Nothing heavier is persisted."""

    status: GateStatus = "pass"
    failed_rules: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    errors: list[GatekeeperError] = Field(default_factory=list)
