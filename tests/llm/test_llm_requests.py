"""Translation of canonical DSPy requests into llama.cpp chat messages and response formats."""

from __future__ import annotations

import pytest
from dspy.lm15 import Config, FunctionTool, Message, Request, UnsupportedFeatureError

from evigate.llm.requests import JsonFormat, chat_messages, response_format_of

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def _request(**config: object) -> Request:
    return Request(
        model="local/x",
        system="You are terse.",
        messages=(
            Message.user("q1"),
            Message.assistant("a1"),
            Message(role="developer", parts=Message.user("rule").parts),
            Message.user("q2"),
        ),
        config=Config(**config),
    )


def test_roles_are_kept_and_developer_becomes_system() -> None:
    assert chat_messages(_request()) == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "q1"},
        {"role": "assistant", "content": "a1"},
        {"role": "system", "content": "rule"},
        {"role": "user", "content": "q2"},
    ]


def test_system_text_opens_the_first_user_turn_for_formats_without_system_role() -> None:
    assert chat_messages(_request(), merge_system_into_user=True) == [
        {"role": "user", "content": "You are terse.\n\nrule\n\nq1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "q2"},
    ]


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        (None, None),
        ({"type": "json_object"}, JsonFormat(schema=None)),
        ({"type": "json_schema", "schema": SCHEMA, "name": "Out", "strict": True}, JsonFormat(schema=SCHEMA)),
    ],
)
def test_both_canonical_json_formats_are_understood(response_format: dict | None, expected: JsonFormat | None) -> None:
    assert response_format_of(_request(response_format=response_format)) == expected


def test_unsupported_requests_are_refused_clearly() -> None:
    tool = FunctionTool(name="lookup", description="d", parameters={"type": "object", "properties": {}})
    with_tools = Request(model="local/x", messages=(Message.user("q"),), tools=(tool,))
    with pytest.raises(UnsupportedFeatureError, match="tool"):
        chat_messages(with_tools)
