"""One source of truth for every rule default (issue 13 item 15): the shipped YAML metadata.

The Params classes declare types and bounds; the values live in rules/metadata/<rule id>.yaml. A default left in a
Params class must equal the shipped value, every parameter must be set in the shipped file, and the Executor's
prompt may only quote phrases the hallucination rule actually forbids.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest
import yaml
from pydantic import BaseModel, Field

from evigate.rules import Gatekeeper
from evigate.rules.builtin import RULE_CLASSES
from evigate.signatures.agents import WriteEvidence


def _shipped_params(rule_id: str) -> dict:
    text = resources.files("evigate.rules").joinpath("metadata", f"{rule_id}.yaml").read_text("utf-8")
    return yaml.safe_load(text).get("params") or {}


@pytest.mark.parametrize("rule_id", sorted(RULE_CLASSES))
def test_every_parameter_is_set_in_the_shipped_metadata(rule_id: str) -> None:
    fields = RULE_CLASSES[rule_id].Params.model_fields
    missing = sorted(field.alias or name for name, field in fields.items())
    missing = [alias for alias in missing if alias not in _shipped_params(rule_id)]
    assert not missing, f"rules/metadata/{rule_id}.yaml does not set {missing}"


def drifted(params_model: type[BaseModel], shipped: dict) -> list[str]:
    """Parameters whose Python default differs from the shipped YAML value."""
    return [
        field.alias or name for name, field in params_model.model_fields.items()
        if not field.is_required() and field.get_default(call_default_factory=True) != shipped.get(field.alias or name)
    ]


@pytest.mark.parametrize("rule_id", sorted(RULE_CLASSES))
def test_no_python_default_drifts_from_the_shipped_value(rule_id: str) -> None:
    assert drifted(RULE_CLASSES[rule_id].Params, _shipped_params(rule_id)) == [], (
        f"Params defaults differ from rules/metadata/{rule_id}.yaml: keep the value in the YAML only"
    )


def test_the_gate_runs_on_exactly_the_shipped_values() -> None:
    for spec in Gatekeeper.default().rules:
        assert spec.params.model_dump(by_alias=True) == RULE_CLASSES[spec.id].Params.model_validate(
            _shipped_params(spec.id)
        ).model_dump(by_alias=True)


def test_the_executor_prompt_quotes_only_forbidden_phrases() -> None:
    quoted = re.search(r"claim_text 不得出现“([^”]+)”", WriteEvidence.__doc__ or "")
    assert quoted, "the Executor prompt no longer lists the forbidden phrases where this test looks"
    blacklist = set(_shipped_params("claim.hallucination_phrases")["blacklist"])
    assert set(quoted.group(1).split("、")) <= blacklist


def test_a_drifted_default_is_caught() -> None:
    from evigate.rules.builtin.entity_grounding import EntityGroundingParams

    class Drifted(EntityGroundingParams):
        min_bare_number_digits: int = Field(default=3, ge=1)

    shipped = _shipped_params("claim.entity_grounding")
    assert drifted(Drifted, shipped) == ["minBareNumberDigits"]
    assert drifted(EntityGroundingParams, shipped) == []
