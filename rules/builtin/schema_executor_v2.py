"""schema.executor_v2 — §11.1 plus empty bindings and empty invocation ids (format degradation, §24)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from evigate.rules.contract import (
    ACTIONS,
    ANSWER_VERSION_KEY,
    BINDINGS,
    CLAIM_ID,
    CLAIM_TEXT,
    CLAIMS,
    EXCERPT,
    HYPOTHESES,
    INVOCATION_IDS,
    MISSING_INFO,
    TOOL_NAME,
)
from evigate.rules.gate.base import Rule, RuleContext, RuleFinding, RuleParams
from evigate.signatures import ANSWER_VERSION, DEPRECATED_EXECUTOR_FIELDS, Claim, Hypothesis, RecommendedAction

OPTIONAL_ARRAYS: tuple[str, ...] = (HYPOTHESES, ACTIONS, MISSING_INFO)
MAX_ERRORS_PER_ITEM = 6


def normalize_executor_output(data: Any, optional_arrays: tuple[str, ...] = OPTIONAL_ARRAYS) -> dict[str, Any] | None:
    """§11.1 normalisation: a missing (or null) optional array becomes ``[]``. Anything but an object → None.

    The input is never modified; Verifier and Composer may assume the three arrays exist.
    """
    if not isinstance(data, dict):
        return None
    normalized = dict(data)
    for name in optional_arrays:
        if normalized.get(name) is None:
            normalized[name] = []
    return normalized


def _path(prefix: str, loc: tuple[Any, ...]) -> str:
    path = prefix
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def _pydantic_findings(model: type[BaseModel], item: Any, prefix: str) -> list[RuleFinding]:
    try:
        model.model_validate(item)
    except ValidationError as error:
        findings = []
        for detail in error.errors(include_url=False, include_input=False)[:MAX_ERRORS_PER_ITEM]:
            findings.append(RuleFinding(_path(prefix, tuple(detail["loc"])), detail["msg"]))
        return findings
    return []


class SchemaExecutorV2Params(RuleParams):
    required_fields: list[str] = Field(default_factory=lambda: [ANSWER_VERSION_KEY, CLAIMS])
    deprecated_fields: list[str] = Field(default_factory=lambda: list(DEPRECATED_EXECUTOR_FIELDS))
    answer_version: str = ANSWER_VERSION


class SchemaExecutorV2(Rule):
    """The executor output is a V2 object: right version, a claims array, no V1 fields, well-formed items.

    Checks that the output is a JSON object; `answer_version` is `executor_evidence_v2`; `claims` exists and is an
    array; `hypotheses`, `recommended_actions` and `missing_info` are arrays when present (missing or null ones are
    normalised to `[]` before anything else sees the output); the deprecated V1 fields `diagnosis_summary` and
    `user_facing_answer` are absent; every claim, hypothesis and action honours its contract in
    `evigate.signatures` (claim types, support levels, non-empty `evidence_bindings`, non-empty integer
    `source_invocation_ids`); claim ids are unique and no required text is blank. A failure is format
    degradation, not forgery, so it lowers the verdict to LOW_CONFID rather than REJECT (§24).
    """

    id = "schema.executor_v2"
    Params = SchemaExecutorV2Params

    def validate(self, context: RuleContext, params: SchemaExecutorV2Params) -> list[RuleFinding]:
        data = context.data
        if not isinstance(data, dict):
            return [RuleFinding("$", f"executor output is not a JSON object (parse status: {context.parse_status})")]
        findings: list[RuleFinding] = []
        for name in params.required_fields:
            if name not in data:
                findings.append(RuleFinding(name, f"required field '{name}' is missing"))
        if ANSWER_VERSION_KEY in data and data[ANSWER_VERSION_KEY] != params.answer_version:
            got = repr(data[ANSWER_VERSION_KEY])[:80]
            expected = params.answer_version
            findings.append(RuleFinding(ANSWER_VERSION_KEY, f"{ANSWER_VERSION_KEY} must be '{expected}', got {got}"))
        for name in params.deprecated_fields:
            if name in data:
                findings.append(RuleFinding(name, f"deprecated V1 field '{name}' must not appear in a V2 output"))
        findings.extend(self._claims(data.get(CLAIMS), CLAIMS in data))
        findings.extend(self._items(data.get(HYPOTHESES), HYPOTHESES, Hypothesis))
        findings.extend(self._items(data.get(ACTIONS), ACTIONS, RecommendedAction))
        missing_info = data.get(MISSING_INFO)
        if isinstance(missing_info, list):
            findings.extend(
                RuleFinding(f"{MISSING_INFO}[{index}]", f"{MISSING_INFO} entries must be strings")
                for index, item in enumerate(missing_info) if not isinstance(item, str)
            )
        elif missing_info is not None:
            findings.append(RuleFinding(MISSING_INFO, f"{MISSING_INFO} must be an array"))
        return findings

    def _claims(self, claims: Any, present: bool) -> list[RuleFinding]:
        if not present:
            return []
        if not isinstance(claims, list):
            return [RuleFinding(CLAIMS, f"{CLAIMS} must be an array")]
        findings: list[RuleFinding] = []
        seen: dict[str, int] = {}
        for index, claim in enumerate(claims):
            prefix = f"{CLAIMS}[{index}]"
            if not isinstance(claim, Mapping):
                findings.append(RuleFinding(prefix, "a claim must be an object"))
                continue
            findings.extend(_pydantic_findings(Claim, claim, prefix))
            findings.extend(_blank_texts(claim, prefix, (CLAIM_ID, CLAIM_TEXT)))
            claim_id = claim.get(CLAIM_ID)
            if isinstance(claim_id, str) and claim_id.strip():
                if claim_id in seen:
                    findings.append(RuleFinding(
                        f"{prefix}.{CLAIM_ID}", f"{CLAIM_ID} '{claim_id[:80]}' repeats {CLAIMS}[{seen[claim_id]}]"
                    ))
                seen.setdefault(claim_id, index)
            bindings = claim.get(BINDINGS)
            if bindings == []:  # the contract lets it parse; the Gatekeeper is where emptiness is judged
                findings.append(RuleFinding(
                    f"{prefix}.{BINDINGS}", f"claim has no {BINDINGS} (format degradation, not forgery)"
                ))
            for position, binding in enumerate(bindings if isinstance(bindings, list) else []):
                if isinstance(binding, Mapping):
                    findings.extend(self._binding(binding, f"{prefix}.{BINDINGS}[{position}]"))
        return findings

    @staticmethod
    def _binding(binding: Mapping[str, Any], prefix: str) -> list[RuleFinding]:
        findings = _blank_texts(binding, prefix, (TOOL_NAME, EXCERPT))
        ids = binding.get(INVOCATION_IDS)
        if ids == []:
            findings.append(RuleFinding(
                f"{prefix}.{INVOCATION_IDS}", f"binding has no {INVOCATION_IDS} (format degradation, not forgery)",
            ))
        if isinstance(ids, list) and any(isinstance(value, bool) for value in ids):
            findings.append(RuleFinding(f"{prefix}.{INVOCATION_IDS}", "invocation ids must be integers, not booleans"))
        return findings

    @staticmethod
    def _items(items: Any, name: str, model: type[BaseModel]) -> list[RuleFinding]:
        if items is None:
            return []
        if not isinstance(items, list):
            return [RuleFinding(name, f"{name} must be an array")]
        findings: list[RuleFinding] = []
        for index, item in enumerate(items):
            findings.extend(_pydantic_findings(model, item, f"{name}[{index}]"))
        return findings


def _blank_texts(obj: Mapping[str, Any], prefix: str, fields: tuple[str, ...]) -> list[RuleFinding]:
    return [
        RuleFinding(f"{prefix}.{name}", f"{name} must not be blank")
        for name in fields
        if isinstance(obj.get(name), str) and not obj[name].strip()
    ]
