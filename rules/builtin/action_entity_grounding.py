"""action.entity_grounding — an action or a gap names only entities this session's evidence holds."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.builtin.entity_grounding import checked
from evigate.rules.gate.actions import iter_user_texts
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import claim_entities
from evigate.rules.gate.observed import evidence_text
from evigate.rules.text.entities import EntityKind, entity_occurs


class ActionEntityGroundingParams(RuleParams):
    """Values come from rules/metadata/action.entity_grounding.yaml, the one source of every default."""

    fields: list[str] = Field(min_length=1)
    entity_kinds: list[EntityKind]
    min_bare_number_digits: int = Field(ge=1, description="bare numbers with fewer digits are ignored")
    observed_kinds: list[EntityKind] = Field(
        description="kinds a shown text may name, if no evidence call observed anything, only where the question does")


class ActionEntityGrounding(Rule):
    """Every service, error code, identifier, time and key value an action or a gap names occurs in this session.

    Actions, gaps and hypotheses carry no required evidence, yet they are printed to the user as written. Each entity of
    `recommended_actions[].action_text` / `.reason`, `missing_info[]` and `hypotheses[].hypothesis_text` / `.basis`
    (not `.needed_evidence`, which may name what was not looked at yet; see `claim.entity_grounding` for what an
    entity is) is looked up in every invocation of the session — output, retrieval details, input, error — the
    trace summary and the user's query. An action naming something found nowhere ("重启 order-db-7") was invented:
    the item is dropped from the composer input and the answer. The verdict is not affected (`warn_only`): the
    claims decide it.

    When no evidence call of this session observed anything (``evidence_text`` is empty: every log, metric or record
    query came back empty; knowledge documents do not count), a text the user reads (not a hypothesis's `basis`)
    may name a service or error code (`observedKinds`) only where the question names it. Measured on dev (0.5B
    default), for a day with no records: "pay-gateway 调用上游支付通道超时" (a runbook's line) as a possible direction
    for a payment-service question, and the gap "ERR_SMS_PROVIDER" (the code the planner's runbook query carried).
    With evidence in hand, a runbook's name stays a fair direction ("确认是否切换到 sms-vendor-b", the backup vendor).
    """

    id = "action.entity_grounding"
    Params = ActionEntityGroundingParams

    def validate(self, context: RuleContext, params: ActionEntityGroundingParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        observed: str | None = None
        for target, text, _ in iter_user_texts(context.data, params.fields):
            if ".needed_evidence[" in target:
                continue  # what a hypothesis still needs may name what was not looked at yet
            entities = claim_entities(context, text)
            unknown = [
                entity for entity in entities
                if checked(entity, params.entity_kinds, params.min_bare_number_digits) and not entity.approximate
                and not context.session.occurs_in_session(entity)
            ]
            if unknown:
                names = ", ".join(f"'{entity.text}'" for entity in unknown[:8])
                findings.append(RuleFinding(target, f"names {names}, found nowhere in this session's evidence"))
                continue
            if target.endswith(".basis"):
                continue  # a basis may cite the runbook it reasons from; it is not shown
            if observed is None:  # built once, only when there is something to check
                observed = evidence_text(context.session)
            if observed.strip():
                continue
            unasked = [entity for entity in entities if entity.kind in params.observed_kinds
                       and not entity_occurs(entity, context.session.query)]
            if unasked:
                names = ", ".join(f"'{entity.text}'" for entity in unasked[:8])
                findings.append(RuleFinding(target, f"names {names}, which the question does not name, while no "
                                                    "evidence call of this session observed anything"))
        return findings
