"""Every routing path of the program, driven by scripted agents on the real demo world and audit store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evigate.modules.program import DiagnosisProgram
from evigate.signatures import ComposerOutput
from evigate.store import AuditStore
from tests.modules.scripted import (
    ScriptedComposer,
    ScriptedExecutor,
    ScriptedPlanner,
    ScriptedVerifier,
    claim,
    v2,
)

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"
TIMEOUT_LINE = "ERR_TIMEOUT upstream unionpay timeout after 5300ms (timeout=3000ms)"


def error_line(result: Any) -> str:
    return next(line for line in result.output.splitlines() if TIMEOUT_LINE in line)


ORDER_FACT = "订单 123 支付失败，错误码 ERR_TIMEOUT"
LOG_FACT = "pay-gateway 调用 unionpay 超时，耗时 5300ms，超时配置为 3000ms"


def good_claims(results: list[Any], _round: int) -> str:
    """Paraphrases, not quotes: code cannot confirm them, so the (scripted) Verifier's labels decide."""
    order, logs = results
    return v2(
        claim("claim-1", order, text=ORDER_FACT),
        claim("claim-2", logs, excerpt=error_line(logs), text=LOG_FACT),
        missing=["缺少 unionpay 通道侧的耗时数据"],
        actions=[{"action_text": "检查 unionpay 通道耗时", "reason": "确认超时发生在通道侧", "evidence_bindings": []}],
    )


def build(
    world_db: Path, *, planner: Any = None, executor: Any = None, verifier: Any, composer: Any = None, **overrides: Any
) -> DiagnosisProgram:
    return DiagnosisProgram.from_settings(
        database=world_db,
        planner=planner or ScriptedPlanner(),
        executor=executor or ScriptedExecutor(good_claims),
        verifier=verifier,
        composer=composer or ScriptedComposer(),
        **overrides,
    )


def session(world_db: Path, session_id: str) -> dict[str, Any]:
    return AuditStore(world_db).session(session_id)


