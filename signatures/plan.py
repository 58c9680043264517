"""The Planner's plan: a skill (runbook) and concrete tool steps."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class PlanStep(BaseModel):
    """One tool call the Executor should make."""

    tool: str = Field(description="tool name, e.g. query_logs")
    args: dict[str, Any] = Field(default_factory=dict)
    purpose: str = ""


class Plan(BaseModel):
    """Skill choice plus ordered tool steps."""

    skill: str = Field(description="id of the chosen skill/runbook")
    steps: list[PlanStep] = Field(default_factory=list)
    rationale: str = ""
    evidence_named: list[str] = Field(
        default_factory=list,
        description="what the evidence named for this question when the question did not (the error code of the "
                    "census of its records): code reads lines naming it as it reads the question's own anchors",
    )
    question_read: list[str] = Field(
        default_factory=list,
        description="names the domain's vocabulary read in the question though it does not write them (a service "
                    "by its alias, a metric by its words): code reads them as the question's own anchors",
    )
