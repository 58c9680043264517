"""The built-in DSPy agents, LM-free: DummyLM answers in the JSON adapter's format, computed when asked."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dspy
import pytest
from dspy.utils import DummyLM

from evigate.demo import demo_toolbox
from evigate.modules import Composer, Executor, Planner, Verifier
from evigate.modules.executor import step_key
from evigate.modules.program import DiagnosisProgram
from evigate.signatures import (
    ExecutorOutputParseStatus,
    Plan,
    PlanStep,
    RetryContext,
    VerifierInput,
)
from evigate.store import AuditStore

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
JSON = dspy.JSONAdapter()


def lazy(answer: Callable[[], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Answers computed at call time (e.g. citing invocation ids that exist only once the tools ran)."""
    while True:
        yield answer()


def dummy(*answers: dict[str, Any]) -> DummyLM:
    return DummyLM(list(answers), adapter=JSON)


AMBIGUOUS = "订单 123 为什么失败了？"  # no error code: the model has to choose


def test_planner_model_picks_the_skill_and_code_writes_the_steps() -> None:
    lm = dummy({"choice": {"skill": "payment-timeout", "rationale": "支付超时"}})
    with dspy.context(lm=lm, adapter=JSON):
        prediction = Planner()(query=AMBIGUOUS)
    plan = prediction.plan
    assert prediction.decided_by == "model" and plan.skill == "payment-timeout" and plan.rationale == "支付超时"
    assert ("query_order", {"order_id": 123}) in [(s.tool, s.args) for s in plan.steps]
    assert all("{" not in str(value) for step in plan.steps for value in step.args.values())  # all filled
    prompt = lm.history[-1]["messages"][-1]["content"]
    shown = [
        line.split(":")[0] for line in prompt.split("[[ ## skills ## ]]")[1].split("[[")[0].split("\n") if ":" in line
    ]
    assert len(shown) == 3 and "order-failure-triage" in shown  # a shortlist, best text match included


def test_an_error_code_one_skill_owns_decides_without_the_model() -> None:
    class Refuses(DummyLM):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the planner model must not be asked")

    with dspy.context(lm=Refuses([], adapter=JSON), adapter=JSON):
        prediction = Planner()(query=QUERY)
    assert prediction.decided_by == "rule" and prediction.plan.skill == "payment-timeout"
    assert "ERR_TIMEOUT" in prediction.plan.rationale


def test_a_bare_error_code_question_stays_with_the_model() -> None:
    with dspy.context(lm=dummy({"choice": {"skill": "error-code-explain"}}), adapter=JSON):
        prediction = Planner()(query="ERR_RATE_LIMITED 是什么意思？")
    assert prediction.decided_by == "model" and prediction.plan.skill == "error-code-explain"


def test_an_unknown_skill_falls_back_to_the_best_match() -> None:
    with dspy.context(lm=dummy({"choice": {"skill": "no-such-skill"}}), adapter=JSON):
        plan = Planner()(query="库存扣减失败，是不是死锁了？").plan
    assert plan.skill == "inventory-deadlock" and plan.steps


def test_sanitize_repairs_a_given_plan_into_an_executable_one() -> None:
    proposal = Plan(
        skill="payment-timeout",
        steps=[
            PlanStep(tool="rm_rf", args={"path": "/"}),
            PlanStep(tool="query_order", args={"order_id": "{order_id}", "bogus": 1}),
            PlanStep(tool="query_logs", args={"trace_id": "{trace_id}"}),  # the query names no trace: dropped
        ],
    )
    plan = Planner().sanitize(proposal, QUERY, None)
    assert [(s.tool, s.args) for s in plan.steps] == [("query_order", {"order_id": 123})]


