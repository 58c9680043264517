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


@pytest.mark.parametrize("structured", [True, False], ids=["structured-decoder", "grammar"])
def test_the_decoder_enforces_the_bounds_added_to_the_schema(structured: bool) -> None:
    bounds = SchemaBounds(max_string_length=12, max_array_items=2)
    engine = LlamaCppEngine(bounds=bounds, timeout=50, structured=structured, persist_prefixes=False)
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


def test_every_agent_answer_from_the_real_model_is_valid_for_its_bounded_schema() -> None:
    """The structured decoder on the real vocabulary (byte fragments, multi-character pieces) writes JSON the bounded
    response schema of each agent accepts, and the engine reports the tokens it appended."""
    import jsonschema
    from dspy.adapters.json_adapter import _get_structured_outputs_response_format

    from evigate.llm.schema_bounds import bound_json_schema
    from evigate.settings import DEFAULT_LOCAL_BOUNDS, DEFAULT_LOCAL_FIELD_LIMITS
    from evigate.signatures import agents

    bounds = SchemaBounds.create(field_limits=DEFAULT_LOCAL_FIELD_LIMITS, **DEFAULT_LOCAL_BOUNDS)
    engine = LlamaCppEngine(bounds=bounds, timeout=100, persist_prefixes=False)
    for signature in (agents.PlanIncident, agents.WriteEvidence, agents.VerifyClaims, agents.ComposeAnswer):
        schema = _get_structured_outputs_response_format(signature, False).model_json_schema()
        request = Request(
            model="local/qwen2.5-coder-0.5b",
            messages=(Message.user(f"订单 123 支付失败：{LOG_LINE}。请按要求输出 JSON。"),),
            config=Config(max_tokens=300, response_format={"type": "json_schema", "schema": schema}),
        )
        response = engine.complete(request)
        jsonschema.validate(json.loads(response.message.text), bound_json_schema(schema, bounds))
        assert 0 < response.usage.output_tokens <= 300 + 60  # closing what is open may pass the budget a little


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


def test_a_restored_prompt_state_gives_the_same_answer_as_a_fresh_evaluation(tmp_path, monkeypatch) -> None:
    """Prefix reuse must change only the speed: greedy output after restoring a stored system prompt (from RAM in
    this process, from disk in a new load) is identical to evaluating everything."""
    from evigate.llm.runtime import _loaded, unload_all

    monkeypatch.setenv("EVIGATE_PREFIX_CACHE", str(tmp_path))
    unload_all()
    answers, stats, reused = [], [], []
    for _ in range(2):
        for _ in range(2):
            lm = make_lm("local/qwen2.5-coder-0.5b", max_tokens=60, timeout=100)
            with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
                answers.append(dspy.Predict(ExtractFinding)(log_line=LOG_LINE).finding)
            stats.append(dict(next(iter(_loaded.values())).prefix_cache.stats))
            reused.append(lm.history[-1]["usage"]["prompt_tokens_details"]["cached_tokens"])
        unload_all()  # the next load is a new process as far as the model is concerned
    assert all(answer == answers[0] for answer in answers)
    assert stats[0]["disk_writes"] == 1 and stats[2]["disk_hits"] == 1  # persisted once, found after reloading
    assert reused[0] <= 1 and min(reused[1:]) > 100  # the system prompt was evaluated once
    assert list(tmp_path.rglob("*.kv"))


def test_fast_greedy_decoding_chooses_exactly_what_the_sampler_chain_chooses(monkeypatch) -> None:
    """The fast path checks only the arg-max token against the grammar; it must pick the same tokens as filtering
    the whole vocabulary first (llama-cpp-python's chain), including where the grammar refuses the arg-max."""
    import evigate.llm.greedy as greedy
    from evigate.llm.runtime import unload_all

    refusals = []
    original = greedy.GrammarGate.best_allowed

    def counted(self, logits):  # type: ignore[no-untyped-def]
        refusals.append(1)
        return original(self, logits)

    monkeypatch.setattr(greedy.GrammarGate, "best_allowed", counted)
    outputs = {}
    for fast in (True, False):
        unload_all()
        lm = make_lm(
            "local/qwen2.5-coder-0.5b",
            max_tokens=80,
            timeout=100,
            fast_greedy=fast,
            structured=False,
            persist_prefixes=False,
        )
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            dspy.Predict(ExtractFinding)(log_line=LOG_LINE)
        outputs[fast] = lm.history[-1]["outputs"][0]
    unload_all()
    assert outputs[True] == outputs[False]
    assert refusals  # the grammar did overrule the arg-max at least once, so the fallback was exercised
