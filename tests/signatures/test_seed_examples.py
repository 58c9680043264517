"""Every JSON example printed in the two seed documents validates against its contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from evigate.signatures import CONTRACTS, ExecutorOutputV2, ToolTraceEntry, VerifierInput

EXAMPLES = sorted((Path(__file__).parent / "seed_examples").glob("*.json"))


def test_all_seed_examples_are_present() -> None:
    assert len(EXAMPLES) == 16


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_seed_example_validates(path: Path) -> None:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    contract, example = fixture["contract"], fixture["example"]
    if contract == "ToolTraceEntry[]":
        entries = TypeAdapter(list[ToolTraceEntry]).validate_python(example)
        assert entries[1].success is False and entries[1].evidence_level == "none"
        return
    if contract == "VerifierInput~fragment":
        # §13.1 sketches only the payload keys the Gatekeeper adds; they must all be VerifierInput fields.
        assert set(example) <= set(VerifierInput.model_fields)
        return
    name, _, wrapper = contract.partition("@")
    model = CONTRACTS[name]
    instance = model.model_validate(example[wrapper] if wrapper else example)
    again = model.model_validate_json(instance.model_dump_json())
    assert again == instance


def test_executor_output_keeps_deprecated_fields_for_the_gatekeeper() -> None:
    output = ExecutorOutputV2.model_validate({"claims": [], "user_facing_answer": "根因已确认"})
    assert output.model_extra == {"user_facing_answer": "根因已确认"}
    assert output.hypotheses == [] and output.missing_info == []


def test_llm_facing_schema_asks_for_non_empty_bindings() -> None:
    schema = json.dumps(ExecutorOutputV2.model_json_schema())
    assert '"minItems": 1' in schema


def test_every_contract_has_a_json_schema() -> None:
    for name, model in CONTRACTS.items():
        assert model.model_json_schema()["title"] == name
