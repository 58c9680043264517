"""action.entity_grounding — an action or a gap names only entities this session's evidence holds."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.builtin.entity_grounding import checked
from evigate.rules.gate.actions import iter_user_texts
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import claim_entities
from evigate.rules.text.entities import EntityKind


class ActionEntityGroundingParams(RuleParams):
    """Values come from rules/metadata/action.entity_grounding.yaml, the one source of every default."""

    fields: list[str] = Field(min_length=1)
    entity_kinds: list[EntityKind]
    min_bare_number_digits: int = Field(ge=1, description="bare numbers with fewer digits are ignored")


class ActionEntityGrounding(Rule):
    """Every service, error code, identifier, time and key value an action or a gap names occurs in this session.

    Actions, gaps and hypotheses carry no required evidence, yet they are printed to the user as written. Each entity of
    `recommended_actions[].action_text` / `.reason`, `missing_info[]` and `hypotheses[].hypothesis_text` / `.basis`
    (not `.needed_evidence`, which may name what was not looked at yet; see `claim.entity_grounding` for what an
    entity is) is looked up in every invocation of the session — output, retrieval details, input, error — the
    trace summary and the user's query. An action naming something found nowhere ("重启 order-db-7") was invented:
    the item is dropped from the composer input and the answer. The verdict is not affected (`warn_only`): the
    claims decide it.
    """

    id = "action.entity_grounding"
    Params = ActionEntityGroundingParams

    def validate(self, context: RuleContext, params: ActionEntityGroundingParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for target, text, _ in iter_user_texts(context.data, params.fields):
            if ".needed_evidence[" in target:
                continue  # what a hypothesis still needs may name what was not looked at yet
            unknown = [
                entity for entity in claim_entities(context, text)
                if checked(entity, params.entity_kinds, params.min_bare_number_digits) and not entity.approximate
                and not context.session.occurs_in_session(entity)
            ]
            if unknown:
                names = ", ".join(f"'{entity.text}'" for entity in unknown[:8])
                findings.append(RuleFinding(target, f"names {names}, found nowhere in this session's evidence"))
        return findings
