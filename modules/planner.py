"""Planner: picks a skill (runbook) from the domain's skills and emits concrete tool steps.

The model chooses the skill; code writes the steps: the skill's step templates with ``{placeholders}`` filled from
the entities in the query, so a plan only asks for what the question names. (Letting a small model write tool
arguments made it loop until its token budget ran out: 320 tokens and ~50 s per plan on the 0.5B default.) An
unknown skill falls back to the best text match; steps of a ``Plan`` given by other means (an injected planner,
``sanitize``) are checked the same way: unknown tools and arguments dropped. In round 2 the calls already made are
not repeated and each evidence gap gets a targeted lookup.

When the question names an error code that exactly one skill lists, that skill is taken without asking the model:
code is right there every time, and the 0.5B default asked anyway picked the deadlock runbook for an ERR_TIMEOUT
question (measured) while spending 13-17 s of a 30 s round budget. When it names no code but names a service, a
record or a time, the evidence names the candidates: an error-code census of those records (modules/census.py)
decides the skill the same way, and fills its ``{error_code}`` (and ``{time_window}`` when none was named).
Otherwise the model chooses among the ``shortlist_size`` best text matches, which also keeps its prompt short.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, get_args

import dspy

from evigate.domain import Domain, load_domain
from evigate.domain.skills import fill_placeholders, template_values
from evigate.modules.census import Candidate, census_filters, code_count, error_census
from evigate.modules.evidence_view import query_entities, step_key
from evigate.rules.text.entities import extract_entities
from evigate.rules.text.words import bigram_overlap, normalize
from evigate.signatures import Plan, PlanStep, RetryContext
from evigate.signatures.agents import PlanIncident

_MAX_STEPS = 8


class Planner(dspy.Module):
    """``planner(query=, retry_context=) -> Prediction(plan=Plan)``; skills, tools and vocabulary come from the
    domain (default: the default domain) unless given."""

    def __init__(
        self, skills: Sequence[Any] | None = None, registry: Any = None, shortlist_size: int = 3,
        domain: Domain | Any = None, source: Any = None,
    ) -> None:
        super().__init__()
        self.domain = load_domain(domain)
        self.skills = list(skills) if skills is not None else list(self.domain.skills)
        if not self.skills:
            raise ValueError(f"domain {self.domain.name!r} has no skills to plan with")
        self.shortlist_size = shortlist_size
        self.registry = registry if registry is not None else self.domain.build_registry()
        self.propose = dspy.Predict(PlanIncident)
        self._source = _Shared(source)

    @property
    def source(self) -> Any:
        """The data source the error-code census reads (the program sets it); None: no census."""
        return self._source.value

    @source.setter
    def source(self, value: Any) -> None:
        self._source = _Shared(value)

    def forward(self, query: str, retry_context: RetryContext | None = None) -> dspy.Prediction:
        decided = decisive_skill(self.skills, query, self.domain)
        if decided is not None:
            skill, code = decided
            proposal = Plan(skill=skill.id, rationale=f"问题中的错误码 {code} 只出现在该 skill 的适用场景中")
            plan = self.sanitize(proposal, query, retry_context, extra=self.reading_of(query, code))
            return dspy.Prediction(plan=plan, decided_by="rule")
        candidate = self.census(query)
        if candidate is not None:
            proposal = Plan(skill=candidate.skill.id, rationale=candidate.rationale(),
                            evidence_named=_evidence_named(candidate))
            plan = self.sanitize(proposal, query, retry_context, extra=_candidate_values(candidate))
            return dspy.Prediction(plan=plan, decided_by="evidence")
        shortlist = rank_skills(self.skills, query)[: self.shortlist_size]
        choice = self.propose(
            query=query,
            entities=query_entities(query, self.domain),
            skills=self.skill_menu(shortlist),
            retry_context=retry_context,
        ).choice
        proposal = Plan(skill=choice.skill, rationale=choice.rationale)
        return dspy.Prediction(plan=self.sanitize(proposal, query, retry_context), decided_by="model")

    def fallback(self, query: str, retry_context: RetryContext | None = None) -> Plan:
        """A plan without any model: the census's skill, else the best skill by text match, filled from the query."""
        candidate = self.census(query)
        if candidate is not None:
            plan = Plan(skill=candidate.skill.id, rationale=candidate.rationale(),
                        evidence_named=_evidence_named(candidate))
            return self.sanitize(plan, query, retry_context, extra=_candidate_values(candidate))
        skill = best_skill(self.skills, query)
        plan = Plan(skill=skill.id, rationale="deterministic fallback plan (planner model unavailable)")
        return self.sanitize(plan, query, retry_context)

    def census(self, query: str) -> Candidate | None:
        """The error code the records the question points at name most, owned by exactly one skill (see
        modules/census.py); None without a census tool or source, or when the question names a code itself."""
        tool = self._census_tool()
        if tool is None:
            return None
        entities = self.domain.extract_entities(query)
        if entities.get("error_codes"):
            return None  # the question's own code leads (decisive_skill, or the model among the matches)
        if unknown_services(query, self.domain):
            return None  # asked about a service we hold no records of: the window's codes are other services'
        handles = self.domain.vocabulary.incident_handles()

        def count(selection: Mapping[str, Any]) -> Candidate | None:
            return error_census(tool, self.source, selection, handles, lambda code: _owners(self.skills, code))

        found = count(entities)
        alternative = entities.get("alternative_window")
        later = count({**entities, "time_window": alternative}) if alternative else None
        if later is None:
            return found
        # "四点半" is 04:30 or 16:30: the reading whose records burst is the one asked about; when both do, the one
        # whose skill the question's words match better (a "两点多支付超时" is not the 02:00 batch's slow SQL)
        later = replace(later, time_window=later.time_window or alternative)
        if found is None or found.skill.id == later.skill.id:
            return found or later
        return later if rank_skills([found.skill, later.skill], query)[0] is later.skill else found

    def reading_of(self, query: str, code: str) -> dict[str, Any]:
        """The window values of the reading of an ambiguous hour ("四点半的 ERR_RATE_LIMITED") under which ``code``
        has records and the written reading has none; empty when the written reading stands."""
        tool = self._census_tool()
        entities = self.domain.extract_entities(query)
        alternative = entities.get("alternative_window")
        if tool is None or not alternative:
            return {}
        handles = self.domain.vocabulary.incident_handles()
        written, later = (code_count(tool, self.source, census_filters(tool, selection, handles), code)
                          for selection in (entities, {**entities, "time_window": alternative}))
        return _window_values(alternative) if later and not written else {}

    def _census_tool(self) -> Any | None:
        """The domain's census tool, when it has one registered and the program gave the Planner a data source."""
        name = getattr(self.domain, "census_tool", None)
        if self.source is None or not name or name not in set(self.registry.names()):
            return None
        return self.registry.get(name)

    def sanitize(self, proposal: Plan, query: str, retry_context: RetryContext | None,
                 extra: Mapping[str, Any] | None = None) -> Plan:
        """The proposal's steps checked (or its skill's template steps filled from the query and ``extra``)."""
        entities = self.domain.extract_entities(query)
        values = {**template_values(entities, query), **(extra or {})}
        skills = {skill.id: skill for skill in self.skills}
        skill = skills.get(proposal.skill) or best_skill(self.skills, query)
        steps = [step for step in (self._clean_step(s, values) for s in proposal.steps) if step is not None]
        if not steps:
            steps = [s for s in (self._clean_step(t, values) for t in skill.render(values)) if s is not None]
        if retry_context is not None:
            steps = self._round_two_steps(steps, retry_context)
        unique: dict[str, PlanStep] = {}
        for step in steps:
            unique.setdefault(step_key(step.tool, step.args), step)
        return Plan(skill=skill.id, steps=list(unique.values())[:_MAX_STEPS], rationale=proposal.rationale,
                    evidence_named=list(proposal.evidence_named), question_read=question_read(query, entities))

    def skill_menu(self, skills: Sequence[Any] | None = None) -> str:
        shown = self.skills if skills is None else skills
        return "\n".join(f"{skill.id}: {skill.when_to_use or skill.description}" for skill in shown)

    def _clean_step(self, step: PlanStep, values: Mapping[str, Any]) -> PlanStep | None:
        if step.tool not in set(self.registry.names()):
            return None
        tool = self.registry.get(step.tool)
        allowed = set(tool.Args.model_fields)
        args: dict[str, Any] = {}
        for key, value in step.args.items():
            if key not in allowed:
                continue
            filled = fill_placeholders(value, values)
            if filled is not None:
                args[key] = _fit(filled, tool.Args.model_fields[key].annotation)
        required = {name for name, field in tool.Args.model_fields.items() if field.is_required()}
        if not required <= set(args) or (step.args and not args):
            return None  # a step that asked for something the query does not name would fetch everything
        return PlanStep(tool=step.tool, args=args, purpose=step.purpose)

    def _round_two_steps(self, steps: list[PlanStep], retry: RetryContext) -> list[PlanStep]:
        done = set(retry.completed_queries)
        fresh = [step for step in steps if step_key(step.tool, step.args) not in done]
        if "lookup_knowledge" in set(self.registry.names()):
            for gap in retry.missing_evidence_facts[:3]:
                step = PlanStep(tool="lookup_knowledge", args={"query": gap[:120]}, purpose="补充证据缺口")
                if step_key(step.tool, step.args) not in done:
                    fresh.append(step)
        return fresh


