"""claim.entity_grounding — every entity a claim names occurs in the outputs it is bound to."""

from __future__ import annotations

from collections import Counter

from pydantic import Field

from evigate.rules.contract import claim_text, excerpt_of, iter_bindings, iter_claims
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import cited_views, claim_entities, format_ids
from evigate.rules.text.entities import Entity, EntityKind, entity_occurs
from evigate.rules.text.restating import NAME_KINDS, in_place, is_key, restatement, without


def _comparable(new: Entity, old: Entity) -> bool:
    """Whether a value the claim writes can stand for one the excerpt says: same kind (names as one kind), and not
    the same number in other units. (A name contained in the other, such as the Job `backup` of the pod
    `backup-q7wzt`, never gets here: names occur as substrings, so neither counts as written or replaced.)"""
    if new.kind == "number":
        return old.kind == "number" and not entity_occurs(new, old.text)
    return new.kind == old.kind or (new.kind in NAME_KINDS and old.kind in NAME_KINDS)


class EntityGroundingParams(RuleParams):
    """Values come from rules/metadata/claim.entity_grounding.yaml, the one source of every default."""

    entity_kinds: list[EntityKind]
    min_bare_number_digits: int = Field(ge=1, description="bare numbers with fewer digits are ignored")


def checked(entity: Entity, kinds: list[EntityKind], min_digits: int) -> bool:
    """Whether a rule with these parameters looks at an entity."""
    if entity.kind not in kinds:
        return False
    return entity.kind != "number" or entity.has_unit or entity.digits >= min_digits


def _differences(
    claim: list[Entity], quoted: list[Entity], text: str, excerpt: str
) -> tuple[list[Entity], list[Entity]]:
    """(entities the claim writes that its excerpt lacks, entities of the excerpt the claim lacks), counted as
    written: a bare "1" is not excused by the "0/1" beside it. Names also compare leniently (case variants)."""
    claim_count = Counter((entity.kind, entity.text) for entity in claim)
    quoted_count = Counter((entity.kind, entity.text) for entity in quoted)
    extra, lacking = claim_count - quoted_count, quoted_count - claim_count
    written = [entity for entity in claim if extra[(entity.kind, entity.text)]
               and (entity.kind == "number" or not entity_occurs(entity, excerpt))]
    replaced = [entity for entity in quoted if lacking[(entity.kind, entity.text)]
                and (entity.kind == "number" or not entity_occurs(entity, text))]
    return list(dict.fromkeys(written)), list(dict.fromkeys(replaced))


def _names_the_subject(context: RuleContext, entity: Entity) -> bool:
    """Whether a name (not a value) is one the user's question gave: "the KubeletTooManyPods alert" restates what
    was asked about. Values are never excused: a number must come from the evidence."""
    return entity.kind != "number" and bool(context.session.query) and entity_occurs(entity, context.session.query)


class EntityGrounding(Rule):
    """Every number, time, code, reason, version, address and name in a claim occurs in the invocations it cites.

    The claim's text is searched for entities (numbers with units, timestamps, `ERR_*` codes and exception names,
    Kubernetes reasons and statuses such as `OOMKilled` or `Evicted`, versions such as `v1.30.4`, IPv4/IPv6
    addresses, multipliers such as `x16`, trace/order/hex ids, kebab-, snake- and camelCase names, namespaces named
    as such, and the names of a deployment's vocabulary) and each is looked up in the cited invocations' output
    (the whole stored output where the preview was cut), retrieval details, input, tool name and trace summary.
    Numbers compare by value with units normalised (`5.3 秒` = `5.3s` = `5300ms`, `1Gi` = `1024Mi`; a bare
    `"latency_ms": 5300` takes its unit from the key), long integers digit for digit, a bare count only where it
    stands alone and, when the evidence labels its counts (`0 Failed`), against the count of the same label; an
    approximate number (`约 5 秒`, `over 90%`) matches within 15%. A claim that restates a verbatim excerpt must
    also carry that excerpt's values: writing `0/1 Running` for the quoted `1/1 Running` fails even when another
    row of the output holds `0/1`. A name the user's question gives (the alert or pod asked about) is not held
    against a claim; a value always is. A claim whose cited ids do not resolve is left to `evidence.invocation_ref`.
    An entity the cited outputs do not show is at best an inference from elsewhere: LOW_CONFID-level. If it
    occurs nowhere in the session, `claim.external_entity` rejects it.
    """

    id = "claim.entity_grounding"
    Params = EntityGroundingParams

    def validate(self, context: RuleContext, params: EntityGroundingParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for claim_index, claim in iter_claims(context.data):
            text = claim_text(claim)
            views = [view for _, binding in iter_bindings(claim) for view in cited_views(context, binding)]
            if not text or not views:
                continue
            missing = [
                entity for entity in claim_entities(context, text)
                if checked(entity, params.entity_kinds, params.min_bare_number_digits)
                and not context.session.occurs_in_bound(entity, views)
                and not _names_the_subject(context, entity)
            ]
            if missing:
                names = ", ".join(f"'{entity.text}'" for entity in missing[:8])
                unique = {view.id: view for view in views}
                findings.append(RuleFinding(
                    f"claims[{claim_index}].claim_text",
                    f"claim names {names}, not found in its cited invocations {format_ids(list(unique.values()))}",
                ))
                continue
            swapped = self._swapped(context, params, claim, text)
            if swapped:
                findings.append(RuleFinding(f"claims[{claim_index}].claim_text", swapped))
        return findings

    @staticmethod
    def _swapped(context: RuleContext, params: EntityGroundingParams, claim: dict, text: str) -> str:
        """A claim that restates a verbatim excerpt but writes one of its values differently ("0/1 Running" for
        the quoted "1/1 Running"): the changed value may occur elsewhere in a long output, yet the line the claim
        repeats does not say it."""
        checked_claim = [entity for entity in claim_entities(context, text)
                         if checked(entity, params.entity_kinds, params.min_bare_number_digits)]
        for _, binding in iter_bindings(claim):
            excerpt = excerpt_of(binding).strip()
            views = cited_views(context, binding)
            if not excerpt or not views or not any(excerpt in view.raw_preview for view in views):
                continue
            tools = {view.tool_name for view in views}
            quoted = [entity for entity in claim_entities(context, excerpt)
                      if checked(entity, params.entity_kinds, params.min_bare_number_digits)]
            written, replaced = _differences([e for e in checked_claim if e.text not in tools], quoted, text,
                                             excerpt)
            replaced = [entity for entity in replaced if not is_key(entity, excerpt)]
            if not written or not replaced:
                continue
            rest = excerpt
            for entity in replaced:  # the replaced values as tokens, not every "0" of "0/1"
                rest = without(rest, entity)
            for entity in quoted:  # values the claim gives in other units ("18d" as "18 天") are no words to match
                if entity.kind == "number" and entity.text not in text:
                    rest = without(rest, entity)
            how = restatement(rest, text)
            if how is None:
                continue
            for old in replaced:  # in order, a swapped value stands where the old one stood; reordered, anywhere
                new = next((entity for entity in written if _comparable(entity, old)
                            and (how == "reordered" or in_place(entity, text, old, excerpt))), None)
                if new is not None:
                    return f"claim restates its excerpt but writes '{new.text}' where the excerpt says '{old.text}'"
        return ""
