"""claim.external_entity — §17 "新增证据外…": a claim names an entity that occurs nowhere in the session."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.builtin.entity_grounding import checked
from evigate.rules.contract import claim_text, iter_bindings, iter_claims
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import cited_views, claim_entities
from evigate.rules.text.entities import EntityKind


class ExternalEntityParams(RuleParams):
    """Values come from rules/metadata/claim.external_entity.yaml, the one source of every default."""

    entity_kinds: list[EntityKind]
    min_bare_number_digits: int = Field(ge=1, description="bare numbers with fewer digits are ignored")
    include_approximate: bool = Field(description="whether 约 5 秒 / about 90% can be forged values")


class ExternalEntity(Rule):
    """No claim names a service, error code, identifier, time or key value that occurs nowhere in the session.

    An entity of a claim (see `claim.entity_grounding`) is looked up first in the claim's cited invocations, then
    in every invocation of this session — output preview, retrieval details, input, error — the trace summary and
    the user's query. One found nowhere was invented: the claim is forged evidence, the rule is `reject_on_fail`
    and the claim is dropped from everything a user sees. Bare numbers shorter than `minBareNumberDigits` (a
    "2 个实例") and approximate values are not treated as key values, so ordinary counting never rejects.
    """

    id = "claim.external_entity"
    Params = ExternalEntityParams

    def validate(self, context: RuleContext, params: ExternalEntityParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        session = context.session
        for claim_index, claim in iter_claims(context.data):
            text = claim_text(claim)
            if not text:
                continue
            entities = [
                entity for entity in claim_entities(context, text)
                if checked(entity, params.entity_kinds, params.min_bare_number_digits)
                and (params.include_approximate or not entity.approximate)
            ]
            if not entities:
                continue
            views = [view for _, binding in iter_bindings(claim) for view in cited_views(context, binding)]
            unknown = [
                entity for entity in entities
                if not session.occurs_in_bound(entity, views) and not session.occurs_in_session(entity)
            ]
            if unknown:
                names = ", ".join(f"'{entity.text}'" for entity in unknown[:8])
                findings.append(RuleFinding(
                    f"claims[{claim_index}].claim_text",
                    f"claim names {names}, found nowhere in this session's tool outputs, inputs or the query",
                ))
        return findings
