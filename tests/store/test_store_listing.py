"""Listing sessions (issue 20): filters, pages, newest first — the same results on DuckDB and PostgreSQL 15."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.errors import AuditValueError
from evigate.store import AuditStore, SessionQuery

OUTCOMES = [  # (session id, query, verdict, output type, answer)
    ("s1", "订单 123 支付失败，ERR_TIMEOUT 是什么原因？", "PASS", "NORMAL", "已确认：错误码 ERR_TIMEOUT。"),
    ("s2", "Why is checkout slow?", "LOW_CONFID", "LOW_CONFID_WITH_DISCLAIMER", "pay-gateway latency rose"),
    ("s3", "库存服务为什么报错？", "REJECT", "DEGRADED", "证据不足"),
    ("s4", "'; DROP TABLE diagnosis_session; -- 100% _x_", "PASS", "NORMAL", "50% of calls"),
]
BASE = datetime(2026, 1, 1, 12, 0, 0)


def _set_created(store: AuditStore, session_id: str, created: datetime) -> None:
    """created_at one minute apart, known to the test (start_session stamps "now")."""
    statement = "UPDATE diagnosis_session SET created_at = ? WHERE session_id = ?"
    if store.backend == "duckdb":
        with store.cursor() as cursor:
            cursor.execute(statement, [created, session_id])
    else:
        with store._backend._connection() as connection:
            connection.execute(statement.replace("?", "%s"), [created, session_id])


def _fill(store: AuditStore) -> None:
    for minute, (session_id, query, verdict, output_type, answer) in enumerate(OUTCOMES):
        store.start_session(query, session_id=session_id)
        store.finish_session(session_id, output_type=output_type, verdict=verdict, answer=answer, rounds=1,
                             groundedness_score=0.5)
        _set_created(store, session_id, BASE + timedelta(minutes=minute))
    store.start_session("still running", session_id="s5")
    _set_created(store, "s5", BASE + timedelta(minutes=10))


def _ids(store: AuditStore, **filters: object) -> list[str]:
    return [row["session_id"] for row in store.find_sessions(SessionQuery(**filters))["sessions"]]


def test_sessions_are_listed_newest_first_with_their_total(store: AuditStore) -> None:
    _fill(store)
    page = store.find_sessions()
    assert [row["session_id"] for row in page["sessions"]] == ["s5", "s4", "s3", "s2", "s1"]
    assert page["total"] == 5 and page["limit"] == 20 and page["offset"] == 0
    assert set(page["sessions"][0]) == {"session_id", "query", "status", "created_at", "finished_at", "output_type",
                                        "verdict", "groundedness_score", "rounds", "error"}


def test_each_filter_selects_what_it_names(store: AuditStore) -> None:
    _fill(store)
    assert _ids(store, verdict="PASS") == ["s4", "s1"]
    assert _ids(store, output_type="DEGRADED") == ["s3"]
    assert _ids(store, status="running") == ["s5"]
    assert _ids(store, since=BASE + timedelta(minutes=1), until=BASE + timedelta(minutes=3)) == ["s3", "s2"]
    assert _ids(store, text="err_timeout") == ["s1"]  # case-insensitive, in the question or the answer
    assert _ids(store, text="LATENCY") == ["s2"]
    assert _ids(store, text="库存") == ["s3"]
    assert _ids(store, text="s3") == ["s3"]  # the session id
    assert _ids(store, text="100% _x_") == ["s4"]  # LIKE wildcards are plain text
    assert _ids(store, text="'; DROP TABLE") == ["s4"]  # and SQL is a value
    assert _ids(store, verdict="PASS", text="ERR") == ["s1"]
    assert _ids(store, text="   ") == ["s5", "s4", "s3", "s2", "s1"]  # a blank text filters nothing


def test_an_aware_time_is_compared_in_utc(store: AuditStore) -> None:
    _fill(store)
    in_beijing = (BASE + timedelta(minutes=3)).replace(tzinfo=UTC).astimezone(timezone(timedelta(hours=8)))
    assert _ids(store, since=in_beijing.isoformat()) == ["s5", "s4"]


def test_pages_cover_every_session_once(store: AuditStore) -> None:
    _fill(store)
    seen = []
    for offset in range(0, 5, 2):
        page = store.find_sessions(SessionQuery(limit=2, offset=offset))
        assert page["total"] == 5
        seen += [row["session_id"] for row in page["sessions"]]
    assert seen == ["s5", "s4", "s3", "s2", "s1"]
    assert store.find_sessions(SessionQuery(offset=50))["sessions"] == []


@pytest.mark.parametrize("filters", [
    {"verdict": "pass"}, {"output_type": "OK"}, {"status": "done"}, {"limit": 0}, {"limit": 201}, {"offset": -1},
    {"since": "yesterday"}, {"text": "x" * 201}, {"limit": True},
])
def test_an_invalid_filter_is_a_clear_error(filters: dict[str, object]) -> None:
    with pytest.raises(AuditValueError):
        SessionQuery(**filters)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=30))
def test_any_text_filter_is_a_value_never_sql(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    path = tmp_path_factory.mktemp("listing") / "audit.duckdb"
    with AuditStore(path) as store:
        store.start_session(f"before {text} after", session_id="only")
        page = store.find_sessions(SessionQuery(text=text))
    if text.strip() and "\x00" not in text:
        assert [row["session_id"] for row in page["sessions"]] == ["only"]
