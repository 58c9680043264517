"""Turn a canonical DSPy request (`dspy.lm15.Request`) into what llama.cpp's chat API takes.

Kept apart from the engine so the translation (roles, system text, response format) is testable without
a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dspy.lm15 import Request, UnsupportedFeatureError

ChatMessage = dict[str, str]


@dataclass(frozen=True)
class JsonFormat:
    """The JSON output a request asks for: `schema` None means any JSON object."""

    schema: dict[str, Any] | None


def response_format_of(request: Request) -> JsonFormat | None:
    """The requested JSON format, or None for free text.

    lm15's Config admits exactly two shapes (checked when the Request is built): `{"type": "json_object"}`
    and `{"type": "json_schema", "schema": {...}, "name"?, "strict"?}` — the latter is what DSPy's
    JSONAdapter sends. llama.cpp's own chat API only knows `json_object` (+ schema), which is why the
    engine builds the grammar itself instead of passing the format through.
    """
    requested = request.config.response_format
    if not requested:
        return None
    schema = requested.get("schema") if requested.get("type") == "json_schema" else None
    return JsonFormat(schema=dict(schema) if isinstance(schema, dict) else None)


def chat_messages(request: Request, *, merge_system_into_user: bool = False) -> list[ChatMessage]:
    """The request as role/content dicts for `Llama.create_chat_completion`.

    `developer` turns become system turns. With `merge_system_into_user` (chat formats with no system
    role, e.g. Gemma) all system text opens the first user turn instead, so it is never dropped.
    """
    if request.tools:
        raise UnsupportedFeatureError("the local engine does not do native tool calling; use a text-based adapter")
    messages: list[ChatMessage] = []
    system = _system_text(request.system)
    if system:
        messages.append({"role": "system", "content": system})
    for message in request.messages:
        role = "system" if message.role == "developer" else message.role
        if role not in ("system", "user", "assistant"):
            raise UnsupportedFeatureError(f"the local engine cannot send {message.role!r} messages")
        text = message.text  # None when any part is not text (image, file, tool call)
        if text is None:
            raise UnsupportedFeatureError("the local engine accepts text parts only")
        messages.append({"role": role, "content": text})
    return _merge_system(messages) if merge_system_into_user else messages


def _system_text(system: Any) -> str:
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    return "".join(getattr(part, "text", "") or "" for part in system)


def _merge_system(messages: list[ChatMessage]) -> list[ChatMessage]:
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system" and m["content"])
    rest = [m for m in messages if m["role"] != "system"]
    if not system:
        return rest
    for index, message in enumerate(rest):
        if message["role"] == "user":
            rest[index] = {"role": "user", "content": f"{system}\n\n{message['content']}"}
            return rest
    return [{"role": "user", "content": system}, *rest]
