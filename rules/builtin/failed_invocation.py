"""evidence.failed_invocation — a failed tool call proves nothing."""

from __future__ import annotations

from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import cited_views, format_ids
from evigate.rules.gate.session import iter_bindings, iter_claims


class FailedInvocation(Rule):
    """A claim is not bound only to failed invocations (`success = false`).

    A call that failed returned an error, not evidence: a claim whose every resolvable cited invocation failed is
    never allowed and never direct evidence. Claims that also cite a successful call pass; ids that do not
    resolve are left to `evidence.invocation_ref`.
    """

    id = "evidence.failed_invocation"
    Params = RuleParams

    def validate(self, context: RuleContext, params: RuleParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for claim_index, claim in iter_claims(context.data):
            views = [view for _, binding in iter_bindings(claim) for view in cited_views(context, binding)]
            if views and not any(view.success for view in views):
                findings.append(RuleFinding(
                    f"claims[{claim_index}].evidence_bindings",
                    f"claim is bound only to failed invocations: {format_ids(views)}",
                ))
        return findings
