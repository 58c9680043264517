"""The `contributions` audit slot (issue 18): what each agent contributed, through the real program, LM-free."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.modules.contributions import verifier_contribution
from evigate.rules import decide_verdict
from evigate.signatures import ComposerOutput, Contributions
from evigate.store import AuditStore
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedVerifier, claim, v2
from tests.modules.test_program_routing import LOG_FACT, ORDER_FACT, QUERY, TIMEOUT_LINE, build, error_line

BOTH_DIRECT = {"claim-1": "direct_observation", "claim-2": "direct_observation"}
CAUSE = "订单 123 支付失败是因为 pay-gateway 调用 unionpay 超时导致的"


def contributions(world_db: Path, session_id: str) -> dict[str, Any]:
    record = AuditStore(world_db).session(session_id)["self_evaluation"]["contributions"]
    Contributions.model_validate(record)  # the agreed shape (tasks/contrib_schema.md), nothing else
    return record


def statuses(round_record: dict[str, Any]) -> dict[str, str]:
    return {item["claim_id"]: item["status"] for item in round_record["executor"]["claims"]}


def paraphrases(results: list[Any], _round: int) -> str:
    order, logs = results
    return v2(claim("claim-1", order, text=ORDER_FACT), claim("claim-2", logs, excerpt=error_line(logs), text=LOG_FACT))


def test_claims_kept_as_written_labelled_by_the_model_and_the_composers_text_shown(world_db: Path) -> None:
    result = build(world_db, executor=ScriptedExecutor(paraphrases), verifier=ScriptedVerifier(BOTH_DIRECT))(
        query=QUERY)
    assert result.verdict == "PASS"
    record = contributions(world_db, result.session_id)
    (only,) = record["rounds"]
    assert only["round"] == 1
    assert statuses(only) == {"claim-1": "kept", "claim-2": "kept"}
    assert {key: only["executor"][key] for key in ("kept", "rewritten", "added_by_code", "dropped")} == {
        "kept": 2, "rewritten": 0, "added_by_code": 0, "dropped": 0}
    assert only["verifier"] == {"model_called": True, "labels_from_model": 2, "labels_from_code": 0,
                                "labels_from_caps": 0}
    assert record["composer"]["status"] == "shown" and record["composer"]["violations"] == []
    assert record["composer"]["lines_dropped"] == []


def test_a_fact_the_composers_shown_text_left_out_is_listed_by_code_and_recorded(world_db: Path) -> None:
    def first_fact_only(ci: Any) -> ComposerOutput:
        return ComposerOutput(answer_summary=ORDER_FACT, user_facing_answer=f"已确认：{ORDER_FACT}。")

    result = build(world_db, executor=ScriptedExecutor(paraphrases), verifier=ScriptedVerifier(BOTH_DIRECT),
                   composer=ScriptedComposer(first_fact_only))(query=QUERY)
    composer = contributions(world_db, result.session_id)["composer"]
    assert composer["status"] == "shown" and composer["facts_added"] == [LOG_FACT]
    assert result.answer.startswith(f"已确认：{ORDER_FACT}。") and LOG_FACT in result.answer


def test_a_question_claim_is_rewritten_or_dropped_and_code_adds_the_orders_line(world_db: Path) -> None:
    def questions(results: list[Any], _round: int) -> str:
        order, _logs = results
        return v2(claim("claim-1", order, claim_type="root_cause", text=QUERY),  # verbatim excerpt: rewritten
                  claim("claim-2", order, text="是不是数据库挂了？", excerpt="数据库挂了吗"))  # nothing to rewrite to

    result = build(world_db, executor=ScriptedExecutor(questions), verifier=ScriptedVerifier({}))(query=QUERY)
    (only,) = contributions(world_db, result.session_id)["rounds"]
    assert statuses(only) == {"claim-1": "rewritten", "claim-2": "dropped", "observed-1": "added_by_code"}
    reasons = {item["claim_id"]: item["reason"] for item in only["executor"]["claims"]}
    assert reasons["claim-1"].startswith("the claim text is a question; now: query_order 返回：order 123")
    assert "question" in reasons["claim-2"] and "query_logs" in reasons["observed-1"]
    assert (only["executor"]["rewritten"], only["executor"]["dropped"], only["executor"]["added_by_code"]) == (1, 1, 1)


def test_a_claim_a_reject_rule_excludes_is_dropped_with_the_rule_and_the_composer_is_skipped(world_db: Path) -> None:
    def forged(results: list[Any], _round: int) -> str:
        order, logs = results
        return v2(claim("claim-1", order), claim("claim-2", logs, text="根因是 mysql-order 死锁", ids=[987654321]))

    composer = ScriptedComposer()
    result = build(world_db, executor=ScriptedExecutor(forged), verifier=ScriptedVerifier(BOTH_DIRECT),
                   composer=composer)(query=QUERY)
    assert result.verdict == "REJECT" and composer.inputs == []
    record = contributions(world_db, result.session_id)
    (only,) = record["rounds"]
    dropped = next(item for item in only["executor"]["claims"] if item["claim_id"] == "claim-2")
    assert dropped["status"] == "dropped" and "evidence.invocation_ref" in dropped["reason"]
    assert only["verifier"]["labels_from_caps"] >= 1  # the model's direct_observation for claim-2 was lowered
    assert record["composer"]["status"] == "skipped" and "REJECT" in record["composer"]["reason"]


def test_code_confirmed_quotes_skip_the_verifier_model(world_db: Path) -> None:
    def quotes(results: list[Any], _round: int) -> str:
        order, logs = results
        return v2(claim("claim-1", order),
                  claim("claim-2", logs, excerpt=error_line(logs), text=f"pay-gateway 日志显示 {TIMEOUT_LINE}"))

    result = build(world_db, executor=ScriptedExecutor(quotes), verifier=ScriptedVerifier({}))(query=QUERY)
    (only,) = contributions(world_db, result.session_id)["rounds"]
    assert only["verifier"] == {"model_called": False, "labels_from_model": 0, "labels_from_code": 2,
                                "labels_from_caps": 0}


def test_a_capped_model_label_and_the_observation_code_added_beside_it(world_db: Path) -> None:
    def causal(results: list[Any], _round: int) -> str:
        _order, logs = results
        return v2(claim("claim-1", logs, excerpt=TIMEOUT_LINE, claim_type="root_cause", text=CAUSE))

    verifier = ScriptedVerifier({"claim-1": "direct_observation"})  # a causal claim is capped below that
    result = build(world_db, executor=ScriptedExecutor(causal), verifier=verifier)(query=QUERY)
    (only,) = contributions(world_db, result.session_id)["rounds"]
    assert statuses(only) == {"claim-1": "kept", "claim-1-observed": "added_by_code", "observed-1": "added_by_code"}
    assert only["verifier"] == {"model_called": True, "labels_from_model": 0, "labels_from_code": 2,
                                "labels_from_caps": 1}


def test_a_composer_text_the_guards_refuse_is_replaced_with_the_violations(world_db: Path) -> None:
    def leaky(_ci: Any) -> ComposerOutput:
        return ComposerOutput(answer_summary="根因已确认",
                              user_facing_answer="根因是 redis-cluster 故障，错误码 ERR_DEADLOCK。")

    result = build(world_db, executor=ScriptedExecutor(paraphrases), verifier=ScriptedVerifier(BOTH_DIRECT),
                   composer=ScriptedComposer(leaky))(query=QUERY)
    composer = contributions(world_db, result.session_id)["composer"]
    assert composer["status"] == "replaced" and composer["violations"]
    assert any("redis-cluster" in violation or "ERR_DEADLOCK" in violation for violation in composer["violations"])


def test_a_failed_composer_call_is_a_replacement_and_a_disabled_composer_is_skipped(world_db: Path) -> None:
    failed = build(world_db, executor=ScriptedExecutor(paraphrases), verifier=ScriptedVerifier(BOTH_DIRECT),
                   composer=ScriptedComposer(fail=True))(query=QUERY)
    composer = contributions(world_db, failed.session_id)["composer"]
    assert composer["status"] == "replaced" and "composer output unusable" in composer["violations"][0]
    unused = ScriptedComposer()
    off = build(world_db, executor=ScriptedExecutor(paraphrases), verifier=ScriptedVerifier(BOTH_DIRECT),
                composer=unused)
    off.settings.composer.enabled = False
    composer = contributions(world_db, off(query=QUERY).session_id)["composer"]
    assert unused.inputs == []
    assert composer["status"] == "skipped" and "disabled" in composer["reason"]


def test_every_round_is_recorded_and_an_unusable_output_calls_no_model(world_db: Path) -> None:
    result = build(world_db, executor=ScriptedExecutor(lambda _results, _round: "订单超时，根因是连接池耗尽。"),
                   verifier=ScriptedVerifier({}))(query=QUERY)
    assert result.rounds == 2
    record = contributions(world_db, result.session_id)
    assert [item["round"] for item in record["rounds"]] == [1, 2]
    for item in record["rounds"]:
        assert item["executor"]["claims"] == [] and item["verifier"]["model_called"] is False
    assert record["composer"]["status"] == "skipped" and "executor output missing" in record["composer"]["reason"]


def test_an_observation_a_rule_fails_is_recorded_as_dropped_with_the_rule(world_db: Path) -> None:
    from evigate.demo.domain import demo_registry
    from evigate.tools.base import Tool, ToolArgs, ToolOutput
    from tests.modules.test_program_routing import good_claims_of_four

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
    from tests.modules.scripted import ScriptedPlanner

    result = build(world_db, planner=ScriptedPlanner(steps), executor=ScriptedExecutor(good_claims_of_four),
                   verifier=ScriptedVerifier(BOTH_DIRECT), registry=registry)(query=QUERY)
    (only,) = contributions(world_db, result.session_id)["rounds"]
    dropped = [item for item in only["executor"]["claims"] if item["status"] == "dropped"]
    assert dropped and all(item["reason"].startswith("added by code, then failed") for item in dropped)
    assert any("claim.hallucination_phrases" in item["reason"] for item in dropped)
    assert statuses(only)["claim-1"] == "kept" and statuses(only)["claim-2"] == "kept"


VERIFICATIONS = st.sampled_from(["direct_observation", "reasonable_inference", "overstated", "unsupported",
                                 "external_unknown", "contradicted"])


@settings(max_examples=60, deadline=None)
@given(labels=st.lists(st.tuples(VERIFICATIONS | st.none(), st.booleans(),
                                 st.sampled_from(["direct", "indirect"]),
                                 st.sampled_from(["symptom", "root_cause", "context"])), max_size=6))
def test_every_judged_claim_has_exactly_one_label_source(labels: list[tuple[Any, bool, str, str]]) -> None:
    claims = [{"claim_id": f"c{i}", "claim_type": kind, "claim_text": f"fact {i}", "support_level": support,
               "evidence_bindings": []} for i, (_, _, support, kind) in enumerate(labels)]
    model = [{"claim_id": f"c{i}", "verification": label} for i, (label, by_code, _, _) in enumerate(labels)
             if label is not None and not by_code]
    from evigate.signatures import ClaimCheck

    code = {f"c{i}": ClaimCheck(claim_id=f"c{i}", verification="direct_observation")
            for i, (_, by_code, _, _) in enumerate(labels) if by_code}
    decision = decide_verdict({"claims": claims}, model, None, "valid", {}, code_checks=code)
    counted = verifier_contribution(decision, model_called=bool(model))
    assert counted.labels_from_model + counted.labels_from_code + counted.labels_from_caps == len(claims)
    assert counted.labels_from_model <= len(model)
    assert counted.labels_from_caps == len(decision.capped) + len(
        [key for key, check in decision.claim_checks.items()
         if key not in decision.capped and decision.effective_checks[key] != check.verification])


def test_the_lines_code_kept_from_the_user_are_the_composer_records_lines_dropped(world_db: Path) -> None:
    from tests.modules.test_junk_never_shown import JUNK, junk_output

    result = build(world_db, executor=ScriptedExecutor(junk_output),
                   verifier=ScriptedVerifier({"claim-1": "direct_observation"}))(query=QUERY)
    dropped = contributions(world_db, result.session_id)["composer"]["lines_dropped"]
    kinds = {(line["kind"], line["text"]) for line in dropped}
    assert {("hypothesis", JUNK[0]), ("hypothesis", JUNK[1]), ("action", JUNK[2]), ("action", JUNK[3])} <= kinds
    assert any(line["kind"] == "gap" for line in dropped)
    assert all(line["reason"] for line in dropped)
    for line in dropped:
        assert line["text"] not in result.answer
