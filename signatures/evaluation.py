"""Audit contracts: self_evaluation container (V1 + §23), rule evaluation, and the program's result."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evigate.signatures.composer import ComposerInput, ComposerOutput
from evigate.signatures.contributions import Contributions
from evigate.signatures.gatekeeper import BindingSpan, ExecutorOutputParseStatus, GatekeeperResult
from evigate.signatures.tooling import RetryContext, ToolTraceEntry
from evigate.signatures.verifier import ClaimCheck, FactChecked, HypothesisCheck, Verdict

OutputType = Literal["NORMAL", "LOW_CONFID_WITH_DISCLAIMER", "DEGRADED"]
SELF_EVALUATION_SLOTS: tuple[str, ...] = ("rule_evaluation", "verifier_evaluation", "contributions", "query_reading")


class NameReading(BaseModel):
    """One misspelt name of a question and the domain's name it was read as."""

    written: str
    read_as: str


class QueryReading(BaseModel):
    """The question as evigate read it (``self_evaluation.query_reading``): as asked, and with its misspelt names
    read as the domain's (rules/text/spelling.py). The rounds answer ``read_as``."""

    original: str
    read_as: str
    corrections: list[NameReading] = Field(default_factory=list)


class RuleFactor(BaseModel):
    """One contribution to the rule-based evidence score."""

    name: str
    points: float
    detail: str = ""


class RuleEvaluation(BaseModel):
    """V1 `rule_evaluation`: a 0-100 evidence score computed by rules, written only by the evaluation service."""

    evidence_score: int = Field(ge=0, le=100)
    source: Literal["rule"] = "rule"
    factors: list[RuleFactor] = Field(default_factory=list)


class RoundRecord(BaseModel):
    """What one round decided, kept so round 1 survives in the audit after round 2 runs."""

    round: int
    verdict: Verdict
    model_verdict: Verdict | None = None
    groundedness_score: float
    gatekeeper_result: GatekeeperResult
    executor_output_parse_status: ExecutorOutputParseStatus
    reasons: list[str] = Field(default_factory=list)
    retry_context: RetryContext | None = None


class VerifierEvaluation(BaseModel):
    """§23 `verifier_evaluation` slot, written only by the diagnosis program."""

    model_config = ConfigDict(extra="allow")

    verdict: Verdict
    model_verdict: Verdict | None = None
    groundedness_score: float = Field(ge=0.0, le=1.0)
    critical_fact_count: int = 0
    claim_checks: list[ClaimCheck] = Field(default_factory=list)
    hypothesis_checks: list[HypothesisCheck] = Field(default_factory=list)
    facts_checked: list[FactChecked] = Field(default_factory=list)
    rationale: str = ""
    reasons: list[str] = Field(default_factory=list)
    round: int = 1
    traceability_version: str = "v2"
    executor_output_parse_status: ExecutorOutputParseStatus | None = None
    executor_structured_output: dict[str, Any] | None = None
    tool_trace_summary: list[ToolTraceEntry] = Field(default_factory=list)
    gatekeeper_result: GatekeeperResult = Field(default_factory=GatekeeperResult)
    # where the Gatekeeper found each accepted binding's excerpt (offsets in the whole stored output)
    binding_spans: list[BindingSpan] = Field(default_factory=list)
    composer_input: ComposerInput | None = None
    composer_output: ComposerOutput | None = None
    composer_violations: list[str] = Field(default_factory=list)
    output_type: OutputType | None = None
    degraded_reason: str | None = None
    history: list[RoundRecord] = Field(default_factory=list)

    @field_validator("executor_output_parse_status", "composer_input", "composer_output", mode="before")
    @classmethod
    def _empty_object_is_absent(cls, value: object) -> object:
        """The seeds write `{}` for "not produced" (§23); store it as absent rather than as a broken record."""
        return None if value == {} else value


class SelfEvaluation(BaseModel):
    """V1 `diagnosis_session.self_evaluation`: a container of independently written slots."""

    model_config = ConfigDict(extra="allow")

    rule_evaluation: RuleEvaluation | None = None
    verifier_evaluation: VerifierEvaluation | None = None
    contributions: Contributions | None = None


class DiagnosisResult(BaseModel):
    """What `DiagnosisProgram.__call__` returns to users."""

    session_id: str
    output_type: OutputType
    answer: str
    verdict: Verdict
    groundedness_score: float = Field(ge=0.0, le=1.0)
    rounds: int = Field(ge=1, le=2)
    degraded_reason: str | None = None
