"""The data source: the demo world builds itself on first use; your own tables need no world."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evigate.demo import demo_registry, demo_toolbox, world_info
from evigate.store import AuditStore
from evigate.tools import DataSource, Tool, Toolbox, ToolOutput


def test_first_call_builds_the_demo_world(tmp_path) -> None:
    with AuditStore(tmp_path / "fresh.duckdb") as store:
        with store.cursor() as cursor:
            assert world_info(cursor) == {}
        toolbox = demo_toolbox(store, store.start_session("q"))
        result = toolbox.call("query_order", order_id=123)
        assert result.success and "status=FAILED error_code=ERR_TIMEOUT" in result.output


class CountTickets(Tool):
    name = "count_tickets"
    description = "Open tickets in the team's own table."

    def run(self, args, world) -> ToolOutput:
        with world.cursor() as cursor:
            (count,) = cursor.execute("SELECT count(*) FROM tickets WHERE state = ?", ["open"]).fetchone()
        return ToolOutput(text=f"{count} open tickets")


def test_own_data_without_the_demo_world(tmp_path) -> None:
    with AuditStore(tmp_path / "own.duckdb") as store:
        with store.cursor() as cursor:
            cursor.execute("CREATE TABLE tickets (id INTEGER, state VARCHAR)")
            cursor.execute("INSERT INTO tickets VALUES (1, 'open'), (2, 'closed'), (3, 'open')")
        registry = demo_registry()
        registry.register(CountTickets)
        source = DataSource(store)
        toolbox = demo_toolbox(store, store.start_session("q"), registry=registry, source=source)
        assert toolbox.call("count_tickets").output == "2 open tickets"
        assert abs(source.now() - datetime.now()) < timedelta(minutes=1)
        missing = toolbox.call("query_order", order_id=1)  # no world tables: a recorded failure, not a crash
        assert not missing.success and "world_orders" in missing.error
        with store.cursor() as cursor:
            assert world_info(cursor) == {}


def test_concurrent_calls_are_all_recorded(store: AuditStore, session_id: str) -> None:
    toolbox = demo_toolbox(store, session_id)
    calls = [("query_order", {"order_id": 123}), ("query_logs", {"order_id": 123}),
             ("query_metrics", {"service": "pay-gateway", "metric": "qps", "start": "14:00", "end": "14:10"}),
             ("lookup_knowledge", {"query": "ERR_TIMEOUT"})] * 4
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda call: toolbox.call(call[0], **call[1]), calls))
    assert all(result.success for result in results)
    ids = [result.invocation_id for result in results]
    assert len(set(ids)) == len(calls)
    assert sorted(ids) == [invocation.id for invocation in toolbox.invocations()]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=6,
)
argument_names = st.sampled_from(["order_id", "service", "metric", "query", "top_k", "limit", "level", "start",
                                  "end", "time_window", "keyword", "trace_id", "error_code", "bogus"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([*demo_registry().names(), "nope"]),
       args=st.dictionaries(argument_names, json_values, max_size=4))
def test_any_call_is_recorded_and_never_raises(toolbox: Toolbox, name: str, args: dict) -> None:
    result = toolbox.call(name, **args)
    last = toolbox.invocations()[-1]
    assert last.id == result.invocation_id and last.success == result.success
    assert result.success == (result.error is None)
    assert result.output
