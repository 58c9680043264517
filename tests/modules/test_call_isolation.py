"""What one agent call may touch: its own session's toolbox, only while the call lasts; Ctrl-C ends a session.

Scripted agents on the real demo world and audit store, run in threads the way a server runs sessions.
"""

from __future__ import annotations

import _thread
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dspy
import pytest

from evigate.errors import AgentError
from evigate.modules.call_toolbox import CallToolbox
from evigate.modules.calls import call_agent
from evigate.modules.executor import Executor
from evigate.signatures import Plan
from evigate.store import AuditStore
from evigate.tools import Toolbox
from tests.modules.scripted import ScriptedComposer, ScriptedExecutor, ScriptedPlanner, ScriptedVerifier, claim, v2
from tests.modules.test_program_routing import QUERY, build

ALL_DIRECT = {"claim-1": "direct_observation", "claim-2": "direct_observation"}


def in_threads(target: Any, args: list[Any], timeout: float = 120) -> None:
    """``target(arg)`` for every arg at once, one thread each, as a server runs its sessions."""
    threads = [threading.Thread(target=target, args=(arg,)) for arg in args]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)


class ScriptedReact(dspy.Module):
    """Stands in for dspy.ReAct: drives the Executor's own ReAct tools, pausing so that sessions interleave."""

    def __init__(self, tools: dict[str, Any], order_of: dict[str, str], barrier: threading.Barrier) -> None:
        super().__init__()
        self.tools, self.order_of, self.barrier = tools, order_of, barrier

    def forward(self, query: str, plan: Any, retry_context: Any = None) -> dspy.Prediction:
        order_id = self.order_of[query]
        self.barrier.wait(timeout=10)  # both sessions are inside their Executor call now
        first = self.tools["query_order"](order_id=order_id)
        time.sleep(0.05)
        second = self.tools["query_logs"](order_id=order_id)
        return dspy.Prediction(executor_output=f"{first}\n{second}")


def test_react_sessions_in_parallel_record_only_into_their_own_session(world_db: Path) -> None:
    executor = Executor("react")
    queries = {f"订单 {oid} 支付失败，ERR_TIMEOUT 是什么原因？": oid for oid in ("123", "456")}
    assert executor.react is not None
    executor.react = ScriptedReact(executor.react.tools, queries, threading.Barrier(2))
    program = build(world_db, executor=executor, verifier=ScriptedVerifier(ALL_DIRECT))
    results: dict[str, Any] = {}

    def ask(query: str) -> None:
        results[query] = program(query=query)

    in_threads(ask, list(queries))
    store = AuditStore(world_db)
    for query, order_id in queries.items():
        first_round = store.invocations(results[query].session_id, round=1)
        assert [inv.tool_name for inv in first_round] == ["query_order", "query_logs"]
        invocations = store.invocations(results[query].session_id)  # (the scripted text is no V2: a round 2 ran)
        assert all(inv.input == {"order_id": order_id} for inv in invocations), invocations


class MeetingToolbox:
    """Records the tool calls it is given; its first call waits for the other session's first call."""

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def call(self, name: str, /, **args: Any) -> Any:
        if not self.calls:
            self.barrier.wait(timeout=10)  # both sessions have their ReAct tools bound by now
        self.calls.append((name, args))
        return SimpleNamespace(success=True, invocation_id=len(self.calls), output=f"{name} {args}", error=None)


def test_one_react_executor_serves_two_threads_each_with_its_own_toolbox() -> None:
    # dspy.ReAct calls its tools itself: each call binds them to its own toolbox, on a copy of the shared module.
    from dspy.utils import DummyLM

    executor = Executor("react")
    barrier = threading.Barrier(2)
    toolboxes = {order_id: MeetingToolbox(barrier) for order_id in ("123", "456")}
    outputs: dict[str, str] = {}

    def run(order_id: str) -> None:
        lm = DummyLM([
            {"next_thought": "订单", "next_tool_name": "query_order", "next_tool_args": {"order_id": order_id}},
            {"next_thought": "日志", "next_tool_name": "query_logs", "next_tool_args": {"order_id": order_id}},
            {"next_thought": "够了", "next_tool_name": "finish", "next_tool_args": {}},
            {"reasoning": "r", "executor_output": {"answer_version": "executor_evidence_v2", "claims": []}},
        ], adapter=dspy.JSONAdapter())
        with dspy.context(lm=lm, adapter=dspy.JSONAdapter()):
            plan = Plan(skill="payment-timeout", steps=[])
            outputs[order_id] = executor(query=f"订单 {order_id}", plan=plan, toolbox=toolboxes[order_id]).raw_output

    in_threads(run, list(toolboxes))
    assert set(outputs) == {"123", "456"}
    for order_id, toolbox in toolboxes.items():
        assert toolbox.calls == [("query_order", {"order_id": order_id}), ("query_logs", {"order_id": order_id})]
    with pytest.raises(RuntimeError, match="outside an Executor call"):  # the shared module's tools record nowhere
        executor.react.tools["query_order"](order_id="123")


