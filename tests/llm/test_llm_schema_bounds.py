"""bound_json_schema: every string/array/object a small model sees is bounded, nothing else changes."""

from __future__ import annotations

import copy
import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema, is_bounded, unbounded_paths
from evigate.signatures import ComposerOutput, ExecutorOutputV2, VerifierOutput

BOUNDS = SchemaBounds(max_string_length=40, max_array_items=3)


def test_free_string_and_array_get_the_configured_bounds() -> None:
    schema = {"type": "object", "properties": {"s": {"type": "string"}, "a": {"type": "array", "items": {}}}}
    bounded = bound_json_schema(schema, BOUNDS)
    assert bounded["properties"]["s"]["maxLength"] == 40
    assert bounded["properties"]["a"]["maxItems"] == 3
    assert bounded["additionalProperties"] is False


def test_declared_limits_are_kept_and_minimums_never_undercut() -> None:
    schema = {
        "type": "object",
        "properties": {
            "short": {"type": "string", "maxLength": 5},
            "long_min": {"type": "string", "minLength": 100},
            "few": {"type": "array", "items": {"type": "integer"}, "maxItems": 1},
            "many_min": {"type": "array", "items": {"type": "integer"}, "minItems": 10},
        },
    }
    props = bound_json_schema(schema, BOUNDS)["properties"]
    assert props["short"]["maxLength"] == 5
    assert props["long_min"]["maxLength"] == 100
    assert props["few"]["maxItems"] == 1
    assert props["many_min"]["maxItems"] == 10


def test_limits_above_the_grammar_ceiling_are_lowered_and_refused_as_defaults() -> None:
    schema = {"type": "array", "maxItems": 5000, "items": {"type": "string", "maxLength": 4096}}
    bounded = bound_json_schema(schema, SchemaBounds(ceiling=1000))
    assert bounded["maxItems"] == 1000 and bounded["items"]["maxLength"] == 1000
    with pytest.raises(ValueError, match="between 1 and 1000"):
        SchemaBounds(max_string_length=2048)


@pytest.mark.parametrize(
    "string_schema",
    [
        {"type": "string", "enum": ["a", "b"]},
        {"type": "string", "const": "executor_evidence_v2"},
        {"type": "string", "format": "date"},
        {"type": "string", "pattern": "^[a-z]{2}$"},
    ],
)
def test_strings_with_their_own_shape_are_left_alone(string_schema: dict) -> None:
    assert bound_json_schema(string_schema, BOUNDS) == string_schema


def test_refs_defs_anyof_and_type_lists_are_all_reached() -> None:
    schema = {
        "$defs": {"Item": {"type": "object", "properties": {"t": {"type": "string"}}}},
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
            "maybe": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "either": {"type": ["string", "null"]},
            "nested": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        },
    }
    bounded = bound_json_schema(schema, BOUNDS)
    assert bounded["$defs"]["Item"]["properties"]["t"]["maxLength"] == 40
    assert bounded["$defs"]["Item"]["additionalProperties"] is False
    assert bounded["properties"]["items"]["items"] == {"$ref": "#/$defs/Item"}
    assert bounded["properties"]["maybe"]["anyOf"][0]["maxLength"] == 40
    assert bounded["properties"]["either"]["maxLength"] == 40
    assert bounded["properties"]["nested"]["items"]["items"]["maxLength"] == 40
    assert is_bounded(bounded)
    assert set(unbounded_paths(schema)) == {
        "#/$defs/Item/properties/t",
        "#/properties/items",
        "#/properties/maybe/anyOf/0",
        "#/properties/either",
        "#/properties/nested",
        "#/properties/nested/items",
        "#/properties/nested/items/items",
    }


def test_close_objects_can_be_switched_off() -> None:
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}, "additionalProperties": True}
    assert bound_json_schema(schema, SchemaBounds(close_objects=False))["additionalProperties"] is True
    assert bound_json_schema(schema, SchemaBounds())["additionalProperties"] is False


