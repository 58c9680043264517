"""Loading the YAML data tests of tests/rules/cases (sqlfluff style): one file per rule, named cases in each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evigate.rules.text.vocabulary import EntityVocabulary
from evigate.signatures import ToolInvocation, ToolTraceEntry

CASES_DIR = Path(__file__).parent / "cases"


def load_yaml(name: str) -> dict[str, Any]:
    return yaml.safe_load((CASES_DIR / name).read_text("utf-8"))


WORLD = load_yaml("_world.yaml")


def world_invocations() -> list[ToolInvocation]:
    return [ToolInvocation.model_validate(item) for item in WORLD["invocations"]]


def binding(spec: Any) -> dict[str, Any]:
    """``[ids, tool, excerpt]`` shorthand (ids an int or a list), or a full binding mapping."""
    if isinstance(spec, dict):
        return spec
    ids, tool, excerpt = spec
    return {
        "source_type": "tool_trace",
        "source_id": None,
        "tool_name": tool,
        "source_invocation_ids": ids if isinstance(ids, list) else [ids],
        "evidence_excerpt": excerpt,
    }


def claim(spec: dict[str, Any], index: int) -> Any:
    """Claim shorthand: text, type (symptom), id (claim-N), support (direct), bindings."""
    if "claim_text" in spec or "raw" in spec:
        return spec.get("raw", spec)
    return {
        "claim_id": spec.get("id", f"claim-{index + 1}"),
        "claim_type": spec.get("type", "symptom"),
        "claim_text": spec["text"],
        "support_level": spec.get("support", "direct"),
        "evidence_bindings": [binding(item) for item in spec.get("bindings", [])],
    }


def executor_output(case: dict[str, Any]) -> Any:
    """The raw executor output a case describes: ``raw`` text, a full ``output`` value, or ``claims`` shorthand."""
    if "raw" in case:
        return case["raw"]
    if "output" in case:
        return case["output"]
    output: dict[str, Any] = {
        "answer_version": "executor_evidence_v2",
        "claims": [claim(item, i) for i, item in enumerate(case.get("claims", []))],
    }
    for key in ("hypotheses", "recommended_actions", "missing_info"):
        if key in case:
            output[key] = case[key]
    return output


@dataclass
class RuleCase:
    rule: str
    name: str
    data: dict[str, Any]
    file_overrides: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.rule}::{self.name}"

    def vocabulary(self) -> EntityVocabulary | None:
        """The case's ``vocabulary`` (services, error_codes, identifiers, id_patterns), if it gives one."""
        spec = self.data.get("vocabulary")
        if not spec:
            return None
        return EntityVocabulary(
            services=frozenset(spec.get("services", ())), error_codes=frozenset(spec.get("error_codes", ())),
            identifiers=frozenset(spec.get("identifiers", ())), id_patterns=tuple(spec.get("id_patterns", ())),
        )

    def invocations(self) -> list[ToolInvocation]:
        extra = [ToolInvocation.model_validate(item) for item in self.data.get("invocations", [])]
        replaced = {item.id for item in extra}
        return [item for item in world_invocations() if item.id not in replaced] + extra

    def trace_summary(self) -> list[ToolTraceEntry] | None:
        trace = self.data.get("trace_summary")
        return [ToolTraceEntry.model_validate(item) for item in trace] if trace else None

    def overrides(self) -> dict[str, Any]:
        merged = dict(self.file_overrides)
        for rule_id, entry in (self.data.get("overrides") or {}).items():
            merged[rule_id] = {**merged.get(rule_id, {}), **entry}
        return merged


def rule_cases() -> list[RuleCase]:
    cases = []
    # cases/<rule id>.yaml, plus cases/<topic>/<class>.yaml for one class of input (e.g. entities/versions.yaml)
    for path in sorted(CASES_DIR.glob("*.yaml")) + sorted(CASES_DIR.glob("*/*.yaml")):
        document = yaml.safe_load(path.read_text("utf-8"))
        if not isinstance(document, dict) or "rule" not in document:
            continue
        assert path.parent != CASES_DIR or path.stem == document["rule"], f"{path.name}: name must be the rule id"
        for case in document["cases"]:
            cases.append(RuleCase(document["rule"], case["name"], case, document.get("overrides") or {}))
    return cases