class UnparsableReact(dspy.Module):
    """A ReAct whose final extraction the adapter cannot parse, as a small served model's often is."""

    def forward(self, query: str, plan: Any, retry_context: Any = None) -> dspy.Prediction:
        raise dspy.utils.exceptions.AdapterParseError(
            "JSONAdapter", dspy.Signature("query -> executor_output"), '{"executor_output": {"claims": [{"x": 1}]}}'
        )


def test_react_output_the_adapter_cannot_parse_reaches_the_gatekeeper_verbatim(world_db: Path) -> None:
    executor = Executor("react")
    executor.react = UnparsableReact()
    result = build(world_db, executor=executor, verifier=ScriptedVerifier(ALL_DIRECT))(query=QUERY)
    steps = AuditStore(world_db).steps(result.session_id)
    executor_steps = [step for step in steps if step["agent"] == "executor"]
    assert executor_steps and all(step["status"] == "ok" for step in executor_steps)
    assert result.verdict != "PASS" and '{"claims": [{"x": 1}]}' in executor_steps[0]["model_output"]


class LateExecutor(dspy.Module):
    """Runs past its deadline, then tries to record one more tool call, as a hung model's thread would."""

    def __init__(self, late_by: float) -> None:
        super().__init__()
        self.late_by = late_by
        self.finished = threading.Event()
        self.refusal: BaseException | None = None

    def forward(self, query: str, plan: Any, retry_context: Any = None, toolbox: Any = None) -> dspy.Prediction:
        first = toolbox.call("query_order", order_id="123")
        time.sleep(self.late_by)
        try:
            toolbox.call("query_logs", order_id="123")
        except AgentError as exc:
            self.refusal = exc
        finally:
            self.finished.set()
        return dspy.Prediction(raw_output=v2(claim("claim-1", first)))


def test_a_late_executor_result_is_discarded_and_noted_never_recorded_later(world_db: Path) -> None:
    executor = LateExecutor(late_by=1.5)
    program = build(
        world_db, executor=executor, verifier=ScriptedVerifier(ALL_DIRECT), timeouts={"agent_seconds": 0.5}
    )
    result = program(query=QUERY)
    assert result.verdict != "PASS"  # the executor answered nothing in time
    time.sleep(1.5)  # the second round's executor thread ends too
    store = AuditStore(world_db)
    invocations = store.invocations(result.session_id)
    # Each round's executor timed out; its late query_logs call was refused, and nothing crossed into round 2.
    assert [(inv.tool_name, inv.round) for inv in invocations] == [("query_order", 1), ("query_order", 2)]
    assert isinstance(executor.refusal, AgentError) and "not recorded" in str(executor.refusal)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        steps = store.steps(result.session_id)
        late = [step for step in steps if step["status"] == "discarded"]
        if len(late) == 2:
            break
        time.sleep(0.05)
    assert [(step["agent"], step["round"]) for step in late] == [("executor", 1), ("executor", 2)]
    assert "executor's late result discarded" in late[0]["thought"] and "1 tool call(s) refused" in late[0]["thought"]
    timed_out = [step for step in steps if step["agent"] == "executor" and step["status"] == "error"]
    assert timed_out and "late result is discarded" in timed_out[0]["error"]


def test_a_toolbox_lent_to_a_finished_call_refuses_to_record(world_db: Path) -> None:
    store = AuditStore(world_db)
    session_id = store.start_session("lent toolbox")
    kept: list[Any] = []

    class Keeper(dspy.Module):
        def forward(self, toolbox: Any) -> dspy.Prediction:
            kept.append(toolbox)
            toolbox.call("query_order", order_id="123")
            return dspy.Prediction(done=True)

    call = call_agent(Keeper(), "executor", None, 5, toolbox=Toolbox(store, session_id, round=1))
    assert call.ok and isinstance(kept[0], CallToolbox) and kept[0].closed
    with pytest.raises(AgentError, match="after its call ended"):
        kept[0].call("query_logs", order_id="123")
    with pytest.raises(AgentError):
        kept[0].for_round(2)
    assert [inv.tool_name for inv in store.invocations(session_id)] == ["query_order"]


