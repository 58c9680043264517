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


class GatekeeperResult(BaseModel):
    """§12: status, failed and warning rule ids, and error details. Nothing heavier is persisted."""

    status: GateStatus = "pass"
    failed_rules: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    errors: list[GatekeeperError] = Field(default_factory=list)
