"""One function builds every LM from settings: `evigate ask`, eval and optimize reach the same server the same way."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from evigate.llm.from_settings import lm_from_settings, lm_options
from evigate.modules.program import DiagnosisProgram
from evigate.optimize.data import resolve_lm
from evigate.settings import AGENTS, load_settings
from tests.llm.chat_server import ChatServer

SECRET = "sk-test-d0-not-leak-7f3a"
SERVER_ENV = {
    "EVIGATE_MODEL": "openai/qwen",
    "EVIGATE_MODELS__API_BASE": "http://127.0.0.1:9/v1",
    "EVIGATE_MODELS__API_KEY": SECRET,
    "EVIGATE_TIMEOUTS__AGENT_SECONDS": "42",
}


def test_program_and_jobs_build_the_same_remote_lm(world_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SERVER_ENV.items():
        monkeypatch.setenv(name, value)
    program = DiagnosisProgram.from_settings(database=world_db)
    for agent in AGENTS:
        served, (evaluated, _) = program.lm_for(agent), resolve_lm(agent, None, None)
        assert served.model == evaluated.model == "hosted_vllm/qwen"  # the self-hosted dialect: see self_hosted()
        assert served.kwargs == evaluated.kwargs
        assert served.kwargs["api_base"] == "http://127.0.0.1:9/v1" and served.kwargs["api_key"] == SECRET
        assert served.kwargs["max_tokens"] == program.settings.models.max_tokens_for(agent)
        assert served.kwargs["timeout"] == 42


def test_a_local_model_gets_its_decoding_bounds_and_no_server_options() -> None:
    settings = load_settings(environ={"EVIGATE_MODELS__API_BASE": "http://127.0.0.1:9/v1",
                                      "EVIGATE_MODELS__VERIFIER": "local/qwen2.5-coder-0.5b"})
    model, options = lm_options(settings, "verifier")
    assert model == "local/qwen2.5-coder-0.5b"
    assert "api_base" not in options and "api_key" not in options  # a custom engine refuses them
    assert options["field_limits"] == settings.models.local_field_limits
    assert options["max_tokens"] == settings.models.max_tokens_for("verifier")
    executor_model, executor_options = lm_options(settings, "executor")
    assert executor_model == settings.models.default and "field_limits" in executor_options


def test_eval_configured_for_a_server_sends_its_calls_to_that_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evigate.optimize.eval_jobs import run_eval

    with ChatServer(content="{}") as server:
        env = {**SERVER_ENV, "EVIGATE_MODELS__API_BASE": server.api_base, "EVIGATE_MODELS__NUM_RETRIES": "0"}
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        uri = f"sqlite:///{tmp_path / 'mlruns.db'}"
        run_eval("verifier", "dev", sets=("demo_world",), eval_limit=1, tracking_uri=uri,
                 program_dir=tmp_path / "none")
    calls = [r for r in server.requests if r["path"].endswith("/chat/completions")]
    assert calls, "the evaluation never reached the configured server"
    first = calls[0]
    assert first["headers"].get("Authorization") == f"Bearer {SECRET}"
    assert first["body"]["model"] == "qwen"
    # `max_tokens`, the field every self-hosted server reads (llama_cpp.server ignores max_completion_tokens).
    assert first["body"]["max_tokens"] == load_settings().models.max_tokens_for("verifier")
    assert first["body"]["temperature"] == 0.0
    # The key reached the server, and nowhere else: not into MLflow's params, tags or traces.
    import mlflow

    mlflow.flush_trace_async_logging()
    leaks = [path for path in tmp_path.rglob("*") if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert not leaks
    with sqlite3.connect(tmp_path / "mlruns.db") as db:
        assert db.execute("SELECT count(*) FROM params WHERE value LIKE ?", (f"%{SECRET}%",)).fetchone()[0] == 0


def test_lm_from_settings_passes_engine_options_only_to_the_local_engine() -> None:
    settings = load_settings(environ={"EVIGATE_MODEL": "openai/qwen"})
    lm = lm_from_settings(settings, "planner", n_threads=1)
    assert "n_threads" not in lm.kwargs and lm.num_retries == settings.models.num_retries


def test_a_self_hosted_server_without_a_key_is_still_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import dspy

    from evigate.modules.calls import call_agent

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer(content='{"answer": "42"}') as server:
        settings = load_settings(environ={"EVIGATE_MODEL": "openai/qwen", "EVIGATE_MODELS__API_BASE": server.api_base,
                                          "EVIGATE_MODELS__NUM_RETRIES": "0"})
        call = call_agent(dspy.Predict("question -> answer"), "planner", lm_from_settings(settings, "planner"), 30,
                          question="?")
    assert call.ok, call.error
    assert call.prediction.answer == "42"
    assert server.requests[0]["headers"]["Authorization"] == "Bearer no-key"
