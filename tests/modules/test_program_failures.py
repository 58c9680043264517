"""Infrastructure failures are recorded as what they are (issue 13 item 11), never hidden as a degraded answer."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from evigate.errors import StoreError
from evigate.modules.program import DiagnosisProgram
from evigate.store import AuditStore
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, claim, v2

QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def one_claim(results: list[Any], _round: int) -> str:
    return v2(claim("claim-1", results[0]))


def build(world: Path, **agents: Any) -> DiagnosisProgram:
    agents = {
        "planner": ScriptedPlanner(),
        "executor": ScriptedExecutor(one_claim),
        "verifier": ScriptedVerifier({"claim-1": "supported"}),
        "composer": ScriptedComposer(),
        **agents,
    }
    return DiagnosisProgram.from_settings(database=world, **agents)


class DiskFullStore(AuditStore):
    """The real store, whose tool_invocation writes fail the way a full disk makes them fail."""

    def record_invocation(self, *args: Any, **kwargs: Any) -> Any:
        raise StoreError(f"audit database {self.path}: IO Error: could not write: No space left on device")


def test_a_store_error_while_recording_a_tool_call_fails_the_session_as_a_store_error(private_world: Path) -> None:
    program = build(private_world)
    program.store.close()
    program.store = DiskFullStore(private_world)
    with pytest.raises(StoreError, match="No space left on device"):
        program(query=QUERY)
    [row] = [row for row in AuditStore(private_world, read_only=True).sessions() if row["query"] == QUERY]
    assert row["status"] == "failed"
    assert row["error"].startswith("StoreError: ") and "No space left on device" in row["error"]
    steps = AuditStore(private_world, read_only=True).steps(row["session_id"])
    assert not any("executor unavailable" in step["thought"] for step in steps)


class FailingRuleStore(AuditStore):
    """The real store, whose rule_evaluation slot cannot be written."""

    def merge_self_evaluation(self, session_id: str, slot: str, value: Any) -> None:
        if slot == "rule_evaluation":
            raise RuntimeError("rule scoring blew up")
        super().merge_self_evaluation(session_id, slot, value)


class SlowRuleStore(AuditStore):
    """The real store, slow to write the rule_evaluation slot."""

    def merge_self_evaluation(self, session_id: str, slot: str, value: Any) -> None:
        if slot == "rule_evaluation":
            time.sleep(3)
        super().merge_self_evaluation(session_id, slot, value)


def with_store(world: Path, store_class: type[AuditStore]) -> DiagnosisProgram:
    program = build(world)
    program.store.close()
    program.store = store_class(world)
    return program


def rule_steps(world: Path, session_id: str) -> list[dict[str, Any]]:
    return [step for step in AuditStore(world).steps(session_id) if step["agent"] == "rule_evaluation"]


def test_an_exception_of_the_rule_writer_is_recorded_in_the_audit(private_world: Path) -> None:
    program = with_store(private_world, FailingRuleStore)
    result = program(query=QUERY)
    [step] = rule_steps(private_world, result.session_id)
    assert step["status"] == "error" and "RuntimeError: rule scoring blew up" in step["error"]
    session = program.store.session(result.session_id)
    assert session["status"] == "finished" and "rule_evaluation" not in session["self_evaluation"]
    assert "verifier_evaluation" in session["self_evaluation"]


def test_a_rule_writer_that_outlives_its_wait_is_recorded_not_dropped_silently(private_world: Path) -> None:
    program = with_store(private_world, SlowRuleStore)
    program.rule_evaluation_wait_seconds = 0.2
    result = program(query=QUERY)
    [step] = rule_steps(private_world, result.session_id)
    assert step["status"] == "timeout" and "did not finish within 0.2s" in step["error"]
    assert program.store.session(result.session_id)["status"] == "finished"


def test_a_healthy_rule_writer_leaves_no_failure_step_and_fills_its_slot(world_db: Path) -> None:
    result = build(world_db)(query=QUERY)
    assert rule_steps(world_db, result.session_id) == []
    assert "rule_evaluation" in AuditStore(world_db).session(result.session_id)["self_evaluation"]
