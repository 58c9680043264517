"""Scoring a Planner on the question bank against the demo world's truth (``evigate.demo.catalog.INCIDENTS``).

The whole module is scored, as users get it: code decides the skill first (an error code only one skill lists,
then the error-code census of the records the question points at), the model only otherwise.

Answerable question (its incident is known), score in [0, 1] = 0.5 skill + 0.25 services + 0.25 window:

* **skill**: 1 when the plan's skill is the incident's runbook, the one skill whose text lists the incident's
  error code (the same ownership rule the Planner's code uses), else 0;
* **services**: the share of the incident's services (its service and related services) that the plan's steps
  name in their arguments; a step that selects the incident's anchor order or trace names its service;
* **window**: the share of the incident's span (``start``–``end`` of the catalog, where its records are) that the
  plan's time windows cover, averaged over the steps that have one (parsed by the tools' own ``WindowArgs``); a
  plan that selects the incident's anchor order or trace by id counts as covering it (those are its records,
  whatever the window), and a plan with neither covers nothing. ``window_contains`` says whether it is all.

No-incident question (the world has nothing to find): score 1, unless code decided the skill (``decided_by`` rule or
evidence) and chose an incident's runbook, which is 0: a census must not turn a quiet hour into an incident. Which
skill the model picks there is not scored (any runbook finds nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cache
from typing import Any

from evigate.optimize.metric_base import CaseMetric

SKILL_WEIGHT, SERVICES_WEIGHT, WINDOW_WEIGHT = 0.5, 0.25, 0.25
CODE_DECIDED = ("rule", "evidence")


@dataclass
class PlannerScore:
    """One question's plan scored (see the module docstring); ``.case_id`` is the question id."""

    case_id: str
    score: float
    answerable: bool
    skill: str
    gold_skill: str | None
    decided_by: str
    skill_ok: bool
    services: float = 0.0
    window: float = 0.0
    window_contains: bool = False
    missing_services: tuple[str, ...] = ()
    error: str | None = None

    def feedback(self) -> str:
        if self.error:
            return f"The planner failed: {self.error}"
        if not self.answerable:
            return ("No incident answers this question. " + ("Code chose an incident's runbook for it."
                    if not self.skill_ok else "The plan did not claim an incident."))
        lines = [f"Skill {self.skill} is right." if self.skill_ok
                 else f"Skill {self.skill} is wrong; the incident's runbook is {self.gold_skill}."]
        if self.missing_services:
            lines.append(f"The steps do not look at: {', '.join(self.missing_services)}.")
        if not self.window_contains:
            lines.append(f"The time windows cover {self.window:.0%} of the incident's span.")
        return " ".join(lines)


@dataclass
class PlannerSummary:
    """Set-level figures of a Planner evaluation."""

    cases: int
    mean_score: float
    skill_accuracy: float
    services: float
    window: float
    window_contains_rate: float
    none_correct_rate: float
    model_decided: int
    errors: int
    by_decider: dict[str, int] = field(default_factory=dict)

    def metrics(self, prefix: str = "") -> dict[str, float]:
        values = {"score": self.mean_score, "skill_accuracy": self.skill_accuracy, "services": self.services,
                  "window": self.window, "window_contains_rate": self.window_contains_rate,
                  "none_correct_rate": self.none_correct_rate, "model_decided": float(self.model_decided),
                  "errors": float(self.errors), "cases": float(self.cases)}
        return {f"{prefix}{key}": value for key, value in values.items()}


@cache
def runbooks() -> dict[str, str]:
    """Incident id → the id of its runbook (the one skill whose text lists the incident's error code)."""
    from evigate.demo.catalog import INCIDENTS
    from evigate.demo.domain import demo_domain
    from evigate.modules.planner import _owners

    skills = demo_domain().skills
    found: dict[str, str] = {}
    for incident in INCIDENTS:
        owners = _owners(skills, incident.error_code)
        if len(owners) != 1:
            raise ValueError(f"{incident.incident_id}: {len(owners)} skills list {incident.error_code}, need one")
        found[incident.incident_id] = owners[0].id
    return found


class _WorldDay:
    """What ``WindowArgs.bounds`` asks of a data source: the day a bare clock time is on (the world's)."""

    def today(self) -> date:
        from evigate.demo.catalog import WORLD_DAY

        return WORLD_DAY.date()


