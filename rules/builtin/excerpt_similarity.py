"""evidence.excerpt_similarity — §11.3: an evidence excerpt resembles what the cited tool returned."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import (
    EvidenceSource,
    cited_excerpts,
    claim_entities,
    excerpt_score,
    format_ids,
    is_verbatim,
)
from evigate.rules.gate.session import InvocationView
from evigate.rules.text.entities import entity_occurs
from evigate.rules.text.normalize import aligned_windows


class ExcerptSimilarityParams(RuleParams):
    """Values come from rules/metadata/evidence.excerpt_similarity.yaml, the one source of every default."""

    pass_threshold: float = Field(ge=0.0, le=1.0)
    warn_threshold: float = Field(ge=0.0, le=1.0)
    compare_against: list[EvidenceSource] = Field(min_length=1)
    check_entities: bool = Field(description="an excerpt's key values must occur in the cited output")

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.warn_threshold > self.pass_threshold:
            raise ValueError("warnThreshold must not exceed passThreshold")
        return self


class ExcerptSimilarity(Rule):
    """Each claim's `evidence_excerpt` resembles the output of the invocations it cites.

    The excerpt is compared with each cited invocation's `output_preview`, `retrieval_details` and, when given, the
    trace summary entry (`compareAgainst`); the best score counts. Similarity is the share of the excerpt
    (whitespace and punctuation ignored, case-folded, a CJK character weighing two) covered by character blocks it
    shares in order with the best-aligned window of the output. Blocks lighter than five units (four letters, a CJK
    pair) count as chance and are ignored, so Chinese, English and mixed text need no word segmentation. A verbatim
    excerpt scores 1.0; one written as "A … B" is scored piece by piece. When a preview ends with a truncation
    marker, the part of an excerpt that runs past its end is not held against it. Score ≥ `passThreshold` passes, ≥
    `warnThreshold` warns, below fails. With `checkEntities`, an excerpt whose key values (numbers with units,
    codes, ids, service names) do not occur in the cited outputs fails too: a near-verbatim line with one number
    changed is not what the tool said. Low similarity alone is LOW_CONFID-level: previews are truncated and
    summaries paraphrase (§11.3); copying another invocation's output is `evidence.misattribution`'s REJECT-level
    business.
    """

    id = "evidence.excerpt_similarity"
    Params = ExcerptSimilarityParams

    def validate(self, context: RuleContext, params: ExcerptSimilarityParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for cited in cited_excerpts(context):
            target, excerpt, views = cited.target, cited.excerpt, cited.views
            score = excerpt_score(context, excerpt, views, params.compare_against)
            if score < params.warn_threshold:
                findings.append(RuleFinding(target, f"excerpt similarity {score:.2f} < {params.warn_threshold:.2f} "
                                                    f"against invocation(s) {format_ids(views)}"))
                continue
            altered = self._altered_values(context, params, excerpt, views)
            if altered:
                findings.append(RuleFinding(target, f"excerpt values {altered} do not occur in invocation(s) "
                                                    f"{format_ids(views)}"))
            elif score < params.pass_threshold:
                findings.append(RuleFinding(target, f"excerpt similarity {score:.2f} < {params.pass_threshold:.2f} "
                                                    f"against invocation(s) {format_ids(views)}", "warn"))
        return findings

    @staticmethod
    def _altered_values(
        context: RuleContext, params: ExcerptSimilarityParams, excerpt: str, views: list[InvocationView]
    ) -> str:
        """Key values of the excerpt (numbers, codes, ids, services) that the cited outputs do not contain.

        A near-verbatim excerpt with one number changed ("timeout after 9800ms") scores high on similarity but is
        not what the tool said. Skipped for truncated previews, whose values may lie past the cut.
        """
        if not params.check_entities or is_verbatim(context, excerpt, views):
            return ""
        if any(view.truncated for view in views):
            return ""
        entities = [entity for entity in claim_entities(context, excerpt) if not entity.approximate]
        missing = [
            entity.text for entity in entities
            if entity.is_key_value and not context.session.occurs_in_bound(entity, views)
        ]
        if not missing:
            # A near copy of one line must carry that line's values: "0/1 Running" quoted from a row that says
            # "1/1 Running" is altered even when another row of the same table holds "0/1".
            windows = [window for view in views for window in aligned_windows(excerpt, view.raw_preview)]
            if windows:
                missing = [entity.text for entity in entities
                           if not any(entity_occurs(entity, window) for window in windows)]
        return ", ".join(f"'{text}'" for text in missing[:5])
