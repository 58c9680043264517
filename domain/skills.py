"""Skills: runbooks the Planner chooses from, shipped as one YAML file per skill.

A skill's steps are tool-call templates. Argument values may hold placeholders — `{order_id}`, `{error_code}`,
`{service}`, `{trace_id}`, `{time_window}`, `{metric}`, `{query}`, or any
identifier the domain's vocabulary names — with an optional default after a bar
(`{service|checkout-api}`). `Skill.render(values)` fills them: an argument whose placeholder has no value and no
default is dropped, and a step whose `requires` names a missing value is skipped, so a rendered plan only
contains calls the query gives grounds for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from evigate.errors import ConfigError
from evigate.files import read_yaml_bounded
from evigate.rules.text.vocabulary import singular
from evigate.signatures import PlanStep

PLACEHOLDER = re.compile(r"\{([a-z_]+)(?:\|([^{}]*))?\}")
KNOWN_PLACEHOLDERS: frozenset[str] = frozenset(
    {"error_code", "service", "time_window", "start", "end", "metric", "query", "time"}
)
"""Placeholders every domain fills; a vocabulary's identifiers (order_id, trace_id …) add their own."""


class SkillStep(BaseModel):
    """One templated tool call of a skill."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    purpose: str = ""
    requires: list[str] = Field(default_factory=list, description="placeholders without which the step is skipped")


class Skill(BaseModel):
    """A runbook: when it applies and which evidence to collect, in order."""

    id: str
    name: str
    description: str
    when_to_use: str
    steps: list[SkillStep] = Field(min_length=1)

    def placeholders(self) -> set[str]:
        """Every placeholder name the steps use."""
        names = set()
        for step in self.steps:
            names.update(step.requires)
            for value in step.args.values():
                if isinstance(value, str):
                    names.update(match.group(1) for match in PLACEHOLDER.finditer(value))
        return names

    def render(self, values: Mapping[str, Any]) -> list[PlanStep]:
        """Concrete plan steps for these placeholder values (see the module docstring for the rules)."""
        steps = []
        for step in self.steps:
            if any(values.get(name) in (None, "") for name in step.requires):
                continue
            args = {}
            for key, template in step.args.items():
                filled = fill_placeholders(template, values)
                if filled is not None:
                    args[key] = filled
            steps.append(PlanStep(tool=step.tool, args=args, purpose=step.purpose))
        return steps


def fill_placeholders(template: Any, values: Mapping[str, Any]) -> Any:
    """Fill ``{name}`` / ``{name|default}`` from ``values``; None when a placeholder has neither (drop the argument)."""
    if not isinstance(template, str):
        return template
    whole = PLACEHOLDER.fullmatch(template)
    if whole:  # a lone placeholder keeps the value's type (order_id stays an int)
        value = values.get(whole.group(1))
        return value if value not in (None, "") else whole.group(2)
    missing = False

    def substitute(match: re.Match[str]) -> str:
        nonlocal missing
        value = values.get(match.group(1))
        if value in (None, ""):
            if match.group(2) is None:
                missing = True
                return ""
            return match.group(2)
        return str(value)

    filled = PLACEHOLDER.sub(substitute, template)
    return None if missing else filled


def template_values(entities: Mapping[str, Any], query: str | None = None) -> dict[str, Any]:
    """Placeholder values from extracted entities: the first entity of each kind.

    Every plural list `<name>s` (order_ids, ticket_ids …) fills `{<name>}`; windows fill `{time_window}`,
    `{start}` and `{end}`; the question itself fills `{query}`.
    """
    values: dict[str, Any] = {}
    for key, items in entities.items():
        if key.endswith("s") and isinstance(items, list) and items:
            values[singular(key)] = items[0]
    window = entities.get("time_window")
    start, _, end = window.partition("/") if window else (None, "", None)
    values.update({"time_window": window, "start": start, "end": end or None, "query": query})
    return {key: value for key, value in values.items() if value not in (None, "")}


def load_skills(directory: str | Path, placeholders: Iterable[str] = ()) -> list[Skill]:
    """Every `*.yaml` skill in `directory`, sorted by id.

    `placeholders` names the identifier placeholders the domain's vocabulary fills, besides KNOWN_PLACEHOLDERS.
    Raises ConfigError naming the file for unreadable YAML, an invalid skill, a duplicate id or an unknown
    placeholder.
    """
    known = KNOWN_PLACEHOLDERS | frozenset(placeholders)
    folder = Path(directory)
    if not folder.is_dir():
        raise ConfigError(f"skill directory not found: {folder}")
    skills: dict[str, Skill] = {}
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = read_yaml_bounded(path, what="skill file")
        except ConfigError as exc:  # unreadable, not YAML or nested too deep: the file is no skill
            raise ConfigError(f"invalid skill: {exc}") from None
        try:
            skill = Skill.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(f"{path}: invalid skill: {exc}") from exc
        unknown = skill.placeholders() - known
        if unknown:
            raise ConfigError(f"{path}: unknown placeholders {sorted(unknown)}; known: {sorted(known)}")
        if skill.id in skills:
            raise ConfigError(f"{path}: duplicate skill id {skill.id!r}")
        skills[skill.id] = skill
    return [skills[key] for key in sorted(skills)]