class LateVerifier(ScriptedVerifier):
    def forward(self, verifier_input: Any) -> dspy.Prediction:
        time.sleep(1.0)
        return super().forward(verifier_input)


def test_a_late_verifier_is_noted_in_its_own_round(world_db: Path) -> None:
    program = build(world_db, verifier=LateVerifier(ALL_DIRECT), timeouts={"agent_seconds": 0.3})
    result = program(query=QUERY)
    assert result.verdict != "PASS"  # no judgement arrived in time: nothing counts as verified
    store = AuditStore(world_db)
    deadline = time.monotonic() + 5
    late: list[dict[str, Any]] = []
    while time.monotonic() < deadline and len(late) < result.rounds:
        late = [step for step in store.steps(result.session_id) if step["status"] == "discarded"]
        time.sleep(0.05)
    assert [(step["agent"], step["round"]) for step in late] == [("verifier", r) for r in range(1, result.rounds + 1)]
    assert "verifier's late result discarded" in late[0]["thought"]


class InterruptingPlanner(ScriptedPlanner):
    """Presses Ctrl-C: the main thread, waiting on this call, gets KeyboardInterrupt as from a terminal."""

    def forward(self, query: str, retry_context: Any = None) -> dspy.Prediction:
        _thread.interrupt_main()
        time.sleep(0.5)
        return super().forward(query, retry_context)


def test_ctrl_c_marks_the_session_interrupted_not_running(world_db: Path) -> None:
    program = build(world_db, planner=InterruptingPlanner(), verifier=ScriptedVerifier(ALL_DIRECT))
    started = {session["session_id"] for session in AuditStore(world_db).sessions(limit=10_000)}
    with pytest.raises(KeyboardInterrupt):
        program(query=QUERY)
    new = [s for s in AuditStore(world_db).sessions(limit=10_000) if s["session_id"] not in started]
    assert len(new) == 1
    record = AuditStore(world_db).session(new[0]["session_id"])
    assert record["status"] == "interrupted" and record["finished_at"] is not None
    assert "KeyboardInterrupt" in record["error"]


def test_sessions_in_parallel_threads_keep_their_own_evidence(world_db: Path) -> None:
    planners = {oid: ScriptedPlanner([{"tool": "query_order", "args": {"order_id": oid}}]) for oid in ("123", "456")}

    def one_claim(results: list[Any], _round: int) -> str:
        return v2(claim("claim-1", results[0]))

    def run(order_id: str, out: dict[str, Any]) -> None:
        program = build(
            world_db, planner=planners[order_id], executor=ScriptedExecutor(one_claim, sleep_s=0.05),
            verifier=ScriptedVerifier({"claim-1": "direct_observation"}), composer=ScriptedComposer(),
        )
        out[order_id] = [program(query=f"订单 {order_id} 的状态？") for _ in range(3)]

    out: dict[str, Any] = {}
    in_threads(lambda order_id: run(order_id, out), list(planners))
    store = AuditStore(world_db)
    for order_id, results in out.items():
        assert len(results) == 3
        for result in results:
            invocations = store.invocations(result.session_id)
            assert [inv.input for inv in invocations] == [{"order_id": order_id}]
            assert order_id in result.answer


LATE_EXIT = """
import sys, time, duckdb, dspy
from evigate.modules.calls import call_agent

class Slow(dspy.Module):
    def forward(self):
        time.sleep(0.3)
        return dspy.Prediction(x=1)

con = duckdb.connect(sys.argv[1])
con.execute("CREATE TABLE notes (t VARCHAR)")

def note(text):
    cursor = con.cursor()
    cursor.execute("SELECT count(*) FROM range(400000000) t(i) WHERE i % 7 = 3").fetchall()  # a slow write
    cursor.execute("INSERT INTO notes VALUES (?)", [text])

assert "timed out" in call_agent(Slow(), "executor", None, 0.05, note_late=note).error
time.sleep(0.5)  # the process ends while the late thread is inside DuckDB, writing its note
"""


def test_a_late_note_being_written_when_the_process_ends_is_not_lost(tmp_path: Path) -> None:
    """Before: DuckDB was interrupted at exit ("INTERRUPT Error") and the note lost; in pytest the process aborted."""
    import subprocess
    import sys

    import duckdb

    script, database = tmp_path / "late_exit.py", tmp_path / "notes.duckdb"
    script.write_text(LATE_EXIT)
    done = subprocess.run([sys.executable, str(script), str(database)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "could not note" not in done.stderr
    with duckdb.connect(str(database), read_only=True) as connection:
        assert connection.execute("SELECT count(*) FROM notes").fetchone() == (1,)