def test_input_is_not_mutated_and_bad_input_is_refused() -> None:
    schema = ExecutorOutputV2.model_json_schema()
    before = copy.deepcopy(schema)
    bound_json_schema(schema)
    assert schema == before
    with pytest.raises(TypeError):
        bound_json_schema(["not", "a", "schema"])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        SchemaBounds(max_string_length=0)


@pytest.mark.parametrize("model", [ExecutorOutputV2, VerifierOutput, ComposerOutput])
def test_project_contracts_become_fully_bounded(model: type) -> None:
    schema = model.model_json_schema()
    assert not is_bounded(schema)
    bounded = bound_json_schema(schema)
    assert is_bounded(bounded), unbounded_paths(bounded)
    jsonschema.Draft202012Validator.check_schema(bounded)


_leaf = st.sampled_from(
    [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "string", "enum": ["x"]}, {"type": "null"}]
)
_schemas = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.builds(lambda items: {"type": "array", "items": items}, inner),
        st.builds(
            lambda props: {"type": "object", "properties": props, "required": sorted(props)},
            st.dictionaries(st.text("abcdef", min_size=1, max_size=4), inner, max_size=4),
        ),
        st.builds(lambda options: {"anyOf": options}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(_schemas)
def test_bounding_is_complete_and_idempotent(schema: dict) -> None:
    bounded = bound_json_schema(schema, BOUNDS)
    assert is_bounded(bounded)
    assert bound_json_schema(bounded, BOUNDS) == bounded


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=60),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text("abcdef", min_size=1, max_size=4), inner, max_size=4)
    ),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(_schemas, _values)
def test_bounding_only_narrows_what_is_valid(schema: dict, value: object) -> None:
    """Anything the bounded schema accepts, the original accepts too: bounds add limits, never shapes."""
    if jsonschema.Draft202012Validator(bound_json_schema(schema, BOUNDS)).is_valid(value):
        assert jsonschema.Draft202012Validator(schema).is_valid(value), json.dumps(value)


def test_field_limits_tighten_named_fields_wherever_they_occur() -> None:
    bounds = SchemaBounds.create(field_limits={"claims": 3, "evidence_excerpt": 80, "evidence_bindings": 2})
    bounded = bound_json_schema(ExecutorOutputV2.model_json_schema(), bounds)
    assert bounded["properties"]["claims"]["maxItems"] == 3
    binding = bounded["$defs"]["EvidenceBinding"]["properties"]
    assert binding["evidence_excerpt"]["maxLength"] == 80
    assert bounded["$defs"]["Claim"]["properties"]["evidence_bindings"] == {
        **bounded["$defs"]["Claim"]["properties"]["evidence_bindings"],
        "maxItems": 2,
        "minItems": 1,
    }
    assert bounded["$defs"]["RecommendedAction"]["properties"]["evidence_bindings"]["maxItems"] == 2
    assert binding["tool_name"]["maxLength"] == bounds.max_string_length  # others keep the default
    assert is_bounded(bounded)


def test_a_field_limit_never_undercuts_a_declared_minimum_or_loosens_a_declared_maximum() -> None:
    schema = {
        "type": "object",
        "properties": {
            "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 2},
            "note": {"anyOf": [{"type": "string", "maxLength": 10}, {"type": "null"}]},
        },
    }
    props = bound_json_schema(schema, SchemaBounds.create(field_limits={"ids": 1, "note": 50}))["properties"]
    assert props["ids"]["maxItems"] == 2
    assert props["note"]["anyOf"][0]["maxLength"] == 10


