"""evidence.misattribution — §11.3 张冠李戴: a real invocation id, but the excerpt comes from another one."""

from __future__ import annotations

from pydantic import Field

from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.rules.gate.evidence import (
    EvidenceSource,
    cited_excerpts,
    claim_entities,
    distinctive_tokens,
    excerpt_score,
    format_ids,
)
from evigate.rules.gate.session import InvocationView
from evigate.rules.text.normalize import compact, fold

MAX_CANDIDATES = 2
MAX_PROBE_TOKENS = 4


class MisattributionParams(RuleParams):
    """Values come from rules/metadata/evidence.misattribution.yaml, the one source of every default."""

    fail_threshold: float = Field(ge=0.0, le=1.0)
    copy_threshold: float = Field(ge=0.0, le=1.0)
    min_excerpt_chars: int = Field(ge=1)
    min_foreign_entities: int = Field(ge=1)
    compare_against: list[EvidenceSource] = Field(min_length=1)


class Misattribution(Rule):
    """An excerpt that fails against the invocation it cites must not come from another invocation of the session.

    Fires only when the excerpt's similarity to the cited outputs is below `failThreshold` and either (a) the
    excerpt, at least `minExcerptChars` long and more than one token, nearly copies (≥ `copyThreshold`) another
    invocation's output, or (b) it names at least `minForeignEntities` services, error codes, identifiers or
    metric values that are absent from the cited outputs but all present in one other invocation. One shared value
    alone (a lone `92%` or `ERR_TIMEOUT` that also occurs elsewhere) is not misattribution. This is the REJECT-level
    case of §11.3 ("invocation 存在但 excerpt 明显指向另一个服务、错误码或指标值").
    """

    id = "evidence.misattribution"
    Params = MisattributionParams

    def validate(self, context: RuleContext, params: MisattributionParams) -> list[RuleFinding]:
        findings: list[RuleFinding] = []
        for cited in cited_excerpts(context):
            excerpt, views = cited.excerpt, cited.views
            score = excerpt_score(context, excerpt, views, params.compare_against)
            if score >= params.fail_threshold:
                continue
            message = self._copied(context, params, excerpt, views, score) or self._foreign(
                context, params, excerpt, views
            )
            if message:
                findings.append(RuleFinding(cited.target, message))
        return findings

    def _others(self, context: RuleContext, views: list[InvocationView]) -> list[InvocationView]:
        cited_ids = {view.id for view in views}
        return [view for view in context.session.in_session if view.id not in cited_ids]

    def _copied(
        self, context: RuleContext, params: MisattributionParams, excerpt: str, views: list[InvocationView],
        cited: float,
    ) -> str | None:
        tokens = distinctive_tokens(excerpt)
        if len(compact(fold(excerpt))) < params.min_excerpt_chars or len(tokens) < 2:
            return None
        probes = tokens[:MAX_PROBE_TOKENS]
        first, second = probes[0], probes[1]
        # A near copy contains the excerpt's two longest tokens: one flat pass finds the few candidates.
        candidates = [view for view in self._others(context, views) if first in view.raw_preview]
        candidates = [view for view in candidates if second in view.raw_preview]
        ranked = sorted(candidates, key=lambda view: -sum(token in view.raw_preview for token in probes))
        for other in ranked[:MAX_CANDIDATES]:
            score = excerpt_score(context, excerpt, [other], params.compare_against)
            if score >= params.copy_threshold:
                return (
                    f"excerpt matches invocation {format_ids([other])} ({score:.2f}), "
                    f"not the cited {format_ids(views)} ({cited:.2f})"
                )
        return None

    def _foreign(
        self, context: RuleContext, params: MisattributionParams, excerpt: str, views: list[InvocationView]
    ) -> str | None:
        foreign = [
            entity for entity in claim_entities(context, excerpt)
            if (entity.kind != "number" or entity.has_unit) and not context.session.occurs_in_bound(entity, views)
        ]
        if len(foreign) < params.min_foreign_entities:
            return None
        for other in self._others(context, views):
            if all(context.session.occurs_in_bound(entity, [other]) for entity in foreign):
                names = ", ".join(f"'{entity.text}'" for entity in foreign[:5])
                return (
                    f"excerpt names {names}, absent from the cited {format_ids(views)} "
                    f"but found in invocation {format_ids([other])}"
                )
        return None
