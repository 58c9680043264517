"""The real default local model through DSPy: schema-valid JSON, bounds enforced by the grammar."""

from __future__ import annotations

import json

import dspy
import pydantic
import pytest
from dspy.lm15 import Config, Message, Request

from evigate.llm import make_lm
from evigate.llm.engine import LlamaCppEngine
from evigate.llm.schema_bounds import SchemaBounds

pytestmark = pytest.mark.local_model

LOG_LINE = "2024-05-01 12:00:03 payment-service order=123 ERR_TIMEOUT upstream bank-gateway timeout after 5300ms"


class Finding(pydantic.BaseModel):
    order_id: str
    error_code: str
    latency_ms: int


class ExtractFinding(dspy.Signature):
    """Extract the order id, the error code and the latency in milliseconds from the log line."""

    log_line: str = dspy.InputField()
    finding: Finding = dspy.OutputField()


def test_default_model_answers_a_typed_signature_with_schema_valid_json() -> None:
    lm = make_lm("local/qwen2.5-coder-0.5b", max_tokens=120, timeout=50)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter(), track_usage=True):
        prediction = dspy.Predict(ExtractFinding)(log_line=LOG_LINE)
    assert isinstance(prediction.finding, Finding)
    assert prediction.finding.order_id in LOG_LINE and prediction.finding.error_code in LOG_LINE
    raw = lm.history[-1]["outputs"][0]
    assert Finding.model_validate(json.loads(raw)["finding"]) == prediction.finding
    usage = prediction.get_lm_usage()["local/qwen2.5-coder-0.5b"]
    assert usage["prompt_tokens"] > 50 and 0 < usage["completion_tokens"] <= 120


def test_the_grammar_enforces_the_bounds_added_to_the_schema() -> None:
    engine = LlamaCppEngine(bounds=SchemaBounds(max_string_length=12, max_array_items=2), timeout=50)
    schema = {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["steps"],
    }
    request = Request(
        model="local/qwen2.5-coder-0.5b",
        messages=(Message.user("List ten detailed troubleshooting steps for a payment timeout, as JSON."),),
        config=Config(max_tokens=80, response_format={"type": "json_schema", "schema": schema}),
    )
    steps = json.loads(engine.complete(request).message.text)["steps"]
    assert len(steps) <= 2
    assert all(len(step) <= 12 for step in steps)


def test_a_grammar_llama_cpp_refuses_falls_back_to_plain_json_instead_of_crashing() -> None:
    # A 2000-deep repetition is past llama.cpp's parser limit; unchecked, the NULL sampler segfaults.
    engine = LlamaCppEngine(bounds=SchemaBounds(max_string_length=2000, ceiling=4000), timeout=50)
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
    request = Request(
        model="local/qwen2.5-coder-0.5b",
        messages=(Message.user('Reply with the JSON object {"answer": "ok"}.'),),
        config=Config(max_tokens=20, response_format={"type": "json_schema", "schema": schema}),
    )
    assert isinstance(json.loads(engine.complete(request).message.text), dict)