def _fit(value: Any, annotation: Any) -> Any:
    """A number for a text-only argument becomes its text: `{order_id}` is an int, a log tool's business_id a str."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        accepted = set(get_args(annotation)) or {annotation}
        if str in accepted and not accepted & {int, float}:
            return str(value)
    return value


class _Shared:
    """A reference that copies of the module share: optimizers deep-copy modules, never a database connection."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __deepcopy__(self, memo: dict[int, Any]) -> _Shared:
        return self


def unknown_services(query: str, domain: Domain | Any) -> list[str]:
    """Names in ``query`` shaped like the domain's services (the same last part: "search-service" beside
    "payment-service") that the domain does not know. A hyphenated word of another shape ("cache-miss",
    "read-timeout") is no service name."""
    known = {name.casefold() for name in domain.vocabulary.services}
    tails = {name.rsplit("-", 1)[-1] for name in known if "-" in name}
    named = {entity.text.casefold() for entity in extract_entities(query) if entity.kind == "service"}
    return sorted(name for name in named if name not in known and "-" in name and name.rsplit("-", 1)[-1] in tails)


def question_read(query: str, entities: Mapping[str, Any]) -> list[str]:
    """The services and metrics the domain read in ``query`` that it does not write as such ("商品详情" is
    product-service, "缓存命中率" cache_hit_rate). The Gatekeeper reads a question by shape and knows no aliases;
    measured on train (when-zh-07, code alone): for "商品详情的缓存命中率是什么时候掉下来的？" the tool returned
    "first breach 2026-11-28 20:00 (cache_hit_rate=17.7%)", and the answer confirmed nothing, for the question named
    nothing code could find in a line."""
    folded = query.casefold()
    names = [*(entities.get("services") or []), *(entities.get("metrics") or [])]
    return [name for name in dict.fromkeys(str(name) for name in names) if name.casefold() not in folded]


