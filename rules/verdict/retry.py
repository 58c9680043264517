"""build_retry_context: the evidence gaps round 1 leaves for round 2 (V1 "第二轮补证据范围")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evigate.rules.contract import claim_key, claim_text, iter_claims
from evigate.rules.verdict.matrix import VerdictDecision
from evigate.signatures import RetryContext

GAP_NO_EVIDENCE = "“{text}”缺少直接证据"
GAP_INDIRECT_ONLY = "“{text}”只有间接支持"
GAP_UNVERIFIABLE = "部分断言引用的证据无法核实，请重新检索并引用本轮真实的工具调用"
MAX_GAP_CHARS = 200


def build_retry_context(
    decision: VerdictDecision,
    normalized: Mapping[str, Any] | None,
    round: int,
    completed_queries: Iterable[str] = (),
) -> RetryContext:
    """Gaps from critical ``no_evidence`` claims and critical claims with only indirect support.

    Claims a reject-level rule dropped are not quoted; one generic gap says that some evidence was unverifiable.
    REJECT does not retry (V1), but the context is still well-formed if asked for.
    """
    excluded = set(decision.excluded_claims)
    critical = set(decision.critical_claims)
    gaps: list[str] = []
    unverifiable = False
    for index, claim in iter_claims(normalized):
        key = claim_key(claim, index)
        if key not in critical:
            continue
        if key in excluded:
            unverifiable = True
            continue
        text = " ".join(claim_text(claim).split())[:MAX_GAP_CHARS] or key
        verification = decision.effective_checks.get(key, "unsupported")
        if verification in ("unsupported", "external_unknown"):
            gaps.append(GAP_NO_EVIDENCE.format(text=text))
        elif verification in ("reasonable_inference", "overstated"):
            gaps.append(GAP_INDIRECT_ONLY.format(text=text))
    if unverifiable:
        gaps.append(GAP_UNVERIFIABLE)
    return RetryContext(
        round=round, missing_evidence_facts=gaps, completed_queries=[str(query) for query in completed_queries]
    )