def test_planner_in_round_two_skips_finished_calls_and_targets_the_gaps() -> None:
    planner = Planner()
    first = planner.fallback(QUERY)
    retry = RetryContext(
        round=1,
        missing_evidence_facts=["“根因是通道超时”缺少直接证据"],
        completed_queries=[step_key(s.tool, s.args) for s in first.steps],
    )
    with dspy.context(lm=dummy({"choice": {"skill": first.skill}}), adapter=JSON):
        plan = planner(query=QUERY, retry_context=retry).plan
    assert [s.tool for s in plan.steps] == ["lookup_knowledge"]
    assert "根因是通道超时" in plan.steps[0].args["query"]


def test_planner_fallback_needs_no_model() -> None:
    plan = Planner().fallback("库存服务死锁 ERR_DEADLOCK 怎么回事")
    assert plan.skill == "inventory-deadlock" and plan.steps


def test_executor_lets_the_model_cite_only_this_sessions_successful_calls(
    world_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The constraints must reach llama.cpp itself: a scripted llama records the grammar each call decodes under.
    from evigate.llm.engine import AsyncLlamaCppEngine
    from tests.llm.test_llm_engine import ScriptedLlama, _engine_with

    llama = ScriptedLlama('{"executor_output": {"claims": []}}')
    # (the sampler-chain path: it hands llama.cpp the grammar; the fast path builds the same one from the same bounds)
    engine = _engine_with(llama, monkeypatch, Path("tiny.gguf"), fast_greedy=False)
    lm = dspy.LM("local/tiny", engine=engine, async_engine=AsyncLlamaCppEngine(engine), cache=False)
    store = AuditStore(world_db)
    session_id = store.start_session(QUERY)
    toolbox = demo_toolbox(store, session_id)
    plan = Plan(
        skill="payment-timeout",
        steps=[
            PlanStep(tool="query_order", args={"order_id": 123}),
            PlanStep(tool="query_logs", args={"limit": "many"}),  # bad arguments: recorded as a failed call
        ],
    )
    with dspy.context(lm=lm, adapter=JSON):
        Executor()(query=QUERY, plan=plan, toolbox=toolbox)
    invocations = store.invocations(session_id)
    succeeded = [inv.id for inv in invocations if inv.success]
    assert len(invocations) == 2 and len(succeeded) == 1
    grammar = llama.calls[0]["grammar"]._grammar
    rules = dict(line.split(" ::= ", 1) for line in grammar.splitlines() if " ::= " in line)
    assert rules["EvidenceBinding"] == "EvidenceBinding-0"  # one choice: the one tool that answered
    assert rules["EvidenceBinding-0-tool-name"] == '"\\"query_order\\""'
    assert rules["EvidenceBinding-0-source-invocation-ids-item"] == f'"{succeeded[0]}"'
    assert not engine.constraints and lm.engine is engine  # the shared engine and LM are left as they were
    assert len(lm.history) == 1  # the call is in the agent's LM's history


def test_executor_plan_mode_runs_steps_once_and_keeps_unparseable_text(world_db: Path) -> None:
    store = AuditStore(world_db)
    session_id = store.start_session(QUERY)
    toolbox = demo_toolbox(store, session_id)
    plan = Plan(skill="payment-timeout", steps=[PlanStep(tool="query_order", args={"order_id": 123})])
    with dspy.context(lm=dummy({"executor_output": "订单超时了，根因是网关"}), adapter=JSON):
        raw = Executor()(query=QUERY, plan=plan, toolbox=toolbox).raw_output
    assert raw == "订单超时了，根因是网关"  # kept verbatim for the Gatekeeper to judge (malformed)
    retry = RetryContext(completed_queries=[step_key("query_order", {"order_id": 123})])
    with dspy.context(lm=dummy({"executor_output": {"claims": []}}), adapter=JSON):
        raw = Executor()(query=QUERY, plan=plan, retry_context=retry, toolbox=toolbox.for_round(2)).raw_output
    assert json.loads(raw)["answer_version"] == "executor_evidence_v2"
    assert [inv.round for inv in store.invocations(session_id)] == [1]  # round 2 did not repeat the call


def test_verifier_sees_no_raw_executor_text_once_structured_output_exists() -> None:
    lm = dummy(
        {
            "judgement": {
                "verdict": "PASS",
                "claim_checks": [{"claim_id": "claim-1", "verification": "direct_observation", "detail": "ok"}],
            }
        }
    )
    verifier_input = VerifierInput(
        original_query=QUERY,
        executor_raw_output="PLANNER-THOUGHT-SENTINEL",
        executor_final_answer="PLANNER-THOUGHT-SENTINEL",
        executor_structured_output={"answer_version": "executor_evidence_v2", "claims": []},
        executor_output_parse_status=ExecutorOutputParseStatus(status="valid"),
    )
    with dspy.context(lm=lm, adapter=JSON):
        output = Verifier()(verifier_input=verifier_input).verifier_output
    assert output.claim_checks[0].verification == "direct_observation"
    prompt = json.dumps(lm.history[-1]["messages"], ensure_ascii=False)
    assert "PLANNER-THOUGHT-SENTINEL" not in prompt


def _logs_entry(**fields: Any) -> Any:
    """A query_logs trace entry for order 123; `fields` override its values."""
    from evigate.signatures import ToolTraceEntry

    values = {
        "trace_ref": "trace-1",
        "tool_name": "query_logs",
        "success": True,
        "input_summary": "query_logs(order_id=123)",
        "output_summary": "1 line: ERR_TIMEOUT after 5300ms",
        "evidence_level": "direct",
        "source_invocation_ids": [4],
    }
    return ToolTraceEntry(**{**values, **fields})


def _prompt_payload(entries: list[Any], claims: list[dict[str, Any]]) -> tuple[VerifierInput, dict[str, Any]]:
    """A Verifier input over `entries` and `claims`, and the payload its prompt shows (parsed back from JSON)."""
    from evigate.modules.verifier import verifier_prompt_payload

    verifier_input = VerifierInput(
        original_query=QUERY,
        executor_structured_output={"answer_version": "executor_evidence_v2", "claims": claims},
        executor_output_parse_status=ExecutorOutputParseStatus(status="valid"),
        tool_trace_summary=entries,
    )
    return verifier_input, json.loads(verifier_prompt_payload(verifier_input).model_dump_json())


def test_the_verifier_prompt_leaves_out_only_empty_values() -> None:
    entry = _logs_entry(success=False, output_summary="", evidence_level="none", failure_count=1)
    verifier_input, payload = _prompt_payload([entry], [])
    shown = payload["tool_trace_summary"][0]
    assert shown["success"] is False and shown["failure_count"] == 1 and shown["source_invocation_ids"] == [4]
    assert "output_summary" not in shown and "repeat_count" not in shown and "query_samples" not in shown
    assert payload["executor_structured_output"]["answer_version"] == "executor_evidence_v2"
    assert "executor_raw_output" not in payload
    lm = dummy({"judgement": {"verdict": "LOW_CONFID", "claim_checks": []}})
    with dspy.context(lm=lm, adapter=JSON):
        Verifier()(verifier_input=verifier_input)
    prompt = lm.history[-1]["messages"][-1]["content"]
    assert '"failure_count": 1' in prompt and "query_samples" not in prompt and "repeat_count" not in prompt


def test_the_verifier_prompt_leaves_out_repeats_and_defaults_but_not_facts() -> None:
    once = _logs_entry(query_samples=["query_logs(order_id=123)"], call_count=1)
    folded = _logs_entry(query_samples=["query_logs(order_id=123)", "query_logs(order_id=124)"], call_count=2)
    binding = {"source_type": "tool_trace", "tool_name": "query_logs", "source_invocation_ids": [4]}
    other = {**binding, "source_type": "runbook"}
    claim = {"claim_id": "claim-1", "claim_text": "t", "evidence_bindings": [binding, other]}
    _, payload = _prompt_payload([once, folded], [claim])
    first, second = payload["tool_trace_summary"]
    assert "query_samples" not in first and "call_count" not in first  # one call: nothing to fold
    assert second["query_samples"] == folded.query_samples and second["call_count"] == 2
    bindings = payload["executor_structured_output"]["claims"][0]["evidence_bindings"]
    assert "source_type" not in bindings[0] and bindings[1]["source_type"] == "runbook"


def test_builtin_program_end_to_end_on_scripted_lms(world_db: Path) -> None:
    store = AuditStore(world_db)

    def current_invocations() -> list[Any]:
        return store.invocations(store.sessions(limit=1)[0]["session_id"])

    def executor_answer() -> dict[str, Any]:
        order = next(inv for inv in current_invocations() if inv.tool_name == "query_order")
        line = order.output_preview.splitlines()[0]
        return {
            "executor_output": {
                "answer_version": "executor_evidence_v2",
                "claims": [
                    {
                        "claim_id": "claim-1",
                        "claim_type": "symptom",
                        "claim_text": line,
                        "support_level": "direct",
                        "evidence_bindings": [
                            {
                                "source_type": "tool_trace",
                                "tool_name": "query_order",
                                "source_invocation_ids": [order.id],
                                "evidence_excerpt": line,
                            }
                        ],
                    }
                ],
                "missing_info": ["缺少通道侧耗时数据"],
            }
        }

    lms = {
        "planner": dummy({"choice": {"skill": "payment-timeout", "rationale": "订单支付超时"}}),
        "executor": DummyLM(lazy(executor_answer), adapter=JSON),
        "verifier": dummy(
            {
                "judgement": {
                    "verdict": "PASS",
                    "claim_checks": [
                        {"claim_id": "claim-1", "verification": "direct_observation", "detail": "订单记录直接显示"}
                    ],
                }
            }
        ),
        "composer": dummy(
            {
                "composer_output": {
                    "answer_summary": "订单 123 支付失败，错误码 ERR_TIMEOUT。",
                    "recommended_actions": [],
                    "user_facing_answer": "已确认：订单 123 状态为 FAILED，错误码 ERR_TIMEOUT。",
                }
            }
        ),
    }
    program = DiagnosisProgram.from_settings(database=world_db, lms=lms)
    assert isinstance(program.planner, Planner) and isinstance(program.composer, Composer)
    result = program(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("PASS", "NORMAL", 1)
    # The Composer's text, then the confirmed log line it left out, listed by code.
    said, listed = result.answer.split("\n\n", 1)
    assert said == "已确认：订单 123 状态为 FAILED，错误码 ERR_TIMEOUT。" and "upstream unionpay timeout" in listed
    steps = store.steps(result.session_id)
    # The claim quotes the order verbatim: code confirms it and the Verifier model is not called at all.
    assert [s["agent"] for s in steps] == ["planner", "executor", "verifier", "composer"]
    assert steps[2]["thought"].startswith("not called") and not steps[2]["model_output"]
    assert all(s["status"] == "ok" for s in steps)
    assert "chosen by rule" in steps[0]["thought"]  # ERR_TIMEOUT + an order id: no planner model call
    assert all(s["model_output"] for s in steps[1:] if s["agent"] != "verifier")
    assert '"claim-1"' in steps[1]["model_output"]  # the executor's raw model text, kept for audit


def test_saved_program_reloads_compiled_state(world_db: Path, tmp_path: Path) -> None:
    program = DiagnosisProgram.from_settings(database=world_db)
    program.verifier.judge.demos = [dspy.Example(verifier_input="x", judgement="y")]
    program.save(tmp_path / "program")
    from evigate import load_program

    loaded = load_program(tmp_path / "program", database=world_db)
    assert len(loaded.verifier.judge.demos) == 1
    assert json.loads((tmp_path / "program" / "manifest.json").read_text())["agents"] == [
        "planner",
        "executor",
        "verifier",
        "composer",
    ]


def test_a_saved_state_of_another_module_is_a_clear_error(world_db: Path, tmp_path: Path) -> None:
    """A program saved with a custom planner cannot load into the built-in one: ConfigError naming the file."""
    import pytest

    from evigate import load_program
    from evigate.errors import ConfigError
    from tests.modules.scripted import ScriptedPlanner

    DiagnosisProgram.from_settings(database=world_db, planner=ScriptedPlanner()).save(tmp_path / "program")
    with pytest.raises(ConfigError, match=r"planner\.json does not fit the planner agent"):
        load_program(tmp_path / "program", database=world_db)


def test_executor_react_mode_records_every_tool_call_including_bad_ones(world_db: Path) -> None:
    store = AuditStore(world_db)
    session_id = store.start_session(QUERY)
    toolbox = demo_toolbox(store, session_id)
    lm = dummy(
        {"next_thought": "查订单", "next_tool_name": "query_order", "next_tool_args": {"order_id": 123}},
        {"next_thought": "参数写错了", "next_tool_name": "query_metrics", "next_tool_args": {"nonsense": True}},
        {"next_thought": "够了", "next_tool_name": "finish", "next_tool_args": {}},
        {"reasoning": "订单失败", "executor_output": {"answer_version": "executor_evidence_v2", "claims": []}},
    )
    plan = Plan(skill="payment-timeout", steps=[])
    with dspy.context(lm=lm, adapter=JSON):
        prediction = Executor(mode="react")(query=QUERY, plan=plan, toolbox=toolbox)
    assert json.loads(prediction.raw_output)["claims"] == []
    calls = store.invocations(session_id)
    assert [(inv.tool_name, inv.success) for inv in calls] == [("query_order", True), ("query_metrics", False)]
    assert calls[1].error


def test_tool_names_that_are_no_tool_are_named_from_the_cited_calls() -> None:
    from evigate.modules.executor import name_cited_tools
    from evigate.signatures import ExecutorOutputV2, ToolInvocation

    calls = [
        ToolInvocation(id=7, session_id="s", tool_name="query_logs"),
        ToolInvocation(id=8, session_id="s", tool_name="query_order"),
    ]

    def binding(tool: str, ids: list[int]) -> dict[str, Any]:
        return {"tool_name": tool, "source_invocation_ids": ids, "evidence_excerpt": "x"}

    output = ExecutorOutputV2.model_validate(
        {
            "claims": [
                {
                    "claim_id": "a",
                    "claim_type": "symptom",
                    "claim_text": "t",
                    "support_level": "direct",
                    "evidence_bindings": [
                        binding("payment-service", [7]),  # a service name: repaired
                        binding("query_order", [7]),  # a different real tool: left to the Gatekeeper
                        binding("pay-gateway", [7, 8]),  # two tools cited: ambiguous, left
                        binding("payment-service", [999]),
                    ],
                },  # unknown id: left
            ]
        }
    )
    repairs = name_cited_tools(output, calls, {"query_logs", "query_order", "query_metrics"})
    names = [b.tool_name for b in output.claims[0].evidence_bindings]
    assert names == ["query_logs", "query_order", "pay-gateway", "payment-service"]
    assert repairs == ["a: tool_name 'payment-service' -> 'query_logs'"]


def test_an_error_code_at_a_named_time_decides_without_the_model() -> None:
    """Measured on train (0.5B default): "SLOW_SQL … overnight" was left to the model, which took the connection-pool
    runbook; a time places the code in an incident, as a service or an order does."""
    class Refuses(DummyLM):
        def forward(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the planner model must not be asked")

    query = "We're seeing SLOW_SQL warnings piling up overnight. Which query is it and why is it slow?"
    with dspy.context(lm=Refuses([], adapter=JSON), adapter=JSON):
        prediction = Planner()(query=query)
    assert prediction.decided_by == "rule" and prediction.plan.skill == "slow-sql"
    assert any("2026-11-28 00:00" in str(step.args) for step in prediction.plan.steps)  # the window is asked for
