"""Tool invocations: whole output kept, preview capped with a marker, round filter, read back as contracts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evigate.errors import AuditValueError, InvocationNotFoundError
from evigate.signatures import ToolInvocation
from evigate.store import TRUNCATION_MARKER, AuditStore, make_preview, split_preview
from tests.store.conftest import query_audit


def test_a_recorded_invocation_comes_back_as_the_gatekeeper_contract(store: AuditStore) -> None:
    session_id = store.start_session("q")
    before = datetime.now(UTC).replace(tzinfo=None)
    recorded = store.record_invocation(
        session_id, 1, "query_logs", {"service": "payment", "关键字": "ERR_TIMEOUT"}, "2024-05-01 ERR_TIMEOUT 超时",
        retrieval_details=[{"layer": "bm25", "relevance": "high"}], latency_ms=12.5,
    )  # fmt: skip
    after = datetime.now(UTC).replace(tzinfo=None)
    assert isinstance(recorded, ToolInvocation)
    assert recorded.id >= 1
    assert recorded.output_preview == "2024-05-01 ERR_TIMEOUT 超时"
    assert recorded.input == {"service": "payment", "关键字": "ERR_TIMEOUT"}
    assert recorded.retrieval_details == [{"layer": "bm25", "relevance": "high"}]
    assert (recorded.success, recorded.error, recorded.is_evidence, recorded.round) == (True, None, True, 1)
    assert store.invocations(session_id) == [recorded]
    [(started_at, latency)] = query_audit(
        store, "SELECT started_at, latency_ms FROM tool_invocation WHERE id = ?", [recorded.id]
    )
    assert latency == 12.5
    # started_at is "now minus latency" at recording time, in UTC
    assert before - timedelta(milliseconds=12.5) <= started_at <= after - timedelta(milliseconds=12.5)


def test_failed_and_non_evidence_calls_keep_their_flags(store: AuditStore) -> None:
    session_id = store.start_session("q")
    failed = store.record_invocation(session_id, 1, "query_order", {"order_id": "123"}, "", success=False,
                                     error="ToolError: timeout")  # fmt: skip
    clock = store.record_invocation(session_id, 1, "get_current_datetime", {}, "2024-05-01T10:00:00",
                                    is_evidence=False, retrieval_details={"tz": "UTC"})  # fmt: skip
    assert [(i.success, i.error, i.is_evidence) for i in store.invocations(session_id)] == [
        (False, "ToolError: timeout", True), (True, None, False),
    ]  # fmt: skip
    assert store.invocations(session_id)[1].retrieval_details == {"tz": "UTC"}
    assert failed.id < clock.id


def test_invocations_are_ordered_by_id_and_filtered_by_round(store: AuditStore) -> None:
    session_id = store.start_session("q")
    other = store.start_session("other")
    rounds = [1, 2, 1, 2, 2]
    ids = [store.record_invocation(session_id, r, "query_logs", {"n": n}, f"out {n}").id for n, r in enumerate(rounds)]
    store.record_invocation(other, 1, "query_logs", {}, "elsewhere")
    assert [i.id for i in store.invocations(session_id)] == ids
    assert [i.id for i in store.invocations(session_id, round=1)] == [ids[0], ids[2]]
    assert [i.id for i in store.invocations(session_id, round=2)] == [ids[1], ids[3], ids[4]]
    assert store.invocations(session_id, round=3) == []
    assert store.invocations("no-such-session") == []


def test_a_huge_output_is_stored_whole_with_a_capped_preview(store: AuditStore) -> None:
    session_id = store.start_session("q")
    output = ("日志行 ERR_TIMEOUT order=123 latency=5300ms\n" * 140_000)[: 5 * 1024 * 1024]
    recorded = store.record_invocation(session_id, 1, "query_logs", {}, output, preview_chars=2000)
    dropped = len(output) - 2000
    assert recorded.output_preview == output[:2000] + TRUNCATION_MARKER.format(count=dropped)
    assert store.invocations(session_id)[0].output_preview == recorded.output_preview
    assert store.invocation_output(recorded.id) == output
    assert split_preview(recorded.output_preview) == (output[:2000], dropped)


def test_a_cut_preview_comes_back_with_the_whole_output_for_the_gatekeeper(store: AuditStore) -> None:
    # On PostgreSQL the invocations() query left the whole output out: excerpts past the preview were never checked.
    session_id = store.start_session("q")
    cut = store.record_invocation(session_id, 1, "query_logs", {}, "a" * 30 + " ERR_TIMEOUT tail", preview_chars=10)
    whole = store.record_invocation(session_id, 1, "query_logs", {}, "short", preview_chars=10)
    by_id = {invocation.id: invocation for invocation in store.invocations(session_id)}
    assert by_id[cut.id].output == "a" * 30 + " ERR_TIMEOUT tail"
    assert by_id[whole.id].output is None  # not cut: the preview is the whole output


@pytest.mark.parametrize("length, truncated", [(0, False), (9, False), (10, False), (11, True)])
def test_the_preview_cap_boundary(store: AuditStore, length: int, truncated: bool) -> None:
    session_id = store.start_session("q")
    output = "x" * length
    preview = store.record_invocation(session_id, 1, "t", {}, output, preview_chars=10).output_preview
    assert (preview != output) is truncated
    assert preview.startswith(output[:10])


def test_invalid_inputs_are_refused_before_anything_is_written(store: AuditStore) -> None:
    session_id = store.start_session("q")
    with pytest.raises(AuditValueError, match="preview_chars"):
        store.record_invocation(session_id, 1, "t", {}, "out", preview_chars=-1)
    with pytest.raises(AuditValueError, match="latency_ms"):
        store.record_invocation(session_id, 1, "t", {}, "out", latency_ms=float("inf"))
    with pytest.raises(AuditValueError, match="must be a dict"):
        store.record_invocation(session_id, 1, "t", ["not", "a", "dict"], "out")  # type: ignore[arg-type]
    with pytest.raises(AuditValueError, match="must be a str"):
        store.record_invocation(session_id, 1, "t", {}, b"bytes")  # type: ignore[arg-type]
    with pytest.raises(AuditValueError, match="retrieval_details"):
        store.record_invocation(session_id, 1, "t", {}, "out", retrieval_details={"score": float("nan")})
    with pytest.raises(AuditValueError):
        store.record_invocation(session_id, 0, "t", {}, "out")
    assert store.invocations(session_id) == []


def test_an_unknown_invocation_id_is_an_invocation_not_found_error(store: AuditStore) -> None:
    with pytest.raises(InvocationNotFoundError, match="4242"):
        store.invocation_output(4242)


@given(output=st.text(max_size=60), preview_chars=st.integers(min_value=0, max_value=70))
def test_preview_keeps_the_prefix_and_accounts_for_every_dropped_char(output: str, preview_chars: int) -> None:
    preview = make_preview(output, preview_chars)
    assert preview[:preview_chars] == output[:preview_chars]
    kept, dropped = split_preview(preview)
    if len(output) > preview_chars:
        assert (kept, dropped) == (output[:preview_chars], len(output) - preview_chars)
    else:
        assert preview == output
