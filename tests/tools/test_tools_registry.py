"""The registry: built-ins, specs for prompts, and users' own tools."""

from __future__ import annotations

import pytest
from pydantic import Field

from evigate.demo import demo_registry, demo_toolbox
from evigate.errors import ToolError
from evigate.tools import Tool, ToolArgs, ToolOutput, ToolRegistry


class RefundArgs(ToolArgs):
    user_id: int = Field(ge=0, description="user id")


class QueryRefunds(Tool):
    name = "query_refunds"
    description = "Refunded orders of one user: count and total amount."
    Args = RefundArgs

    def run(self, args: RefundArgs, world) -> ToolOutput:
        with world.cursor() as cursor:
            count, total = cursor.execute(
                "SELECT count(*), coalesce(sum(amount), 0) FROM world_orders WHERE user_id = ? AND status = 'REFUNDED'",
                [args.user_id]).fetchone()
        return ToolOutput(text=f"user {args.user_id}: {count} refunds, total {total} CNY",
                          retrieval_details={"count": count})


def test_demo_registry_holds_the_five_builtins() -> None:
    registry = demo_registry()
    assert registry.names() == ["lookup_knowledge", "query_logs", "query_metrics", "query_order",
                                "get_current_datetime"]
    specs = {spec["name"]: spec for spec in registry.specs()}
    assert specs["query_logs"]["parameters"]["properties"]["order_id"]
    assert specs["query_metrics"]["parameters"]["required"] == ["service", "metric"]
    assert specs["get_current_datetime"]["is_evidence"] is False
    assert all(spec["description"] for spec in specs.values())
    assert demo_registry() is not registry


def test_custom_tool_runs_recorded_through_the_toolbox(store, session_id) -> None:
    with store.cursor() as cursor:
        user = cursor.execute("SELECT user_id FROM world_orders WHERE status = 'REFUNDED' LIMIT 1").fetchone()[0]
    registry = demo_registry()
    registry.register(QueryRefunds())
    toolbox = demo_toolbox(store, session_id, registry=registry)
    result = toolbox.call("query_refunds", user_id=user)
    assert result.success and f"user {user}:" in result.output and result.retrieval_details["count"] >= 1
    bad = toolbox.call("query_refunds", user_id=-1)
    assert not bad.success and "greater than or equal to 0" in bad.error
    assert [i.tool_name for i in toolbox.invocations()] == ["query_refunds", "query_refunds"]


def test_register_as_decorator_and_replace() -> None:
    registry = ToolRegistry()

    @registry.register
    class Hello(Tool):
        name = "hello"
        description = "Says hello."

        def run(self, args, world):
            return ToolOutput(text="hello")

    assert registry.names() == ["hello"] and isinstance(registry.get("hello"), Hello)
    with pytest.raises(ToolError, match="already registered"):
        registry.register(Hello)
    registry.register(Hello(), replace=True)
    assert len(registry) == 1 and "hello" in registry
    assert registry.copy().names() == ["hello"]


@pytest.mark.parametrize(
    ("attributes", "message"),
    [
        ({"name": "Bad Name", "description": "d"}, "tool name must match"),
        ({"name": "no_description", "description": " "}, "needs a description"),
        ({"name": "bad_args", "description": "d", "Args": dict}, "Args must be a pydantic model"),
    ],
)
def test_malformed_tools_are_rejected(attributes, message) -> None:
    tool_class = type("T", (Tool,), {**attributes, "run": lambda self, args, world: ToolOutput(text="")})
    with pytest.raises(ToolError, match=message):
        ToolRegistry().register(tool_class)


def test_unknown_names_and_non_tools() -> None:
    registry = demo_registry()
    with pytest.raises(ToolError, match="available tools: lookup_knowledge"):
        registry.get("nope")
    with pytest.raises(ToolError, match="not an evigate Tool"):
        registry.register(object())  # type: ignore[arg-type]
