"""Generation through llama-cpp-python's own chat API and sampler chain (sampling settings the fast path lacks).

Used when a call asks for more than plain greedy decoding (temperature, top-k/p, seeds, stop strings) or the model
uses a named chat format instead of the template in its GGUF.
"""

from __future__ import annotations

import time
from typing import Any

from dspy.lm15 import ContextLengthError, TimeoutError


def complete_with_chain(
    loaded: Any,
    messages: list[dict[str, str]],
    options: dict[str, Any],
    *,
    timeout: float | None,
    model_name: str,
    n_ctx: int,
) -> dict[str, Any]:
    """One chat completion, stopped for real after `timeout` s (TimeoutError); too long a prompt: ContextLengthError."""
    try:
        if timeout is None:
            return loaded.llama.create_chat_completion(messages=messages, **options)
        return _until(loaded, messages, options, time.monotonic() + timeout, f"within {timeout} s", model_name)
    except ValueError as exc:
        if "exceed context window" in str(exc):
            raise ContextLengthError(f"{exc} (local model {model_name}, n_ctx={n_ctx})") from exc
        raise


def _until(
    loaded: Any, messages: list[dict[str, str]], options: dict[str, Any], deadline: float, limit: str, model_name: str
) -> dict[str, Any]:
    """Generate token by token and stop for real at the deadline.

    Closing the stream ends llama.cpp's sampling loop. (An exception raised from a logits processor does not:
    llama.cpp calls processors through a ctypes callback, which reports and swallows it.)
    """
    parts: list[str] = []
    generated = 0
    finish_reason = None
    stream = loaded.llama.create_chat_completion(messages=messages, stream=True, **options)
    try:
        for chunk in stream:
            choice = chunk["choices"][0]
            content = (choice.get("delta") or {}).get("content")
            if content:
                parts.append(content)
                generated += 1
            finish_reason = choice.get("finish_reason") or finish_reason
            if time.monotonic() > deadline:
                raise TimeoutError(f"local model {model_name} did not finish {limit}")
    finally:
        stream.close()
    prompt_tokens = max(0, loaded.llama.n_tokens - generated)
    return {
        "choices": [{"message": {"content": "".join(parts)}, "finish_reason": finish_reason or "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": generated},
    }
