"""claim.evidence_utilization — §11.5: a claim's key terms appear in its own excerpts (warning only)."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.contract import claim_text, excerpt_of, iter_bindings, iter_claims
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import claim_entities
from evigate.rules.text.entities import entity_occurs
from evigate.rules.text.normalize import compact, fold
from evigate.rules.text.words import stopwords, terms

STOPWORDS = stopwords("core", "function", "quantity", "cjk_filler")
"""Grammar and quantity words, and the character pairs any incident report holds (出现, 相关): no key terms."""


def keywords(text: str) -> set[str]:
    """Content units of a text without word segmentation: words of three or more characters holding a letter
    (pay-gateway, err_timeout; a bare number is an entity, counted by value), CJK character pairs; no stopwords."""
    units = terms(fold(text), "-", min_chars=3)
    return {unit for unit in units if unit not in STOPWORDS and any(char.isalpha() for char in unit)}


class EvidenceUtilizationParams(RuleParams):
    min_keyword_coverage: float = Field(ge=0.0, le=1.0)


class EvidenceUtilization(Rule):
    """The key terms of a claim occur in its own evidence excerpts (warn-only; disabled by default).

    Key terms are the claim's entities (numbers by value), its latin words of three or more letters and its CJK
    character pairs; coverage is the share of them found in the claim's excerpts. Below `minKeywordCoverage` the
    claim gets a warning. Character pairs stand in for Chinese words, so paraphrase lowers coverage: that is why
    the rule never fails the gate (§24, "避免中文分词误杀").
    """

    id = "claim.evidence_utilization"
    Params = EvidenceUtilizationParams

    def validate(self, context: RuleContext, params: EvidenceUtilizationParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for claim_index, claim in iter_claims(context.data):
            text = claim_text(claim)
            excerpts = fold("\n".join(excerpt_of(binding) for _, binding in iter_bindings(claim)))
            if not text.strip() or not excerpts.strip():
                continue
            entities = claim_entities(context, text)
            terms = keywords(text)
            for entity in entities:  # an entity counts once, by value, not by its characters
                terms -= keywords(entity.text)
            haystack = compact(excerpts)
            found = sum(1 for term in terms if compact(term) in haystack)
            found += sum(1 for entity in entities if entity_occurs(entity, excerpts))
            total = len(terms) + len(entities)
            coverage = found / total if total else 1.0
            if coverage < params.min_keyword_coverage:
                findings.append(RuleFinding(
                    f"claims[{claim_index}].claim_text",
                    f"only {coverage:.0%} of the claim's key terms occur in its excerpts "
                    f"(minimum {params.min_keyword_coverage:.0%})",
                    "warn",
                ))
        return findings
