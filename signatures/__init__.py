"""Typed contracts of evigate: pydantic models for every contract in the design documents.

This package is free of DSPy so the deterministic core can import it; the `dspy.Signature` of each agent lives
in :mod:`evigate.signatures.agents`.
"""

from evigate.signatures.composer import AllowedClaim, AllowedHypothesis, ComposerAction, ComposerInput, ComposerOutput
from evigate.signatures.evaluation import (
    SELF_EVALUATION_SLOTS,
    DiagnosisResult,
    OutputType,
    RoundRecord,
    RuleEvaluation,
    RuleFactor,
    SelfEvaluation,
    VerifierEvaluation,
)
from evigate.signatures.executor import (
    ANSWER_VERSION,
    CRITICAL_CLAIM_TYPES,
    DEPRECATED_EXECUTOR_FIELDS,
    Claim,
    ClaimType,
    EvidenceBinding,
    ExecutorOutputV2,
    Hypothesis,
    RecommendedAction,
)
from evigate.signatures.gatekeeper import (
    BindingSpan,
    ExecutorOutputParseStatus,
    GatekeeperError,
    GatekeeperResult,
    GateStatus,
    ParseStatusValue,
    VerdictImpact,
)
from evigate.signatures.plan import Plan, PlanStep
from evigate.signatures.tooling import EvidenceLevel, RetryContext, ToolInvocation, ToolTraceEntry
from evigate.signatures.verifier import (
    FACT_VERIFICATION_OF,
    ClaimCheck,
    ClaimVerification,
    EvidenceRef,
    FactChecked,
    FactVerification,
    HypothesisCheck,
    HypothesisVerification,
    Verdict,
    VerifierInput,
    VerifierOutput,
)

CONTRACTS = {
    model.__name__: model
    for model in (
        ExecutorOutputV2,
        Claim,
        EvidenceBinding,
        Hypothesis,
        RecommendedAction,
        ToolInvocation,
        ToolTraceEntry,
        RetryContext,
        ExecutorOutputParseStatus,
        GatekeeperResult,
        GatekeeperError,
        VerifierInput,
        VerifierOutput,
        ClaimCheck,
        HypothesisCheck,
        FactChecked,
        EvidenceRef,
        ComposerInput,
        ComposerOutput,
        AllowedClaim,
        AllowedHypothesis,
        ComposerAction,
        VerifierEvaluation,
        RuleEvaluation,
        SelfEvaluation,
        RoundRecord,
        DiagnosisResult,
        Plan,
        PlanStep,
    )
}
"""Every contract by name, for `evigate schema NAME`."""

__all__ = [
    "ANSWER_VERSION",
    "CONTRACTS",
    "CRITICAL_CLAIM_TYPES",
    "DEPRECATED_EXECUTOR_FIELDS",
    "FACT_VERIFICATION_OF",
    "SELF_EVALUATION_SLOTS",
    "AllowedClaim",
    "AllowedHypothesis",
    "BindingSpan",
    "Claim",
    "ClaimCheck",
    "ClaimType",
    "ClaimVerification",
    "ComposerAction",
    "ComposerInput",
    "ComposerOutput",
    "DiagnosisResult",
    "EvidenceBinding",
    "EvidenceLevel",
    "EvidenceRef",
    "ExecutorOutputParseStatus",
    "ExecutorOutputV2",
    "FactChecked",
    "FactVerification",
    "GateStatus",
    "GatekeeperError",
    "GatekeeperResult",
    "Hypothesis",
    "HypothesisCheck",
    "HypothesisVerification",
    "OutputType",
    "ParseStatusValue",
    "Plan",
    "PlanStep",
    "RecommendedAction",
    "RetryContext",
    "RoundRecord",
    "RuleEvaluation",
    "RuleFactor",
    "SelfEvaluation",
    "ToolInvocation",
    "ToolTraceEntry",
    "Verdict",
    "VerdictImpact",
    "VerifierEvaluation",
    "VerifierInput",
    "VerifierOutput",
]
