"""Every call is recorded, failures included, and no failure escapes as an exception."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from pydantic import Field

from evigate.demo import demo_registry, demo_toolbox
from evigate.tools import Tool, ToolArgs, Toolbox, ToolOutput


class Boom(Tool):
    name = "boom"
    description = "Always raises, to test failure recording."

    def run(self, args, world):
        raise RuntimeError("disk on fire")


class WrongReturn(Tool):
    name = "wrong_return"
    description = "Returns a str instead of ToolOutput."

    def run(self, args, world):
        return "plain text"


class EchoArgs(ToolArgs):
    text: str = Field(max_length=100_000)


class Echo(Tool):
    name = "echo"
    description = "Returns its input."
    Args = EchoArgs

    def run(self, args, world):
        return ToolOutput(text=args.text, retrieval_details={"length": len(args.text)})


def test_success_is_recorded_with_its_output(toolbox: Toolbox, store) -> None:
    result = toolbox.call("query_order", order_id=123)
    assert result.success and result.error is None
    [recorded] = store.invocations(toolbox.session_id)
    assert recorded.id == result.invocation_id
    assert (recorded.tool_name, recorded.input, recorded.round, recorded.success) == (
        "query_order", {"order_id": 123}, 1, True)
    assert recorded.output_preview == result.output
    assert recorded.retrieval_details == result.retrieval_details
    assert recorded.is_evidence


@pytest.mark.parametrize(
    ("name", "args", "error_part"),
    [
        ("no_such_tool", {"x": 1}, "unknown tool 'no_such_tool'"),
        ("query_logs", {"limit": 5000}, "limit: Input should be less than or equal to 200"),
        ("query_logs", {"servcie": "pay-gateway"}, "servcie: Extra inputs are not permitted"),
        ("query_order", {"order_id": "abc"}, "order_id: Input should be a valid integer"),
        ("query_order", {}, "order_id: Field required"),
        ("query_metrics", {"service": "pay-gateway", "metric": "qps", "start": "yesterday"}, "unrecognised time"),
        ("query_metrics", {"service": "pay-gateway", "metric": "qps", "start": "14:30", "end": "2026-11-28 14:00"},
         "is before start"),
        ("query_logs", {"start": "2026-11-28 15:00", "end": "2026-11-28 14:00"}, "is before start"),
        ("lookup_knowledge", {"query": ""}, "query: String should have at least 1 character"),
    ],
)
def test_failures_are_recorded_not_raised(toolbox: Toolbox, store, name, args, error_part) -> None:
    result = toolbox.call(name, **args)
    [recorded] = store.invocations(toolbox.session_id)
    assert recorded.id == result.invocation_id
    assert recorded.success == result.success
    assert not result.success and error_part in result.error
    assert recorded.error == result.error and result.error in recorded.output_preview
    assert recorded.input == args and recorded.tool_name == name


def test_exceptions_inside_tools_and_bad_returns_are_recorded(store, session_id) -> None:
    registry = demo_registry()
    registry.register(Boom)
    registry.register(WrongReturn())
    toolbox = demo_toolbox(store, session_id, registry=registry)
    boom = toolbox.call("boom")
    wrong = toolbox.call("wrong_return")
    assert not boom.success and "RuntimeError: disk on fire" in boom.error
    assert not wrong.success and "expected ToolOutput" in wrong.error
    assert [invocation.success for invocation in toolbox.invocations()] == [False, False]


def test_empty_results_are_successful_no_rows(toolbox: Toolbox) -> None:
    for name, args in [("query_order", {"order_id": 99_999_999}), ("query_logs", {"order_id": 99_999_999}),
                       ("query_metrics", {"service": "nonexistent-service", "metric": "qps"}),
                       ("lookup_knowledge", {"query": "xyzzy plugh"})]:
        result = toolbox.call(name, **args)
        assert result.success and "no rows" in result.output, (name, result.output)


def test_rounds_and_auxiliary_flag(toolbox: Toolbox) -> None:
    first = toolbox.call("get_current_datetime")
    second = toolbox.for_round(2).call("query_order", order_id=123)
    records = {record.id: record for record in toolbox.invocations()}
    assert records[first.invocation_id].round == 1 and not records[first.invocation_id].is_evidence
    assert records[second.invocation_id].round == 2 and records[second.invocation_id].is_evidence
    assert [record.id for record in toolbox.invocations(round=2)] == [second.invocation_id]


def test_outputs_are_capped_and_previews_shorter(store, session_id) -> None:
    registry = demo_registry()
    registry.register(Echo)
    toolbox = demo_toolbox(store, session_id, registry=registry, max_output_chars=5_000, preview_chars=300)
    result = toolbox.call("echo", text="x" * 12_000)
    assert result.success and len(result.output) < 5_100 and "[truncated 7000 chars]" in result.output
    [recorded] = toolbox.invocations()
    assert len(recorded.output_preview) < 400
    assert store.invocation_output(result.invocation_id) == result.output


def test_arguments_are_recorded_json_safe(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", start=datetime(2026, 11, 28, 14, 0), end="2026-11-28 14:01", limit=3)
    assert result.success
    [recorded] = toolbox.invocations()
    assert recorded.input == {"start": "2026-11-28 14:00:00", "end": "2026-11-28 14:01", "limit": 3}


LONE = "\ud800"


@pytest.mark.parametrize(
    "args",
    [{"keyword": f"ERR{LONE}TIMEOUT"}, {"service": "pay\udcff"}, {f"key{LONE}": "x"}, {"keyword": ["a", f"b{LONE}"]}],
)
def test_unencodable_argument_text_is_a_failed_invocation_recorded_cleaned(toolbox: Toolbox, args: dict) -> None:
    result = toolbox.call("query_logs", **args)
    assert not result.success and "not valid Unicode" in result.error
    [recorded] = toolbox.invocations()
    assert (recorded.id, recorded.success) == (result.invocation_id, False)
    stored = json.dumps(recorded.input, ensure_ascii=False)
    stored.encode("utf-8")  # storable text only
    assert "\ufffd" in stored


class Garbled(Tool):
    name = "garbled"
    description = "Returns text with a lone surrogate and a NUL, as a custom tool decoding bytes badly might."

    def run(self, args, world):
        return ToolOutput(text=f"row 1: caf{LONE}\x00 ok", retrieval_details={f"k{LONE}": "v\x00"})


def test_unencodable_tool_output_is_recorded_cleaned_and_returned_as_recorded(store, session_id) -> None:
    registry = demo_registry()
    registry.register(Garbled)
    toolbox = Toolbox(store, session_id, registry=registry)
    result = toolbox.call("garbled")
    assert result.success and result.output == "row 1: caf\ufffd\ufffd ok"
    assert result.retrieval_details == {"k\ufffd": "v\ufffd"}
    assert store.invocation_output(result.invocation_id) == result.output


def test_a_store_that_cannot_record_gives_a_failed_result_and_keeps_the_error(tmp_path) -> None:
    from evigate.demo import ensure_world
    from evigate.errors import StoreError
    from evigate.store import AuditStore

    with AuditStore(tmp_path / "broken.duckdb") as broken:
        ensure_world(broken)
        session = broken.start_session("q")
        toolbox = Toolbox(broken, session, registry=demo_registry())
        with broken.cursor() as cursor:
            cursor.execute("DROP TABLE tool_invocation")  # the audit table is gone: nothing can be recorded
        result = toolbox.for_round(2).call("query_order", order_id=123)
    assert not result.success and result.invocation_id is None
    assert "could not record" in result.error and "tool_invocation" in result.error
    [failure] = toolbox.store_failures
    assert isinstance(failure, StoreError)


def test_a_nul_in_an_argument_is_valid_text_the_tool_runs_and_the_audit_shows_it_replaced(toolbox: Toolbox) -> None:
    result = toolbox.call("query_logs", keyword="ERR_TIMEOUT\x00", limit=1)
    assert result.success
    [recorded] = toolbox.invocations()
    assert recorded.input == {"keyword": "ERR_TIMEOUT\ufffd", "limit": 1}
