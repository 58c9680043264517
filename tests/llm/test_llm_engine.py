"""LlamaCppEngine and make_lm against a scripted stand-in for llama.cpp (no model file needed)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import dspy
import pydantic
import pytest
from dspy.lm15 import Config, ContextLengthError, Message, Request
from dspy.lm15 import TimeoutError as LMTimeout

from evigate.errors import ModelError
from evigate.llm import engine as engine_module
from evigate.llm.engine import AsyncLlamaCppEngine, LlamaCppEngine
from evigate.llm.lm import make_lm
from evigate.llm.runtime import LoadedModel


class ScriptedLlama:
    """Records each create_chat_completion call and answers with the next scripted reply."""

    def __init__(self, *replies: str, prompt_tokens: int = 120, evaluated: int = 120, delay: float = 0.0) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []
        self.prompt_tokens = prompt_tokens
        self.evaluated = evaluated
        self.delay = delay
        self.perf = [0, 0, 0.0, 0.0]
        self.error: Exception | None = None

    def create_chat_completion(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        if self.error is not None:
            raise self.error
        if kwargs.get("stream"):
            return self._stream(self.replies.pop(0))
        time.sleep(self.delay)
        self.perf[0] += self.evaluated
        text = self.replies.pop(0)
        return {
            "id": "chatcmpl-1",
            "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": 7,
                "total_tokens": self.prompt_tokens + 7,
            },
        }

    def _stream(self, text: str) -> Any:
        """Like llama.cpp's stream: one chunk per token (here: per character), generated lazily."""
        self.perf[0] += self.evaluated
        self.n_tokens = self.prompt_tokens
        self.streamed = 0
        for char in text:
            time.sleep(self.delay)
            self.streamed += 1
            self.n_tokens += 1
            yield {"choices": [{"delta": {"content": char}, "finish_reason": None}]}
        yield {"choices": [{"delta": {}, "finish_reason": "stop"}]}


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    return path


def _engine_with(
    llama: ScriptedLlama, monkeypatch: pytest.MonkeyPatch, gguf: Path, *, parser_accepts: bool = True, **options: Any
) -> LlamaCppEngine:
    engine = LlamaCppEngine(str(gguf), **options)
    loaded = LoadedModel(llama=llama, settings=None, load_seconds=0.0)  # type: ignore[arg-type]
    monkeypatch.setattr(engine, "loaded", lambda: loaded)
    monkeypatch.setattr(LoadedModel, "accepts_grammar", lambda self, gbnf: parser_accepts)
    monkeypatch.setattr(engine_module, "perf_counters", lambda fake: tuple(fake.perf))
    return engine


class Finding(pydantic.BaseModel):
    order_id: str
    tags: list[str]


class Extract(dspy.Signature):
    """Extract the finding."""

    log_line: str = dspy.InputField()
    finding: Finding = dspy.OutputField()


def test_json_adapter_gets_a_bounded_grammar_and_usage_is_tracked(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    # The model writes a raw newline inside a string; the engine escapes it so the adapter can parse.
    llama = ScriptedLlama('{"finding": {"order_id": "123", "tags": ["ERR\nTIMEOUT"]}}', evaluated=100)
    engine = _engine_with(llama, monkeypatch, gguf)
    lm = dspy.LM("local/tiny", engine=engine, cache=False, max_tokens=300)
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter(), track_usage=True):
        prediction = dspy.Predict(Extract)(log_line="order=123 ERR_TIMEOUT")
    assert prediction.finding == Finding(order_id="123", tags=["ERR\nTIMEOUT"])
    call = llama.calls[0]
    assert call["temperature"] == 0.0 and call["max_tokens"] == 300
    grammar_text = call["grammar"]._grammar
    assert "char*" not in grammar_text  # every string is a bounded repetition
    assert r'char ::= [^"\\\x7F\x00-\x1F]' in grammar_text  # no raw control characters inside strings
    assert call["messages"][0]["role"] == "system" and "finding" in call["messages"][0]["content"]
    usage = prediction.get_lm_usage()["local/tiny"]
    assert usage["prompt_tokens"] == 120 and usage["completion_tokens"] == 7
    assert usage["prompt_tokens_details"] == {"cached_tokens": 20}