def test_omitted_fields_leave_the_schema_and_its_required_list() -> None:
    from dspy.adapters.json_adapter import _get_structured_outputs_response_format

    from evigate.signatures.agents import WriteEvidence

    # What DSPy's JSON adapter sends: every property required, defaults or not.
    sent = _get_structured_outputs_response_format(WriteEvidence, False).model_json_schema()
    bounds = SchemaBounds.create(omit_fields=["source_type", "source_id", "RecommendedAction.evidence_bindings"])
    bounded = bound_json_schema(sent, bounds)
    binding = bounded["$defs"]["EvidenceBinding"]
    assert "source_type" not in binding["properties"] and "source_id" not in binding["properties"]
    assert set(binding["required"]) == {"tool_name", "source_invocation_ids", "evidence_excerpt"}
    assert "evidence_bindings" in bounded["$defs"]["Claim"]["properties"]  # a qualified name stays in its object
    action = bounded["$defs"]["RecommendedAction"]
    assert "evidence_bindings" not in action["properties"] and "evidence_bindings" not in action["required"]
    # What the model may write under the bounded schema still validates as the contract.
    sample = {
        "executor_output": {
            "answer_version": "executor_evidence_v2",
            "claims": [
                {
                    "claim_id": "claim-1",
                    "claim_type": "symptom",
                    "claim_text": "t",
                    "support_level": "direct",
                    "evidence_bindings": [
                        {"tool_name": "query_order", "source_invocation_ids": [1], "evidence_excerpt": "x"}
                    ],
                }
            ],
            "hypotheses": [],
            "recommended_actions": [{"action_text": "a", "reason": "r"}],
            "missing_info": [],
        }
    }
    jsonschema.validate(sample, bounded)
    ExecutorOutputV2.model_validate(sample["executor_output"])


def test_field_limits_are_validated() -> None:
    with pytest.raises(ValueError, match="claims"):
        SchemaBounds.create(field_limits={"claims": 0})


def test_per_call_enums_narrow_fields() -> None:
    from evigate.llm.constraints import Constraints

    assert not Constraints()
    outer = {"source_invocation_ids[]": [7, 8], "EvidenceBinding.tool_name": ["query_logs"]}
    enums = Constraints.create(field_enums={**outer, "missing": []}).field_enums  # empty lists constrain nothing
    assert [name for name, _ in enums] == ["EvidenceBinding.tool_name", "source_invocation_ids[]"]
    bounded = bound_json_schema(ExecutorOutputV2.model_json_schema(), SchemaBounds(field_enums=enums))
    binding = bounded["$defs"]["EvidenceBinding"]["properties"]
    assert binding["source_invocation_ids"]["items"]["enum"] == [7, 8]
    assert binding["tool_name"]["enum"] == ["query_logs"] and "maxLength" not in binding["tool_name"]


def test_object_variants_keep_values_that_belong_together() -> None:
    from evigate.llm.constraints import Constraints

    choices = [
        {"tool_name": ["query_order"], "source_invocation_ids[]": [7]},
        {"tool_name": ["query_logs"], "source_invocation_ids[]": [8, 9]},
        {"tool_name": []},  # nothing to constrain: dropped
    ]
    constraints = Constraints.create(object_variants={"EvidenceBinding": choices})
    bounds = SchemaBounds(object_variants=constraints.object_variants, omit_fields=frozenset({"source_type"}))
    bounded = bound_json_schema(ExecutorOutputV2.model_json_schema(), bounds)
    assert is_bounded(bounded)
    binding_schema = {"$ref": "#/$defs/EvidenceBinding", "$defs": bounded["$defs"]}

    def binding(tool: str, ids: list[int]) -> dict[str, Any]:
        return {"tool_name": tool, "source_invocation_ids": ids, "evidence_excerpt": "x"}

    jsonschema.validate(binding("query_order", [7]), binding_schema)
    jsonschema.validate(binding("query_logs", [9, 8]), binding_schema)
    for wrong in (binding("query_order", [8]), binding("query_logs", [7]), binding("query_logs", [123])):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, binding_schema)
    assert (
        SchemaBounds.create(object_variants={"EvidenceBinding": choices[:2]}).object_variants == bounds.object_variants
    )