def _evidence_named(candidate: Candidate) -> list[str]:
    """The census's code as an anchor of the question, unless only the widened selection (the window alone) named it:
    a window holds other incidents' records too (measured on the train split: the 09:30 pool exhaustion of
    payment-service confirmed for a settlement question whose window reached it)."""
    return [] if candidate.widened else [candidate.code]


def _candidate_values(candidate: Candidate) -> dict[str, Any]:
    values: dict[str, Any] = {"error_code": candidate.code}
    if candidate.time_window:
        values.update(_window_values(candidate.time_window))
    return values


def _window_values(window: str) -> dict[str, Any]:
    start, _, end = window.partition("/")
    return {"time_window": window, "start": start, "end": end}


def _owners(skills: Sequence[Any], code: str) -> list[Any]:
    """The skills whose text lists ``code``."""
    return [skill for skill in skills if code in set(_ERROR_CODE.findall(_skill_text(skill)))]


def best_skill(skills: Sequence[Any], query: str) -> Any:
    """The skill whose text shares most character bigrams (and error codes) with the query."""
    return rank_skills(skills, query)[0]


def rank_skills(skills: Sequence[Any], query: str) -> list[Any]:
    """Skills by text match with the query, best first: shared character bigrams plus named error codes."""
    folded = normalize(query)
    query_codes = set(_ERROR_CODE.findall(query))

    def score(skill: Any) -> float:
        text = _skill_text(skill)
        codes = query_codes & set(_ERROR_CODE.findall(text))
        return bigram_overlap(folded, normalize(text)) + 2.0 * len(codes)

    return sorted(skills, key=score, reverse=True)


def decisive_skill(skills: Sequence[Any], query: str, domain: Domain | Any = None) -> tuple[Any, str] | None:
    """(skill, code) when the query names an incident handle and an error code that exactly one skill lists.

    The handle (a service, an identifier such as an order or trace id, or a time) matters: "ERR_X 是什么意思" alone
    is a question about the code, which a different runbook answers, so that choice stays with the model. A time
    places the code in an incident: measured on train (0.5B default), "SLOW_SQL warnings piling up overnight. Which
    query is it?" was left to the model, which took the connection-pool runbook.
    """
    domain = load_domain(domain)
    entities = query_entities(query, domain)
    if not any(entities.get(key) for key in (*domain.vocabulary.incident_handles(), "time_window")):
        return None
    owners: dict[str, list[Any]] = {}
    for code in sorted(set(_ERROR_CODE.findall(query))):
        owners[code] = _owners(skills, code)
    decided = {skill.id: (skill, code) for code, found in owners.items() if len(found) == 1 for skill in found}
    return next(iter(decided.values())) if len(decided) == 1 else None


_ERROR_CODE = re.compile(r"[A-Z][A-Z0-9_]{3,}")


def _skill_text(skill: Any) -> str:
    return " ".join(str(getattr(skill, attr, "") or "") for attr in ("id", "name", "description", "when_to_use"))
