"""Sessions: start, finish, read back; unknown ids; values stored verbatim (SQL-looking text, Unicode)."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from evigate.errors import AuditValueError, EvigateError, SessionNotFoundError
from evigate.store import AuditStore

INJECTION = "'; DROP TABLE diagnosis_session; --"
QUERY = "订单 123 支付失败，ERR_TIMEOUT 是什么原因？"


def test_a_started_session_is_running_with_an_empty_self_evaluation(store: AuditStore) -> None:
    session_id = store.start_session(QUERY, settings={"verifier": {"low_confidence_threshold": 0.5}, "模型": "本地"})
    assert re.fullmatch(r"[0-9a-f]{32}", session_id)
    row = store.session(session_id)
    assert row["query"] == QUERY
    assert row["status"] == "running"
    assert isinstance(row["created_at"], datetime)
    assert row["finished_at"] is None
    assert row["settings"] == {"verifier": {"low_confidence_threshold": 0.5}, "模型": "本地"}
    assert row["self_evaluation"] == {}
    assert set(row) == {
        "session_id", "query", "status", "created_at", "finished_at", "output_type", "verdict",
        "groundedness_score", "rounds", "answer", "error", "settings", "self_evaluation", "owner_host", "owner_pid",
        "owner_started", "heartbeat_at",
    }  # fmt: skip


def test_finish_records_the_outcome_and_keeps_self_evaluation(store: AuditStore) -> None:
    session_id = store.start_session("q", session_id="s-1")
    store.merge_self_evaluation(session_id, "rule_evaluation", {"evidence_score": 65})
    store.finish_session(
        session_id, output_type="LOW_CONFID_WITH_DISCLAIMER", verdict="LOW_CONFID", answer="答案", rounds=2,
        groundedness_score=0.42,
    )  # fmt: skip
    row = store.session("s-1")
    assert row["status"] == "finished"
    assert (row["output_type"], row["verdict"], row["answer"], row["rounds"]) == (
        "LOW_CONFID_WITH_DISCLAIMER", "LOW_CONFID", "答案", 2,
    )  # fmt: skip
    assert row["groundedness_score"] == pytest.approx(0.42)
    assert row["finished_at"] >= row["created_at"]
    assert row["self_evaluation"] == {"rule_evaluation": {"evidence_score": 65}}


def test_a_failed_session_keeps_its_error(store: AuditStore) -> None:
    session_id = store.start_session("q")
    store.finish_session(
        session_id, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None,
        error="ModelError: model file missing", status="failed",
    )  # fmt: skip
    row = store.session(session_id)
    assert (row["status"], row["error"], row["verdict"]) == ("failed", "ModelError: model file missing", None)


def test_an_interrupted_session_is_recorded_as_such_and_unknown_statuses_are_refused(store: AuditStore) -> None:
    session_id = store.start_session("q")
    store.finish_session(
        session_id, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None,
        error="KeyboardInterrupt", status="interrupted",
    )  # fmt: skip
    assert store.session(session_id)["status"] == "interrupted"
    for bad in ("running", "done", ""):
        with pytest.raises(AuditValueError, match="finishes as one of"):
            store.finish_session(
                session_id, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None, status=bad
            )
    assert store.session(session_id)["status"] == "interrupted"


def test_sessions_lists_newest_first_without_self_evaluation(store: AuditStore) -> None:
    ids = [store.start_session(f"q{n}") for n in range(5)]
    store.merge_self_evaluation(ids[0], "verifier_evaluation", {"verdict": "PASS"})
    listed = store.sessions(limit=3)
    assert [row["session_id"] for row in listed] == ids[::-1][:3]
    assert all("self_evaluation" not in row for row in listed)
    assert [row["session_id"] for row in store.sessions()] == ids[::-1]
    assert store.sessions(limit=0) == []
    with pytest.raises(AuditValueError):
        store.sessions(limit=-1)


@pytest.mark.parametrize(
    "call",
    [
        lambda store: store.session("missing"),
        lambda store: store.finish_session(
            "missing", output_type=None, verdict=None, answer="", rounds=1, groundedness_score=None
        ),
        lambda store: store.merge_self_evaluation("missing", "rule_evaluation", {}),
        lambda store: store.record_invocation("missing", 1, "query_logs", {}, "out"),
        lambda store: store.record_step("missing", 1, "verifier", thought="t", model_output="o"),
    ],
    ids=["session", "finish", "merge", "invocation", "step"],
)
def test_an_unknown_session_is_a_session_not_found_error(store: AuditStore, call) -> None:
    with pytest.raises(SessionNotFoundError, match="missing"):
        call(store)


def test_a_duplicate_session_id_is_refused_and_the_first_is_kept(store: AuditStore) -> None:
    store.start_session("first", session_id="dup")
    with pytest.raises(AuditValueError, match="already exists"):
        store.start_session("second", session_id="dup")
    assert store.session("dup")["query"] == "first"


@pytest.mark.parametrize("bad_id", ["", "   ", 42])
def test_a_session_id_must_be_a_non_empty_string(store: AuditStore, bad_id) -> None:
    with pytest.raises(AuditValueError):
        store.start_session("q", session_id=bad_id)


@pytest.mark.parametrize("score", [1.5, -0.1, float("nan")])
def test_a_groundedness_score_outside_zero_one_is_refused(store: AuditStore, score: float) -> None:
    session_id = store.start_session("q")
    with pytest.raises(AuditValueError):
        store.finish_session(session_id, output_type=None, verdict=None, answer="", rounds=1, groundedness_score=score)
    assert store.session(session_id)["status"] == "running"


def test_settings_that_are_not_json_are_refused_clearly(store: AuditStore) -> None:
    with pytest.raises(AuditValueError, match="settings must be JSON-serialisable"):
        store.start_session("q", settings={"when": datetime(2024, 1, 1)})
    assert store.sessions() == []


def test_sql_looking_text_is_stored_verbatim_everywhere(store: AuditStore) -> None:
    session_id = store.start_session(INJECTION, session_id=INJECTION, settings={INJECTION: INJECTION})
    store.record_invocation(session_id, 1, INJECTION, {INJECTION: INJECTION}, INJECTION, error=INJECTION)
    store.record_step(session_id, 1, INJECTION, thought=INJECTION, model_output=INJECTION, error=INJECTION)
    store.merge_self_evaluation(session_id, "rule_evaluation", {INJECTION: INJECTION, "q": 'it\'s "quoted"'})
    store.finish_session(
        session_id, output_type=INJECTION, verdict=INJECTION, answer=INJECTION, rounds=1, groundedness_score=None,
        error=INJECTION,
    )  # fmt: skip
    row = store.session(INJECTION)
    assert row["query"] == row["answer"] == row["verdict"] == row["error"] == INJECTION
    assert row["settings"] == {INJECTION: INJECTION}
    assert row["self_evaluation"] == {"rule_evaluation": {INJECTION: INJECTION, "q": 'it\'s "quoted"'}}
    (invocation,) = store.invocations(INJECTION)
    assert (invocation.tool_name, invocation.input, invocation.output_preview) == (
        INJECTION, {INJECTION: INJECTION}, INJECTION,
    )  # fmt: skip
    (step,) = store.steps(INJECTION)
    assert step["agent"] == step["thought"] == step["model_output"] == INJECTION
    assert store.sessions()[0]["session_id"] == INJECTION


def test_errors_belong_to_the_evigate_hierarchy(store: AuditStore) -> None:
    with pytest.raises(EvigateError):
        store.session("nope")


def test_a_database_password_in_the_settings_snapshot_never_reaches_the_audit(store: AuditStore) -> None:
    url = "postgresql://evigate:s3cr%40t-pw@db.internal:5432/audit?sslmode=require&password=other-pw"
    settings = {"database": url, "models": {"api_base": "http://user:tok3n@127.0.0.1:8000/v1"}}
    session_id = store.start_session("q", settings=settings)
    stored = store.session(session_id)["settings"]
    assert stored["database"] == "postgresql://evigate:***@db.internal:5432/audit?sslmode=require&password=***"
    assert stored["models"]["api_base"] == "http://user:***@127.0.0.1:8000/v1"
    assert not any(secret in repr(store.sessions()) for secret in ("s3cr", "other-pw", "tok3n"))
