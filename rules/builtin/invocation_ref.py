"""evidence.invocation_ref — §11.2: cited invocations exist, belong to this session and match the tool name."""

from __future__ import annotations

from evigate.rules.contract import as_invocation_id, iter_bindings, iter_claims, raw_invocation_ids, tool_of
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams


class InvocationRefParams(RuleParams):
    check_tool_name: bool = True


class InvocationRef(Rule):
    """Every invocation id a claim cites exists, belongs to this session, and was a call of the named tool.

    A made-up id, an id from another session, or a binding whose `tool_name` differs from the recorded
    invocation's is forged evidence: the rule is `reject_on_fail`, and the claim is dropped from everything a user
    sees. Only `claims[].evidence_bindings` are checked; `recommended_actions[].evidence_bindings` may be empty or
    loose. Empty bindings and non-integer ids are format problems left to `schema.executor_v2`. Tool names compare
    case-insensitively.
    """

    id = "evidence.invocation_ref"
    Params = InvocationRefParams

    def validate(self, context: RuleContext, params: InvocationRefParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        session = context.session
        for claim_index, claim in iter_claims(context.data):
            for binding_index, binding in iter_bindings(claim):
                tool_name = tool_of(binding).strip()
                problems: list[str] = []
                for raw in raw_invocation_ids(binding):
                    invocation_id = as_invocation_id(raw)
                    if invocation_id is None:
                        continue
                    view = session.by_id.get(invocation_id)
                    if view is None:
                        problems.append(f"invocation {invocation_id} does not exist")
                    elif view.session_id != session.session_id:
                        problems.append(f"invocation {invocation_id} belongs to another session")
                    elif params.check_tool_name and tool_name and tool_name.casefold() != view.tool_name.casefold():
                        problems.append(f"binding names tool '{tool_name[:80]}' but invocation {invocation_id} "
                                        f"was '{view.tool_name}'")
                if problems:
                    findings.append(RuleFinding(
                        f"claims[{claim_index}].evidence_bindings[{binding_index}]", "; ".join(problems)
                    ))
        return findings