def test_pass_gives_a_normal_answer_from_the_checked_composer_output(world_db: Path) -> None:
    composer = ScriptedComposer()
    program = build(
        world_db,
        verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"}),
        composer=composer,
    )
    result = program(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("PASS", "NORMAL", 1)
    assert result.groundedness_score == 1.0
    assert "5300ms" in result.answer and "已确认" in result.answer
    assert [c.claim_id for c in composer.inputs[0].allowed_claims] == ["claim-1", "claim-2"]
    record = session(world_db, result.session_id)
    evaluation = record["self_evaluation"]["verifier_evaluation"]
    assert record["self_evaluation"]["rule_evaluation"]["source"] == "rule"
    assert evaluation["verdict"] == "PASS" and evaluation["model_verdict"] == "PASS"
    assert evaluation["gatekeeper_result"]["status"] in ("pass", "warn")
    assert evaluation["facts_checked"][0]["fact"] == f"claim-1: {ORDER_FACT}"
    assert evaluation["composer_output"]["user_facing_answer"]
    assert evaluation["tool_trace_summary"][0]["source_invocation_ids"]
    agents = [step["agent"] for step in AuditStore(world_db).steps(result.session_id)]
    assert agents == ["planner", "executor", "verifier", "composer"]


def test_low_confid_at_or_above_threshold_answers_with_the_disclaimer(world_db: Path) -> None:
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "overstated"}, model_verdict="PASS")
    composer = ScriptedComposer()
    result = build(world_db, verifier=verifier, composer=composer)(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("LOW_CONFID", "LOW_CONFID_WITH_DISCLAIMER", 1)
    assert result.groundedness_score == pytest.approx(0.8)
    composer_input = composer.inputs[0]
    assert [c.claim_id for c in composer_input.allowed_claims] == ["claim-1"]
    assert any(LOG_FACT in h.hypothesis_text for h in composer_input.allowed_hypotheses)
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert evaluation["model_verdict"] == "PASS" and evaluation["verdict"] == "LOW_CONFID"


def test_low_confid_below_threshold_runs_a_second_round_with_the_gaps(world_db: Path) -> None:
    planner = ScriptedPlanner()
    executor = ScriptedExecutor(good_claims)

    def by_round(verifier_input: Any) -> dict[str, str]:
        first = verifier_input.retry_context is None
        return {
            "claim-1": "unsupported" if first else "direct_observation",
            "claim-2": "unsupported" if first else "direct_observation",
        }

    result = build(world_db, planner=planner, executor=executor, verifier=ScriptedVerifier(by_round))(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("PASS", "NORMAL", 2)
    retry = executor.retry_contexts[1]
    assert planner.retry_contexts[0] is None and planner.retry_contexts[1] == retry
    assert retry.round == 1 and retry.missing_evidence_facts
    assert any("query_order" in done for done in retry.completed_queries)
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert evaluation["round"] == 2 and [r["round"] for r in evaluation["history"]] == [1]
    assert evaluation["history"][0]["verdict"] == "LOW_CONFID"


def test_two_rounds_is_a_hard_limit(world_db: Path) -> None:
    executor = ScriptedExecutor(good_claims)
    verifier = ScriptedVerifier({"claim-1": "unsupported", "claim-2": "unsupported"})
    result = build(world_db, executor=executor, verifier=verifier)(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("LOW_CONFID", "LOW_CONFID_WITH_DISCLAIMER", 2)
    assert executor.rounds == 2 and len(verifier.inputs) == 2


def test_forged_invocation_id_is_rejected_without_a_second_round(world_db: Path) -> None:
    def forged(results: list[Any], _round: int) -> str:
        order, logs = results
        return v2(claim("claim-1", order), claim("claim-2", logs, text="根因是 mysql-order 死锁", ids=[987654321]))

    composer = ScriptedComposer()
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"})
    result = build(world_db, executor=ScriptedExecutor(forged), verifier=verifier, composer=composer)(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("REJECT", "DEGRADED", 1)
    assert result.groundedness_score == 0.0
    assert composer.inputs == []  # REJECT is fully code-rendered
    assert "mysql-order" not in result.answer and "死锁" not in result.answer
    gate = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]["gatekeeper_result"]
    assert "evidence.invocation_ref" in gate["failed_rules"]


def test_contradicted_critical_claim_is_rejected(world_db: Path) -> None:
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "contradicted"}, model_verdict="PASS")
    result = build(world_db, verifier=verifier)(query=QUERY)
    assert (result.verdict, result.output_type) == ("REJECT", "DEGRADED")
    assert LOG_FACT not in result.answer


@pytest.mark.parametrize(
    "raw", ["", "订单超时，根因是连接池耗尽。", '{"answer_version": "executor_evidence_v2", "claims": [']
)
def test_unusable_executor_output_skips_verifier_and_composer(world_db: Path, raw: str) -> None:
    verifier, composer = ScriptedVerifier({}), ScriptedComposer()
    executor = ScriptedExecutor(lambda _results, _round: raw)
    result = build(world_db, executor=executor, verifier=verifier, composer=composer)(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("LOW_CONFID", "LOW_CONFID_WITH_DISCLAIMER", 2)
    assert result.groundedness_score == 0.0
    assert verifier.inputs == [] and composer.inputs == []
    assert "连接池耗尽" not in result.answer and "{" not in result.answer


def test_failed_verifier_never_yields_pass(world_db: Path) -> None:
    result = build(world_db, verifier=ScriptedVerifier({}, fail=True))(query=QUERY)
    assert result.verdict != "PASS"
    reasons = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]["reasons"]
    assert any("verifier unavailable" in reason for reason in reasons)


def test_failed_composer_falls_back_to_the_deterministic_renderer(world_db: Path) -> None:
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"})
    result = build(world_db, verifier=verifier, composer=ScriptedComposer(fail=True))(query=QUERY)
    assert (result.verdict, result.output_type) == ("PASS", "NORMAL")
    assert ORDER_FACT in result.answer
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert evaluation["composer_violations"] and evaluation["composer_output"] is None


def test_composer_output_with_an_entity_it_was_not_given_is_replaced(world_db: Path) -> None:
    def leaky(ci: Any) -> ComposerOutput:
        return ComposerOutput(
            answer_summary="根因已确认", user_facing_answer="根因是 redis-cluster 故障，错误码 ERR_DEADLOCK。"
        )

    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"})
    result = build(world_db, verifier=verifier, composer=ScriptedComposer(leaky))(query=QUERY)
    assert "ERR_DEADLOCK" not in result.answer and "redis-cluster" not in result.answer
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert evaluation["composer_violations"]


def test_failed_planner_uses_the_skill_fallback_and_the_evidence_decides(world_db: Path) -> None:
    """Decision (docs/confirmation.md): a fallback plan only chose the evidence; claims it proves may PASS."""

    def from_whatever_ran(results: list[Any], _round: int) -> str:
        order = next(r for r in results if r.tool_name == "query_order")
        return v2(claim("claim-1", order, text=ORDER_FACT))

    verifier = ScriptedVerifier(
        lambda vi: {c["claim_id"]: "direct_observation" for c in vi.executor_structured_output["claims"]}
    )
    result = build(
        world_db, planner=ScriptedPlanner(fail=True), executor=ScriptedExecutor(from_whatever_ran), verifier=verifier
    )(query=QUERY)
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert result.verdict == "PASS", evaluation["reasons"]
    tools = {inv.tool_name for inv in AuditStore(world_db).invocations(result.session_id)}
    assert "query_order" in tools  # the payment-timeout skill was filled with order 123
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert "planner_fallback" in evaluation["code_confirmation"]["flags"]
    assert any(reason.startswith("planner failed, deterministic plan used") for reason in evaluation["reasons"])


class MappingPlanner(ScriptedPlanner):
    """A user's planner that returns its plan as a plain mapping, as the stage contract allows."""

    def __init__(self, plan: dict[str, Any]) -> None:
        super().__init__()
        self.plan = plan

    def forward(self, query: str, retry_context: Any = None) -> Any:
        import dspy

        return dspy.Prediction(plan=self.plan)


def test_a_planner_may_return_its_plan_as_a_mapping(world_db: Path) -> None:
    from tests.modules.scripted import LOG_STEP, ORDER_STEP

    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"})
    planner = MappingPlanner({"skill": "mine", "steps": [ORDER_STEP, LOG_STEP]})
    result = build(world_db, planner=planner, verifier=verifier)(query=QUERY)
    assert result.verdict == "PASS"
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert "planner_fallback" not in evaluation["code_confirmation"]["flags"]
    planner_step = next(s for s in AuditStore(world_db).steps(result.session_id) if s["agent"] == "planner")
    assert planner_step["thought"].startswith("skill=mine")


def test_a_plan_mapping_that_does_not_fit_names_the_field(world_db: Path) -> None:
    verifier = ScriptedVerifier(
        lambda vi: {c["claim_id"]: "direct_observation" for c in vi.executor_structured_output["claims"]}
    )
    planner = MappingPlanner({"skill": "mine", "steps": [{"args": {"order_id": "123"}}]})
    result = build(world_db, planner=planner, executor=ScriptedExecutor(lambda results, _r: v2(
        *(claim(f"claim-{i}", r) for i, r in enumerate(results, start=1) if r.success and r.output.strip()))),
        verifier=verifier)(query=QUERY)
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    note = next(reason for reason in evaluation["reasons"] if reason.startswith("planner failed"))
    assert "steps.0.tool" in note and "Field required" in note


def test_claims_that_quote_their_outputs_are_confirmed_by_code_without_the_verifier_model(world_db: Path) -> None:
    def quotes(results: list[Any], _round: int) -> str:
        order, logs = results
        return v2(claim("claim-1", order),
                  claim("claim-2", logs, excerpt=error_line(logs), text=f"pay-gateway 日志显示 {TIMEOUT_LINE}"))

    verifier = ScriptedVerifier({"claim-1": "unsupported", "claim-2": "unsupported"})
    result = build(world_db, executor=ScriptedExecutor(quotes), verifier=verifier)(query=QUERY)
    assert (result.verdict, result.output_type, result.rounds) == ("PASS", "NORMAL", 1)
    assert verifier.inputs == []  # code decided every claim: no model call
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    confirmation = evaluation["code_confirmation"]
    assert confirmation["label_sources"] == {"claim-1": "code", "claim-2": "code"}
    assert confirmation["verifier_model_called"] is False
    assert all(check["detail"].startswith("confirmed by code") for check in evaluation["claim_checks"])
    steps = AuditStore(world_db).steps(result.session_id)
    assert [step["agent"] for step in steps] == ["planner", "executor", "verifier", "composer"]
    assert steps[2]["thought"].startswith("not called: code confirmed every claim (claim-1, claim-2)")
    assert steps[2]["prompt_tokens"] == 0 and steps[2]["model_output"] == ""


def test_the_verifier_model_reads_only_the_claims_code_left(world_db: Path) -> None:
    def mixed(results: list[Any], _round: int) -> str:
        order, logs = results
        return v2(claim("claim-1", order), claim("claim-2", logs, excerpt=error_line(logs), text=LOG_FACT))

    verifier = ScriptedVerifier({"claim-2": "overstated"})
    result = build(world_db, executor=ScriptedExecutor(mixed), verifier=verifier)(query=QUERY)
    assert [c["claim_id"] for c in verifier.inputs[0].executor_structured_output["claims"]] == ["claim-2"]
    assert result.verdict == "LOW_CONFID"
    sources = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]["code_confirmation"]
    assert sources["label_sources"] == {"claim-1": "code", "claim-2": "model"}


