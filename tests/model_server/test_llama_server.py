"""evigate against a real OpenAI-compatible model server: llama_cpp.server on 127.0.0.1 serving the bundled GGUF.

The whole program in plan and in react mode, per-agent models (a local Verifier beside a remote Executor), eval
and optimize jobs, and questions in parallel threads — all through the one server this module starts and stops.
Token budgets are small and questions few: on 2 shared cores each agent call costs seconds of prompt evaluation.
What is asserted is the path (who was asked, what was recorded, nothing mixed), not the 0.5B model's quality.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dspy.clients import base_lm

from evigate.modules.program import DiagnosisProgram
from evigate.store import AuditStore
from tests.model_server.cli_env import QUESTION
from tests.model_server.llama_server import ALIAS, llama_server

pytestmark = pytest.mark.model_server

# Enough for the path to run end to end, small enough for a loaded 2-core machine (outputs may be cut short).
BUDGETS = '{"planner": 64, "executor": 160, "verifier": 96, "composer": 64}'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("llama-server") / "server.log") as api_base:
        yield api_base


@pytest.fixture()
def remote(server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    for name, value in {
        "EVIGATE_MODEL": f"openai/{ALIAS}",
        "EVIGATE_MODELS__API_BASE": server,
        "EVIGATE_MODELS__API_KEY": "sk-no-key-needed",
        "EVIGATE_MODELS__NUM_RETRIES": "0",
        "EVIGATE_MODELS__AGENT_MAX_TOKENS": BUDGETS,
        # Slow, not hung: on 2 cores shared with other work one remote call measured over 300 s.
        "EVIGATE_TIMEOUTS__AGENT_SECONDS": "900",
        "EVIGATE_LLAMA_THREADS": "1",
        # One round per question, and the shortest evidence the settings allow: every prompt token costs here.
        "EVIGATE_VERIFIER__LOW_CONFIDENCE_THRESHOLD": "0",
        "EVIGATE_EXECUTOR__MAX_EVIDENCE_CHARS": "200",
    }.items():
        monkeypatch.setenv(name, value)
    return server


def served_calls(since: int) -> list[dict[str, Any]]:
    """DSPy's LM history entries since ``since`` that the server answered (it reports real token usage)."""
    return [
        entry for entry in base_lm.GLOBAL_HISTORY[since:]
        if entry.get("model") == f"hosted_vllm/{ALIAS}" and (entry.get("usage") or {}).get("prompt_tokens")
    ]


def steps_by_agent(store: AuditStore, session_id: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for step in store.steps(session_id):
        grouped.setdefault(step["agent"], []).append(step)
    return grouped


def assert_served_session(store: AuditStore, session_id: str) -> dict[str, list[dict[str, Any]]]:
    record = store.session(session_id)
    assert record["status"] == "finished" and record["answer"]
    steps = steps_by_agent(store, session_id)
    executor = steps["executor"][0]
    assert executor["status"] == "ok", executor["error"]
    assert executor["prompt_tokens"] > 0 and executor["model_output"]  # the server's own usage figures and text
    return steps


def test_an_eval_job_through_the_server(remote: str, tmp_path: Path) -> None:
    from evigate.optimize.eval_jobs import run_eval

    since = len(base_lm.GLOBAL_HISTORY)
    evaluated = run_eval("verifier", "dev", sets=("demo_world",), eval_limit=1,
                         tracking_uri=f"sqlite:///{tmp_path / 'mlruns.db'}", program_dir=tmp_path / "none")
    assert evaluated.metrics and served_calls(since)


def test_plan_mode_with_a_local_verifier_beside_the_remote_agents(
    remote: str, private_world: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVIGATE_MODELS__VERIFIER", "local/qwen2.5-coder-0.5b")
    program = DiagnosisProgram.from_settings(database=private_world)
    assert program.lm_for("executor").kwargs["api_base"] == remote
    assert program.lm_for("verifier").model.startswith("local/") and "api_base" not in program.lm_for("verifier").kwargs
    since = len(base_lm.GLOBAL_HISTORY)
    result = program(query=QUESTION)
    assert_served_session(program.store, result.session_id)
    assert served_calls(since)
    assert "{" not in result.answer


def test_react_mode_through_the_server(remote: str, private_world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVIGATE_EXECUTOR_MODE", "react")
    monkeypatch.setenv("EVIGATE_EXECUTOR__MAX_ITERS", "1")
    program = DiagnosisProgram.from_settings(database=private_world)
    since = len(base_lm.GLOBAL_HISTORY)
    result = program(query=QUESTION)
    steps = assert_served_session(program.store, result.session_id)
    assert "executor" in steps and served_calls(since)
    # Whatever ReAct called, it was recorded under this session (and nothing else was).
    for inv in program.store.invocations(result.session_id):
        assert inv.round in (1, 2)


def test_questions_in_parallel_threads_share_the_server_not_their_sessions(remote: str, private_world: Path) -> None:
    program = DiagnosisProgram.from_settings(database=private_world)
    questions = {"123": "订单 123 支付失败，ERR_TIMEOUT 是什么原因？", "456": "订单 456 为什么一直显示处理中？"}
    results: dict[str, Any] = {}

    def ask(order_id: str) -> None:
        results[order_id] = program(query=questions[order_id])

    threads = [threading.Thread(target=ask, args=(order_id,)) for order_id in questions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=3600)
    assert set(results) == set(questions)
    assert results["123"].session_id != results["456"].session_id
    for order_id, result in results.items():
        assert_served_session(program.store, result.session_id)
        record = program.store.session(result.session_id)
        assert record["query"] == questions[order_id]
        other = next(oid for oid in questions if oid != order_id)
        for inv in program.store.invocations(result.session_id):
            assert inv.input.get("order_id") != other, inv


def test_an_optimize_job_through_the_server(remote: str, tmp_path: Path) -> None:
    from evigate.optimize.data import load_agent_data
    from evigate.optimize.jobs import OptimizeConfig, run_optimize

    data = load_agent_data("verifier", ("demo_world",), eval_limit=1)
    data.splits["train"] = data.splits["train"][:1]
    since = len(base_lm.GLOBAL_HISTORY)
    config = OptimizeConfig(agent="verifier", optimizer="bootstrap", budget=1, max_demos=1, eval_limit=1,
                            sets=("demo_world",), tracking_uri=f"sqlite:///{tmp_path / 'mlruns.db'}",
                            program_dir=tmp_path / "optimized")
    optimized = run_optimize(config, data=data)
    assert optimized.baseline and optimized.optimized and served_calls(since)
    assert (tmp_path / "optimized" / "verifier.json").is_file()