def test_free_text_requests_get_no_grammar_and_keep_their_options(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    llama = ScriptedLlama("plain answer")
    engine = _engine_with(llama, monkeypatch, gguf, default_max_tokens=55)
    request = Request(model="local/tiny", messages=(Message.user("hi"),))
    response = engine.complete(request)
    assert response.message.text == "plain answer"
    assert llama.calls[0]["grammar"] is None and llama.calls[0]["max_tokens"] == 55


def test_a_grammar_llama_cpp_refuses_degrades_to_plain_json(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    from llama_cpp.llama_grammar import JSON_GBNF

    llama = ScriptedLlama('{"a": 1}')
    engine = _engine_with(llama, monkeypatch, gguf, parser_accepts=False)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    request = Request(
        model="local/tiny",
        messages=(Message.user("hi"),),
        config=Config(response_format={"type": "json_schema", "schema": schema}),
    )
    assert engine.complete(request).message.text == '{"a": 1}'
    assert llama.calls[0]["grammar"]._grammar == JSON_GBNF


def test_a_slow_generation_is_stopped_at_its_deadline(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    llama = ScriptedLlama("a very long and slow answer", delay=0.05)
    engine = _engine_with(llama, monkeypatch, gguf, timeout=0.12)
    with pytest.raises(LMTimeout, match="did not finish within"):
        engine.complete(Request(model="local/tiny", messages=(Message.user("hi"),)))
    assert llama.streamed < 5  # generation really stopped; it did not run on in the background


def test_a_generation_within_its_deadline_reports_text_and_usage(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    llama = ScriptedLlama("on time", prompt_tokens=30)
    engine = _engine_with(llama, monkeypatch, gguf, timeout=30)
    response = engine.complete(Request(model="local/tiny", messages=(Message.user("hi"),)))
    assert response.message.text == "on time"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (30, 7)


def test_an_overlong_prompt_is_a_context_length_error(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    llama = ScriptedLlama()
    llama.error = ValueError("Requested tokens (9000) exceed context window of 8192")
    engine = _engine_with(llama, monkeypatch, gguf)
    with pytest.raises(ContextLengthError, match="n_ctx=8192"):
        engine.complete(Request(model="local/tiny", messages=(Message.user("hi"),)))


def test_async_calls_run_the_same_engine(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    import asyncio

    llama = ScriptedLlama("async ok")
    engine = _engine_with(llama, monkeypatch, gguf)
    response = asyncio.run(
        AsyncLlamaCppEngine(engine).complete(Request(model="local/t", messages=(Message.user("x"),)))
    )
    assert response.message.text == "async ok"


def test_make_lm_local_builds_the_engine_with_local_defaults(gguf: Path) -> None:
    lm = make_lm(f"local/{gguf}", timeout=30, max_string_length=64, n_ctx=2048, temperature=0.1)
    assert isinstance(lm.engine, LlamaCppEngine)
    assert lm.cache is False and lm.num_retries == 0
    assert lm.supports_response_schema and "response_format" in lm.supported_params
    assert lm.engine.timeout == 30 and lm.engine.bounds.max_string_length == 64 and lm.engine.n_ctx == 2048
    assert lm.kwargs["temperature"] == 0.1
    assert make_lm(f"local/{gguf}", cache=True).cache is True


def test_constraints_bind_to_one_call_of_a_local_lm_only(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    from dspy.utils import DummyLM

    from evigate.llm.constraints import Constraints
    from evigate.llm.lm import constrained_lm

    constraints = Constraints.create(field_enums={"order_id": ["123"]})
    llama = ScriptedLlama('{"finding": {"order_id": "123", "tags": []}}', '{"finding": {"order_id": "9", "tags": []}}')
    engine = _engine_with(llama, monkeypatch, gguf, fast_greedy=False)
    lm = dspy.LM("local/tiny", engine=engine, async_engine=AsyncLlamaCppEngine(engine), cache=False)
    bound = constrained_lm(lm, constraints)
    assert bound is not lm and bound.engine.constraints == constraints and bound._async_engine_spec.sync is bound.engine
    assert not engine.constraints and engine.decoding_bounds() is engine.bounds  # the shared engine is unchanged
    with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
        dspy.Predict(Extract)(log_line="order=123", lm=bound)
        dspy.Predict(Extract)(log_line="order=9")
    constrained, free = (call["grammar"]._grammar for call in llama.calls)
    assert 'Finding-order-id ::= "\\"123\\""' in constrained and "123" not in free
    assert len(lm.history) == 2  # both calls in the one LM's history
    # Nothing reaches an LM whose engine builds no grammar: a remote model's HTTP request, a test's DummyLM.
    remote, dummy = make_lm("openai/m", api_base="http://127.0.0.1:9/v1", api_key="x"), DummyLM([])
    assert constrained_lm(remote, constraints) is remote and constrained_lm(dummy, constraints) is dummy
    assert constrained_lm(lm, Constraints()) is lm and constrained_lm(None, constraints) is None


def test_make_lm_local_raises_model_error_at_construction() -> None:
    with pytest.raises(ModelError, match="known local models"):
        make_lm("local/no-such-model")


def test_make_lm_remote_is_a_plain_dspy_lm() -> None:
    lm = make_lm("openai/my-vllm-model", api_base="http://127.0.0.1:8000/v1", api_key="x", timeout=12)
    assert lm.engine == "auto"
    assert lm.kwargs["timeout"] == 12 and lm.kwargs["api_base"] == "http://127.0.0.1:8000/v1"
    assert lm.cache is True


def test_a_local_lm_survives_save_and_load(gguf: Path) -> None:
    lm = make_lm(f"local/{gguf}", max_array_items=4, timeout=9)
    state = json.loads(json.dumps(lm.dump_state()))
    restored = dspy.BaseLM.load_state(state, allow_custom_lm_class=True)
    assert isinstance(restored.engine, LlamaCppEngine)
    assert restored.engine.dump_state() == lm.engine.dump_state()


def test_concurrent_calls_on_one_model_are_serialised(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    active, peak = 0, 0
    guard = threading.Lock()

    class Overlapping(ScriptedLlama):
        def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
            nonlocal active, peak
            with guard:
                active += 1
                peak = max(peak, active)
            time.sleep(0.02)
            with guard:
                active -= 1
            return super().create_chat_completion(**kwargs)

    engine = _engine_with(Overlapping(*["x"] * 6), monkeypatch, gguf)
    request = Request(model="local/tiny", messages=(Message.user("hi"),))
    with ThreadPoolExecutor(max_workers=6) as pool:
        texts = list(pool.map(lambda _: engine.complete(request).message.text, range(6)))
    assert texts == ["x"] * 6 and peak == 1


def test_engines_with_the_same_settings_share_one_loaded_model(monkeypatch: pytest.MonkeyPatch, gguf: Path) -> None:
    from evigate.llm import runtime

    loads: list[runtime.LoadSettings] = []

    def fake_load(settings: runtime.LoadSettings) -> LoadedModel:
        loads.append(settings)
        return LoadedModel(llama=ScriptedLlama(), settings=settings, load_seconds=0.0)

    monkeypatch.setattr(runtime, "_load", fake_load)
    monkeypatch.setattr(runtime, "_loaded", {})
    first, second = LlamaCppEngine(str(gguf)), LlamaCppEngine(str(gguf), timeout=5)
    assert first.loaded() is second.loaded()
    assert LlamaCppEngine(str(gguf), n_ctx=1024).loaded() is not first.loaded()
    assert len(loads) == 2


def test_thread_count_comes_from_the_environment_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    from evigate.llm.runtime import default_threads

    monkeypatch.setenv("EVIGATE_LLAMA_THREADS", "1")
    assert default_threads() == 1
    monkeypatch.setenv("EVIGATE_LLAMA_THREADS", "zero")
    with pytest.raises(ModelError, match="EVIGATE_LLAMA_THREADS"):
        default_threads()
    monkeypatch.delenv("EVIGATE_LLAMA_THREADS")
    assert default_threads() == max(1, (os.cpu_count() or 1) - 1)  # one core left for everything else


def test_prompt_cache_defaults_follow_the_measured_model_setting() -> None:
    assert LlamaCppEngine("qwen2.5-coder-0.5b").prompt_cache_mb == 256
    assert LlamaCppEngine("gemma3-270m").prompt_cache_mb == 0  # its SWA state costs more to save than it saves
    assert LlamaCppEngine("qwen2.5-coder-0.5b", prompt_cache_mb=0).prompt_cache_mb == 0