def test_a_question_as_claim_text_beside_a_verbatim_excerpt_becomes_the_tools_observation(world_db: Path) -> None:
    def question(results: list[Any], _round: int) -> str:
        order, _logs = results
        return v2(claim("claim-1", order, claim_type="root_cause", text=QUERY))

    result = build(world_db, executor=ScriptedExecutor(question), verifier=ScriptedVerifier({}))(query=QUERY)
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    rewrite, anchored = evaluation["code_confirmation"]["rewritten"]
    assert rewrite["original_text"] == QUERY and rewrite["new_text"].startswith("query_order 返回：order 123")
    # query_logs, which no claim quotes, returned the order's log line: code states it too (confirmation.md §4d).
    assert anchored["claim_id"] == "observed-1" and anchored["new_text"].startswith("query_logs 返回：")
    claim_out, observed = evaluation["executor_structured_output"]["claims"]
    assert claim_out["claim_type"] == "symptom" == observed["claim_type"]  # never a root cause made a fact
    assert "是什么原因" not in result.answer and "order 123" in result.answer


def test_the_log_line_a_causal_claim_quotes_is_stated_as_the_tools_observation(world_db: Path) -> None:
    """Measured on the 0.5B default: causal claims over a verbatim excerpt left "已确认信息：（暂无）"."""
    cause = "订单 123 支付失败是因为 pay-gateway 调用 unionpay 超时导致的"

    def causal(results: list[Any], _round: int) -> str:
        _order, logs = results
        return v2(claim("claim-1", logs, excerpt=TIMEOUT_LINE, claim_type="root_cause", text=cause))

    verifier = ScriptedVerifier({"claim-1": "unsupported"})
    result = build(world_db, executor=ScriptedExecutor(causal), verifier=verifier)(query=QUERY)
    assert [c["claim_id"] for c in verifier.inputs[0].executor_structured_output["claims"]] == ["claim-1"]
    assert result.verdict == "LOW_CONFID"  # the cause is still judged on its own, and blocks PASS
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert evaluation["code_confirmation"]["label_sources"] == {
        "claim-1": "model", "claim-1-observed": "code", "observed-1": "code"}  # observed-1: the unquoted order
    allowed = evaluation["composer_input"]["allowed_claims"]
    assert [(c["claim_id"], c["claim_type"]) for c in allowed] == [("claim-1-observed", "symptom"),
                                                                   ("observed-1", "symptom")]
    assert allowed[1]["claim_text"].startswith("query_order 返回：order 123")
    assert allowed[0]["claim_text"].startswith("query_logs 返回：") and TIMEOUT_LINE in allowed[0]["claim_text"]
    assert "query_logs 返回：2026-11-28 14:03:12 ERROR pay-gateway" in result.answer and TIMEOUT_LINE in result.answer
    assert result.answer.count(cause) == result.answer.count(f"“{cause}”缺少直接证据")  # the cause: only as a gap


