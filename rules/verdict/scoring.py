"""score_rule_evaluation: V1 ``rule_evaluation`` — a 0–100 evidence score computed by rules, with named factors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evigate.rules.gate.session import binding_ids, iter_bindings, iter_claims
from evigate.rules.thresholds import THRESHOLDS
from evigate.signatures import GatekeeperResult, RuleEvaluation, RuleFactor, ToolInvocation

WEIGHTS = THRESHOLDS.scoring.weights
DIVERSITY_TARGET = THRESHOLDS.scoring.diversity_target
WARN_CREDIT = THRESHOLDS.scoring.warn_credit
"""Citing this many different evidence tools earns the full diversity points."""


def _invocations(invocations: Sequence[ToolInvocation | Mapping[str, Any]]) -> list[ToolInvocation]:
    found = []
    for item in invocations or ():
        try:
            found.append(item if isinstance(item, ToolInvocation) else ToolInvocation.model_validate(item))
        except Exception:  # a malformed row contributes nothing
            continue
    return found


def score_rule_evaluation(
    normalized: Mapping[str, Any] | None,
    invocations: Sequence[ToolInvocation | Mapping[str, Any]],
    gate_result: GatekeeperResult | None,
) -> RuleEvaluation:
    """Evidence score from five factors (weights in :data:`WEIGHTS`); each factor says what it measured."""
    gate = gate_result or GatekeeperResult()
    rows = _invocations(invocations)
    by_id = {row.id: row for row in rows}
    evidence_rows = [row for row in rows if row.is_evidence]
    claims = list(iter_claims(normalized))
    bound = 0
    cited_tools: set[str] = set()
    bindings = 0
    for _, claim in claims:
        good = False
        for _, binding in iter_bindings(claim):
            bindings += 1
            for invocation_id in binding_ids(binding):
                row = by_id.get(invocation_id)
                if row is not None and row.success:
                    good = True
                    cited_tools.add(row.tool_name)
        bound += good
    excerpt_errors = [e for e in gate.errors if e.rule_id == "evidence.excerpt_similarity"]
    penalty = sum(1.0 if e.level == "fail" else WARN_CREDIT for e in excerpt_errors)
    ratios = {
        "bound_claim_ratio": (bound / len(claims) if claims else 0.0,
                              f"{bound}/{len(claims)} claims cite a successful invocation"),
        "excerpt_similarity": (max(0.0, 1 - penalty / bindings) if bindings else 0.0,
                               f"{len(excerpt_errors)} of {bindings} excerpts below the similarity threshold"),
        "invocation_success_ratio": (
            sum(row.success for row in evidence_rows) / len(evidence_rows) if evidence_rows else 0.0,
            f"{sum(row.success for row in evidence_rows)}/{len(evidence_rows)} evidence tool calls succeeded",
        ),
        "evidence_tool_diversity": (
            min(1.0, len(cited_tools) / DIVERSITY_TARGET),
            f"claims cite {len(cited_tools)} distinct tool(s): {', '.join(sorted(cited_tools)) or 'none'}",
        ),
        "gatekeeper_status": (
            {"pass": 1.0, "warn": WARN_CREDIT, "fail": 0.0}[gate.status], f"gatekeeper status {gate.status}"
        ),
    }
    factors = [
        RuleFactor(name=name, points=round(WEIGHTS[name] * ratio, 2), detail=detail)
        for name, (ratio, detail) in ratios.items()
    ]
    total = round(sum(factor.points for factor in factors))
    return RuleEvaluation(evidence_score=max(0, min(100, total)), factors=factors)