def step_window(tool: Any, args: dict[str, Any]) -> tuple[datetime, datetime] | None:
    """The (start, end) a step's arguments select, read by the tool's own argument model; None without one."""
    try:
        parsed = tool.Args.model_validate(args)
        bounds = parsed.bounds(_WorldDay()) if hasattr(parsed, "bounds") else (None, None)
    except Exception:  # arguments the tool would refuse select nothing
        return None
    start, end = bounds
    return (start, end) if isinstance(start, datetime) and isinstance(end, datetime) else None


def _selects_anchor(args: dict[str, Any], incident: Any) -> bool:
    order, trace = incident.anchor_order_id, incident.anchor_trace_id
    return (order is not None and str(args.get("order_id")) == str(order)) or (
        trace is not None and str(args.get("trace_id")) == trace)


def _coverage(window: tuple[datetime, datetime], span: tuple[datetime, datetime]) -> float:
    overlap = (min(window[1], span[1]) - max(window[0], span[0])).total_seconds()
    return max(0.0, overlap) / max((span[1] - span[0]).total_seconds(), 1.0)


def score_plan(question: Any, plan: Any, decided_by: str, registry: Any, *, error: str | None = None) -> PlannerScore:
    """Score one plan for one question (see the module docstring); ``plan`` None (the module failed) scores 0."""
    from evigate.demo.catalog import incident_by_id

    gold = runbooks().get(question.incident) if question.incident else None
    skill = str(getattr(plan, "skill", "") or "")
    if plan is None:
        return PlannerScore(question.id, 0.0, gold is not None, "", gold, decided_by, False,
                            error=error or "no plan")
    if question.incident is None:
        wrong = decided_by in CODE_DECIDED and skill in set(runbooks().values())
        return PlannerScore(question.id, 0.0 if wrong else 1.0, False, skill, None, decided_by, not wrong)
    incident = incident_by_id(question.incident)
    steps = list(getattr(plan, "steps", []) or [])
    anchored = any(_selects_anchor(step.args, incident) for step in steps)
    named = " ".join(str(value) for step in steps for value in step.args.values())
    wanted = (incident.service, *incident.related_services)
    missing = tuple(name for name in wanted if name not in named and not (anchored and name == incident.service))
    services = 1.0 - len(missing) / len(wanted)
    windows = [found for step in steps if step.tool in registry
               and (found := step_window(registry.get(step.tool), step.args)) is not None]
    span = (incident.start, incident.end)
    window = 1.0 if anchored else (sum(_coverage(w, span) for w in windows) / len(windows) if windows else 0.0)
    skill_ok = skill == gold
    score = SKILL_WEIGHT * skill_ok + SERVICES_WEIGHT * services + WINDOW_WEIGHT * window
    return PlannerScore(question.id, score, True, skill, gold, decided_by, skill_ok, services, window,
                        window >= 1.0, missing)


def summarize_planner(scores: Sequence[PlannerScore]) -> PlannerSummary:
    answerable = [s for s in scores if s.answerable]
    quiet = [s for s in scores if not s.answerable]

    def mean(values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    deciders: dict[str, int] = {}
    for item in scores:
        deciders[item.decided_by] = deciders.get(item.decided_by, 0) + 1
    return PlannerSummary(
        cases=len(scores), mean_score=mean([s.score for s in scores]),
        skill_accuracy=mean([float(s.skill_ok) for s in answerable]), services=mean([s.services for s in answerable]),
        window=mean([s.window for s in answerable]),
        window_contains_rate=mean([float(s.window_contains) for s in answerable]),
        none_correct_rate=mean([float(s.skill_ok) for s in quiet]),
        model_decided=deciders.get("model", 0), errors=sum(1 for s in scores if s.error), by_decider=deciders,
    )


class PlannerMetric(CaseMetric):
    """The DSPy metric of the Planner (``example.question`` holds the bank's question)."""

    __name__ = "planner_metric"

    def __init__(self, *, feedback: bool = False, threshold: float = 0.9) -> None:
        super().__init__(feedback=feedback, threshold=threshold)
        from evigate.demo.domain import demo_registry

        self.registry = demo_registry()

    def score_case(self, example: Any, pred: Any) -> PlannerScore:
        plan = getattr(pred, "plan", None) if pred is not None else None
        return score_plan(example.question, plan, str(getattr(pred, "decided_by", "") or ""), self.registry)
