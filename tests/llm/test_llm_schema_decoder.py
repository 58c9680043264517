"""Schema-directed decoding without a model: a scripted vocabulary and logits drive `schema_decoder.decode`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import jsonschema
import numpy as np
import pytest
from dspy.adapters.json_adapter import _get_structured_outputs_response_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema
from evigate.llm.schema_decoder import decode
from evigate.llm.schema_plan import Array, FreeString, Literal, Object, Sequential, UnsupportedSchema, compile_schema
from evigate.llm.token_table import TokenTable, utf8_open
from evigate.settings import DEFAULT_LOCAL_BOUNDS, DEFAULT_LOCAL_FIELD_LIMITS
from evigate.signatures import agents

# Every single byte (as byte-level BPE vocabularies have), then multi-byte pieces a JSON writer would use.
PIECES = [bytes([b]) for b in range(256)] + [
    piece.encode("utf-8")
    for piece in [
        '{"', '": "', '", "', '"}', '"]', '",', "claim", "_id", "订单", "超时", "支付", "失败", "ERR_TIMEOUT", " 123",
        "12", "7", "72", "direct", "ind", "query", "_logs", "_order", ", ", "]}", "true", "null", " pay-gateway",
        "5300ms", "。", "\u4e2d\u6587", '"claims', "<|end|>",
    ]
]  # fmt: skip
PIECES[-1] = b""  # a control token: no text


class ScriptedModel:
    """Logits from a seeded generator; `prefer` maps a text to what the model wants to write right after it."""

    def __init__(self, seed: int, prefer: dict[str, str] | None = None) -> None:
        self.table = TokenTable(PIECES)
        self.rng = np.random.default_rng(seed)
        self.fed: list[int] = []
        self.prefer = {k.encode(): v.encode() for k, v in (prefer or {}).items()}

    def tokenize(self, text: bytes) -> list[int]:
        tokens, position = [], 0
        while position < len(text):
            ends = range(position + 1, min(len(text), position + 16) + 1)
            end = max(e for e in ends if text[position:e] in self.table.by_piece)
            tokens.append(self.table.by_piece[text[position:end]])
            position = end
        return tokens

    def feed(self, tokens: Sequence[int]) -> None:
        self.fed.extend(tokens)

    def logits(self) -> np.ndarray:
        logits = self.rng.normal(size=len(self.table)).astype(np.float32)
        written = b"".join(self.table.pieces[t] for t in self.fed)
        for trigger, wanted in self.prefer.items():
            at = written.rfind(trigger)
            so_far = written[at + len(trigger) :] if at >= 0 else None
            if so_far is not None and wanted.startswith(so_far):
                for token in self.table.prefixes_of(wanted[len(so_far) :]):
                    logits[token] += 50 + len(self.table.pieces[token])
        return logits


def response_schema(signature: Any, bounds: SchemaBounds | None = None) -> dict[str, Any]:
    schema = _get_structured_outputs_response_format(signature, False).model_json_schema()
    return bound_json_schema(schema, bounds)


LOCAL_BOUNDS = SchemaBounds.create(
    field_limits=DEFAULT_LOCAL_FIELD_LIMITS,
    omit_fields=["source_type", "source_id", "evidence_refs", "RecommendedAction.evidence_bindings"],
    **DEFAULT_LOCAL_BOUNDS,
)
AGENT_SCHEMAS = {
    sig.__name__: response_schema(sig, LOCAL_BOUNDS)
    for sig in (agents.PlanIncident, agents.WriteEvidence, agents.VerifyClaims, agents.ComposeAnswer)
}


def fed_text(model: ScriptedModel) -> bytes:
    return b"".join(model.table.pieces[token] for token in model.fed)


@pytest.mark.parametrize("name", sorted(AGENT_SCHEMAS))
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), budget=st.sampled_from([5, 60, 400, 2000]))
def test_any_logits_give_json_valid_for_the_agent_schema(name: str, seed: int, budget: int) -> None:
    schema = AGENT_SCHEMAS[name]
    model = ScriptedModel(seed)
    decoded = decode(compile_schema(schema), model, budget)
    jsonschema.validate(json.loads(decoded.text), schema)
    assert decoded.text.encode("utf-8").startswith(fed_text(model))  # the model saw exactly the text written
    assert decoded.truncated == (decoded.tokens >= budget)


def test_the_model_chooses_the_content_and_code_writes_the_structure() -> None:
    schema = {
        "type": "object",
        "properties": {
            "claim_id": {"type": "string", "x-evigate-sequence": "claim-{n}"},
            "claim_text": {"type": "string", "maxLength": 40},
            "level": {"enum": ["direct", "indirect"]},
        },
        "required": ["claim_id", "claim_text", "level"],
    }
    model = ScriptedModel(1, prefer={'"claim_text": "': '订单 123 支付超时"', '"level": ': '"indirect"'})
    decoded = decode(compile_schema(schema), model, 200)
    assert json.loads(decoded.text) == {"claim_id": "claim-1", "claim_text": "订单 123 支付超时", "level": "indirect"}
    assert decoded.tokens < len(decoded.text)  # keys and separators went in as multi-byte pieces, in batches


def test_sequence_numbers_follow_list_positions_and_unique_enum_lists_never_repeat() -> None:
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "x-evigate-sequence": "claim-{n}"},
            "refs": {"type": "array", "items": {"enum": [7, 72]}, "uniqueItems": True, "maxItems": 5, "minItems": 1},
        },
        "required": ["id", "refs"],
    }
    schema = {"type": "array", "items": item, "minItems": 3, "maxItems": 3}
    for seed in range(20):
        value = json.loads(decode(compile_schema(schema), ScriptedModel(seed), 500).text)
        assert [entry["id"] for entry in value] == ["claim-1", "claim-2", "claim-3"]
        for entry in value:
            assert len(entry["refs"]) == len(set(entry["refs"])) >= 1 and set(entry["refs"]) <= {7, 72}


def test_object_variants_keep_each_tool_with_its_own_invocations() -> None:
    variants = {
        "EvidenceBinding": [
            {"tool_name": ["query_order"], "source_invocation_ids[]": [1]},
            {"tool_name": ["query_logs"], "source_invocation_ids[]": [2, 5]},
        ]
    }
    bounds = SchemaBounds.create(field_limits=DEFAULT_LOCAL_FIELD_LIMITS, object_variants=variants)
    schema = response_schema(agents.WriteEvidence, bounds)
    allowed = {"query_order": {1}, "query_logs": {2, 5}}
    for seed in range(25):
        output = json.loads(decode(compile_schema(schema), ScriptedModel(seed), 3000).text)["executor_output"]
        jsonschema.validate({"executor_output": output}, schema)
        for claim in output["claims"]:
            for binding in claim["evidence_bindings"]:
                assert set(binding["source_invocation_ids"]) <= allowed[binding["tool_name"]]


def test_free_strings_stay_within_their_length_in_characters_and_valid_utf8() -> None:
    schema = {"type": "string", "maxLength": 3}
    for seed in range(40):
        text = json.loads(decode(compile_schema(schema), ScriptedModel(seed), 100).text)
        assert len(text) <= 3 and all(ord(char) >= 0x20 for char in text)


def test_a_pattern_string_matches_its_pattern() -> None:
    schema = {"type": "string", "pattern": "^claim-[0-9]{1,2}$"}
    for seed in range(10):
        value = json.loads(decode(compile_schema(schema), ScriptedModel(seed), 100).text)
        assert jsonschema.Draft202012Validator(schema).is_valid(value), value


def test_an_exhausted_budget_closes_the_value_instead_of_cutting_it() -> None:
    schema = AGENT_SCHEMAS["WriteEvidence"]
    decoded = decode(compile_schema(schema), ScriptedModel(3), 0)
    jsonschema.validate(json.loads(decoded.text), schema)
    assert decoded.truncated


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "date-time"},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
        {"type": "array", "prefixItems": [{"type": "string"}]},
        {"$ref": "https://example.com/schema.json"},
        {"allOf": [{"type": "string"}]},
        {"description": "no type"},
        {"type": "object", "additionalProperties": True},  # dict[str, Any], e.g. ReAct's tool arguments
        {"type": "object"},
        {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
    ],
)
def test_what_the_decoder_does_not_implement_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnsupportedSchema):
        compile_schema(schema)


def test_compiled_tree_of_the_executor_schema() -> None:
    root = compile_schema(AGENT_SCHEMAS["WriteEvidence"])
    assert isinstance(root, Object)
    output = dict(root.properties)["executor_output"]
    assert isinstance(output, Object)
    fields = dict(output.properties)
    assert fields["answer_version"] == Literal(('"executor_evidence_v2"',))
    claims = fields["claims"]
    assert isinstance(claims, Array) and claims.max_items == DEFAULT_LOCAL_FIELD_LIMITS["claims"]
    claim = dict(claims.item.properties)  # type: ignore[union-attr]
    assert claim["claim_id"] == Sequential("claim-{n}")
    assert claim["claim_text"] == FreeString(max_length=DEFAULT_LOCAL_FIELD_LIMITS["claim_text"])


def test_token_table_facts() -> None:
    table = TokenTable([b"", b"ab", b'a"', b"\xe8\xb6", b"\x85", "超时".encode(), b"42", b"\n"])
    assert list(table.string_safe) == [False, True, False, True, True, True, True, False]
    assert list(table.whole) == [False, True, True, False, False, True, True, True]
    assert list(table.chars) == [0, 2, 2, 1, 0, 2, 2, 1]
    assert list(table.digits) == [False, False, False, False, False, False, True, False]
    assert table.prefixes_of(b"ab!") == [1]
    assert utf8_open(b"\xe8\xb6") is True and utf8_open("超".encode()) is False and utf8_open(b"\xff") is None