def test_executor_timeout_degrades_to_low_confid(world_db: Path) -> None:
    executor = ScriptedExecutor(good_claims, sleep_s=1.5)
    verifier = ScriptedVerifier({})
    result = build(world_db, executor=executor, verifier=verifier, timeouts={"agent_seconds": 0.3})(query=QUERY)
    assert (result.verdict, result.groundedness_score) == ("LOW_CONFID", 0.0)
    assert verifier.inputs == []
    steps = AuditStore(world_db).steps(result.session_id)
    assert any(step["agent"] == "executor" and "timed out" in (step["error"] or "") for step in steps)


def test_composer_switch_off_renders_deterministically(world_db: Path) -> None:
    composer = ScriptedComposer()
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"})
    program = build(world_db, verifier=verifier, composer=composer)
    program.settings.composer.enabled = False  # the §22.2 rollback switch (settings key composer.enabled)
    result = program(query=QUERY)
    assert result.output_type == "NORMAL" and composer.inputs == []
    assert ORDER_FACT in result.answer


def test_query_must_be_text(world_db: Path) -> None:
    program = build(world_db, verifier=ScriptedVerifier({}))
    with pytest.raises(ValueError, match="query"):
        program(query="   ")


def test_english_locale_templates(world_db: Path) -> None:
    verifier = ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "contradicted"})
    program = build(world_db, verifier=verifier)
    program.settings.locale = "en"
    result = program(query=QUERY)
    assert result.output_type == "DEGRADED"
    assert result.answer.startswith("A reliable conclusion cannot be drawn from the evidence gathered")
    assert "人工介入" not in result.answer


