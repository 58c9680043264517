"""docs/rules.md, generated from the rule index, metadata and rule docstrings (a test keeps the file in sync).

Regenerate with ``python -m evigate.rules.engine.docs > docs/rules.md``.
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from evigate.rules.engine.gatekeeper import Gatekeeper
from evigate.rules.thresholds import THRESHOLDS, Thresholds

HEADER = """# Gatekeeper rules

Generated from `rules/index.yaml`, `rules/metadata/<rule id>.yaml`, the rule classes in `rules/builtin/` and
`rules/thresholds.yaml` by `python -m evigate.rules.engine.docs > docs/rules.md` — do not edit by hand.

The Gatekeeper runs between the Executor and the Verifier (§9). Each rule reports findings at a field path
(`claims[0].evidence_bindings[1]`); a rule fails when any finding is fail-level, warns when all are warn-level.
`verdictImpact` decides what a failure does to the verdict: `reject_on_fail` forces REJECT and drops the claim
from everything a user sees, `low_confid_on_fail` forbids PASS (the claim counts as `unsupported` at best),
`warn_only` never blocks PASS. Override any of this without code: `Gatekeeper.from_yaml(path)` loads a user's copy,
`Gatekeeper.with_overrides({"evidence.excerpt_similarity": {"params": {"passThreshold": 0.6}}})` or the settings
keys `gatekeeper.rules_file` / `gatekeeper.overrides` do it per rule.

Before the rules, code rewrites junk claims beside a verbatim excerpt and adds, as observations that never lift the
verdict, the returned lines a capped claim quotes or that name the question's order, error code or trace. After the
rules, code confirms claims that only quote their cited output and caps what the Verifier model may call observed:
[confirmation.md](confirmation.md).

| rule | name | enabled | severity | verdictImpact |
|---|---|---|---|---|
"""


def _value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


THRESHOLDS_INTRO = """## Thresholds

Every other value code judges by — before, beside and after the rules — is in `rules/thresholds.yaml`, read once
(`evigate.rules.thresholds`); a test fails when such a value is written in code instead, or when this page or
[confirmation.md](confirmation.md) states another. Weights count 2 per CJK character and 1 per other character."""


def _field_name(model: BaseModel, name: str) -> str:
    return type(model).model_fields[name].alias or name


def render_thresholds(thresholds: Thresholds = THRESHOLDS) -> list[str]:
    """The thresholds section: one table per section of ``rules/thresholds.yaml``, with what each value decides."""
    lines = ["", THRESHOLDS_INTRO]
    for section_name in type(thresholds).model_fields:
        section = getattr(thresholds, section_name)
        key = _field_name(thresholds, section_name)
        lines += ["", f"### {key}", "", str(type(section).__doc__ or "").strip(), "",
                  "| threshold | value | decides |", "|---|---|---|"]
        for name, field in type(section).model_fields.items():
            value = _value(getattr(section, name))
            lines.append(f"| `{key}.{_field_name(section, name)}` | `{value}` | {field.description} |")
    return lines


def render_rules_markdown(gatekeeper: Gatekeeper | None = None) -> str:
    """The rules reference as Markdown, for the shipped rules unless another rule set is given."""
    gatekeeper = gatekeeper or Gatekeeper.default()
    lines = [HEADER.rstrip("\n")]
    for spec in gatekeeper.rules:
        lines.append(f"| [`{spec.id}`](#{spec.id.replace('.', '')}) | {spec.name} | {'yes' if spec.enabled else 'no'} "
                     f"| {spec.severity} | {spec.verdict_impact} |")
    for spec in gatekeeper.rules:
        rule = gatekeeper.rule_class(spec.id)
        lines += ["", f"## {spec.id}", "", f"**{spec.name}** — {spec.description}", "", rule.summary()]
        if rule.details():
            lines += ["", rule.details()]
        lines += ["", f"- enabled: `{str(spec.enabled).lower()}`", f"- severity: `{spec.severity}`",
                  f"- verdictImpact: `{spec.verdict_impact}`"]
        params = spec.params.model_dump(by_alias=True)
        if params:
            lines += ["", "| parameter | value |", "|---|---|"]
            lines += [f"| `{name}` | `{_value(value)}` |" for name, value in params.items()]
    lines += render_thresholds()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_rules_markdown(), end="")
