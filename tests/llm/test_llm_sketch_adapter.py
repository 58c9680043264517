"""The sketch prompt for schema-decoding engines: what the model reads instead of DSPy's JSON schemas."""

from __future__ import annotations

import json

import dspy
from dspy.adapters.json_adapter import _get_structured_outputs_response_format
from dspy.utils import DummyLM

from evigate.llm.adapter import SketchJSONAdapter, adapter_for
from evigate.llm.engine import LlamaCppEngine
from evigate.llm.schema_bounds import SchemaBounds, bound_json_schema
from evigate.llm.sketch import sketch
from evigate.settings import DEFAULT_LOCAL_FIELD_LIMITS
from evigate.signatures import agents

BOUNDS = SchemaBounds.create(field_limits=DEFAULT_LOCAL_FIELD_LIMITS, omit_fields=["source_type", "source_id"])


def test_a_sketch_names_every_key_the_decoder_writes_and_nothing_it_leaves_out() -> None:
    schema = bound_json_schema(
        _get_structured_outputs_response_format(agents.WriteEvidence, False).model_json_schema(), BOUNDS
    )
    text = sketch(schema)
    assert text.startswith('{"executor_output": {"answer_version": "executor_evidence_v2", "claims": [{')
    for key in ("claim_id", "claim_type", "claim_text", "support_level", "evidence_bindings", "tool_name",
                "source_invocation_ids", "evidence_excerpt", "hypotheses", "missing_info"):  # fmt: skip
        assert f'"{key}": ' in text
    assert "source_type" not in text and "$defs" not in text and "maxLength" not in text
    assert '"symptom|root_cause|impact|risk|context|remediation"' in text
    assert '"<verbatim text, metric value or log fragment from the tool output>"' in text


def test_sketches_of_odd_schemas_stay_json_shaped() -> None:
    assert sketch({"anyOf": [{"type": "null"}, {"type": "integer"}]}) == "0"
    assert sketch({"type": ["string", "null"], "description": "a note"}) == '"<a note>"'
    assert sketch({"$ref": "#/$defs/Missing"}) == '"<text>"'  # an unresolvable reference: a plain placeholder
    assert json.loads(
        sketch({"type": "object", "properties": {"ok": {"type": "boolean"}}}).replace("true|false", "true")
    )


def test_the_sketch_adapter_shortens_the_system_prompt_and_parses_like_json_adapter() -> None:
    answer = {"choice": {"skill": "payment-timeout", "rationale": "ERR_TIMEOUT"}}
    prompts = {}
    for name, adapter in (("json", dspy.JSONAdapter()), ("sketch", SketchJSONAdapter(BOUNDS))):
        lm = DummyLM([answer], adapter=adapter)
        with dspy.context(lm=lm, adapter=adapter):
            result = dspy.Predict(agents.PlanIncident)(query="q", entities="e", skills="s", retry_context=None)
        assert result.choice.skill == "payment-timeout"
        prompts[name] = lm.history[-1]["messages"][0]["content"]
    assert len(prompts["sketch"]) < len(prompts["json"])
    assert "must adhere to the JSON schema" in prompts["json"] and "must adhere" not in prompts["sketch"]
    assert '{"choice": {"skill": "<id of one skill from the skills list>"' in prompts["sketch"]


def test_only_an_engine_that_decodes_by_structure_gets_the_sketch() -> None:
    class FakeLM:
        def __init__(self, engine: object) -> None:
            self.engine = engine

    structured = LlamaCppEngine(bounds=BOUNDS)
    assert isinstance(adapter_for(FakeLM(structured)), SketchJSONAdapter)
    assert adapter_for(FakeLM(structured)) is adapter_for(FakeLM(LlamaCppEngine(bounds=BOUNDS)))  # one per bounds
    assert type(adapter_for(FakeLM(LlamaCppEngine(structured=False)))) is dspy.JSONAdapter
    assert type(adapter_for(dspy.LM("openai/gpt-4o-mini"))) is dspy.JSONAdapter
    assert type(adapter_for(None)) is dspy.JSONAdapter