def test_a_local_verifier_reads_the_cited_trace_entries_first_within_its_budget(world_db: Path, tmp_path: Path) -> None:
    from tests.modules.scripted import KB_STEP, LOG_STEP, ORDER_STEP

    def cite_the_logs(results: list[Any], _round: int) -> str:
        logs = results[1]
        return v2(claim("claim-1", logs, excerpt=error_line(logs), text=LOG_FACT))

    metrics = {"tool": "query_metrics", "args": {"service": "pay-gateway", "metric": "latency_p99"}}
    shown: dict[str, list[str]] = {}
    for model in ("local/qwen2.5-coder-0.5b", "openai/gpt-4o-mini"):
        verifier = ScriptedVerifier({"claim-1": "direct_observation"})
        settings_file = tmp_path / "settings.yaml"  # `verifier` is the agent keyword, so its settings go in YAML
        settings_file.write_text("verifier:\n  local_max_trace_entries: 2\n", encoding="utf-8")
        program = DiagnosisProgram.from_settings(
            settings_file,
            database=world_db,
            planner=ScriptedPlanner([ORDER_STEP, LOG_STEP, KB_STEP, metrics]),
            executor=ScriptedExecutor(cite_the_logs),
            verifier=verifier,
            composer=ScriptedComposer(),
            models={"default": model},
        )
        result = program(query=QUERY)
        shown[model] = [entry.tool_name for entry in verifier.inputs[0].tool_trace_summary]
        evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
        assert [entry["tool_name"] for entry in evaluation["tool_trace_summary"]] == shown[model]  # what it read
        thought = [s["thought"] for s in AuditStore(world_db).steps(result.session_id) if s["agent"] == "verifier"]
        assert f"trace entries shown {len(shown[model])} of 4" in thought[0]
    # The cited logs entry stays; the budget cuts uncited auxiliary entries, latest first (V1 truncation priority).
    assert shown["local/qwen2.5-coder-0.5b"] == ["query_order", "query_logs"]
    assert shown["openai/gpt-4o-mini"] == ["query_order", "query_logs", "lookup_knowledge", "query_metrics"]


