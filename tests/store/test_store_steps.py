"""Agent steps: concise thought, whole model output snapshot, ordered by id."""

from __future__ import annotations

import pytest

from evigate.errors import AuditValueError
from evigate.store import THOUGHT_CHARS, AuditStore


def test_steps_are_recorded_in_order_with_every_column(store: AuditStore) -> None:
    session_id = store.start_session("q")
    first = store.record_step(session_id, 1, "planner", thought="计划: 查日志", model_output='{"plan": []}',
                              prompt_tokens=120, completion_tokens=30, latency_ms=850.0)  # fmt: skip
    second = store.record_step(session_id, 1, "verifier", thought="LOW_CONFID: 1 unsupported claim",
                               model_output="{...}", status="error", error="AgentError: bad JSON")  # fmt: skip
    assert first < second
    steps = store.steps(session_id)
    assert [step["id"] for step in steps] == [first, second]
    assert steps[0]["agent"] == "planner"
    assert (steps[0]["prompt_tokens"], steps[0]["completion_tokens"], steps[0]["latency_ms"]) == (120, 30, 850.0)
    assert (steps[1]["status"], steps[1]["error"]) == ("error", "AgentError: bad JSON")
    assert steps[0]["created_at"] <= steps[1]["created_at"]
    assert store.steps("other") == []


def test_a_long_thought_is_capped_but_the_model_output_is_kept_whole(store: AuditStore) -> None:
    session_id = store.start_session("q")
    thought = "判" * (THOUGHT_CHARS + 500)
    model_output = "输出" * 100_000
    store.record_step(session_id, 1, "verifier", thought=thought, model_output=model_output)
    (step,) = store.steps(session_id)
    assert step["thought"].startswith(thought[:THOUGHT_CHARS])
    assert step["thought"].endswith("…[truncated 500 chars]")
    assert step["model_output"] == model_output


@pytest.mark.parametrize("kwargs", [{"prompt_tokens": -1}, {"latency_ms": -5.0}, {"round": 0}])
def test_negative_counts_and_round_zero_are_refused(store: AuditStore, kwargs: dict) -> None:
    session_id = store.start_session("q")
    kwargs = dict(kwargs)  # the parameter dict is shared by both backends' runs
    round_ = kwargs.pop("round", 1)
    with pytest.raises(AuditValueError):
        store.record_step(session_id, round_, "executor", thought="t", model_output="o", **kwargs)
    assert store.steps(session_id) == []