def test_the_trace_budget_of_a_local_verifier_model_holds_in_both_rounds(world_db: Path) -> None:
    """The budget follows the Verifier's LM (here an injected one named like the embedded model), in every round."""
    import dspy
    from dspy.utils import DummyLM

    from evigate.modules import Verifier
    from tests.modules.scripted import KB_STEP, LOG_STEP, ORDER_STEP

    metrics = {"tool": "query_metrics", "args": {"service": "pay-gateway", "metric": "latency_p99"}}
    unsupported = {
        "judgement": {"verdict": "LOW_CONFID", "claim_checks": [{"claim_id": "claim-1", "verification": "unsupported"}]}
    }
    lm = DummyLM([unsupported, unsupported], adapter=dspy.JSONAdapter())
    lm.model = "local/qwen2.5-coder-0.5b"
    program = DiagnosisProgram.from_settings(
        database=world_db,
        planner=ScriptedPlanner([ORDER_STEP, LOG_STEP, KB_STEP, metrics]),
        executor=ScriptedExecutor(good_claims_of_four),
        verifier=Verifier(),
        composer=ScriptedComposer(),
        lms={"verifier": lm},
    )
    result = program(query=QUERY)
    assert result.rounds == 2
    payloads = [
        json.loads(call["messages"][-1]["content"].split("]]\n", 1)[1].rsplit("\n\nRespond", 1)[0])
        for call in lm.history
    ]
    assert [len(p["tool_trace_summary"]) for p in payloads] == [3, 3]  # local_max_trace_entries, both rounds


def good_claims_of_four(results: list[Any], _round: int) -> str:
    return good_claims(results[:2], _round)


def test_an_observation_code_added_that_a_rule_fails_is_dropped_and_costs_nothing(world_db: Path) -> None:
    """A returned line naming the order can hold a phrase claim.hallucination_phrases fails ("usually"): stated by
    code it would have failed the gate and made LOW_CONFID out of the Executor's PASS."""
    from evigate.demo.domain import demo_registry
    from evigate.tools.base import Tool, ToolArgs, ToolOutput

    class NoteArgs(ToolArgs):
        order_id: int

    class GatewayNotes(Tool):
        name, description, Args = "query_gateway_notes", "Operator notes about an order.", NoteArgs

        def run(self, args: NoteArgs, world: Any) -> ToolOutput:
            return ToolOutput(text=f"order {args.order_id} ERR_TIMEOUT: unionpay usually answers within 800ms")

    registry = demo_registry()
    registry.register(GatewayNotes())
    steps = [{"tool": "query_order", "args": {"order_id": 123}}, {"tool": "query_logs", "args": {"order_id": 123}},
             {"tool": "query_gateway_notes", "args": {"order_id": 123}}]
    program = build(world_db, planner=ScriptedPlanner(steps), executor=ScriptedExecutor(good_claims_of_four),
                    verifier=ScriptedVerifier({"claim-1": "direct_observation", "claim-2": "direct_observation"}),
                    registry=registry)
    result = program(query=QUERY)
    assert result.verdict == "PASS", result.answer
    evaluation = session(world_db, result.session_id)["self_evaluation"]["verifier_evaluation"]
    assert [c["claim_id"] for c in evaluation["executor_structured_output"]["claims"]] == ["claim-1", "claim-2"]
    assert "usually" not in result.answer
