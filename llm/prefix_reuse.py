"""The llama.cpp side of prompt-state reuse: saving and restoring sequence states, pinning the fixed opening of
a chat, and wrapping `Llama.create_completion` so every chat handler goes through a `PrefixCache`.

See `evigate.llm.prefix_cache` for why and what is kept.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from evigate.llm.prefix_cache import MIN_PREFIX_TOKENS, PrefixCache, common_prefix

_SEQ = 0


def save_sequence(llama: Any) -> bytes:
    """The KV state of sequence 0 (the tokens evaluated so far)."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llama._ctx.ctx, _SEQ)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llama._ctx.ctx, buffer, size, _SEQ)
    return bytes(buffer[:written])


def restore_sequence(llama: Any, tokens: np.ndarray, data: bytes, keep: int) -> bool:
    """Load a saved sequence and keep its first `keep` tokens; False (context cleared) when it does not load."""
    import llama_cpp

    llama._ctx.kv_cache_clear()
    buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
    if llama_cpp.llama_state_seq_set_data(llama._ctx.ctx, buffer, len(data), _SEQ) != len(data):
        llama._ctx.kv_cache_clear()
        llama.n_tokens = 0
        return False
    llama.input_ids[: len(tokens)] = tokens
    llama.n_tokens = keep
    llama._ctx.kv_cache_seq_rm(-1, keep, -1)
    llama._requires_eval = True
    return True


def stable_end(messages: Sequence[dict[str, str]]) -> str | None:
    """The text that ends what every call of one agent shares: all turns before the final user turn (the system
    prompt, and the few-shot demos of an optimized program), so the persisted state covers demos too."""
    if len(messages) < 2 or messages[-1].get("role") != "user":
        return None
    return messages[-2].get("content") or None


def pin_boundary(llama: Any, tokens: Sequence[int], text: str | None) -> int:
    """How many leading tokens of `tokens` end at (or just before) the end of `text` in the rendered prompt."""
    if not text:
        return 0
    pieces = [llama.detokenize([token], special=True) for token in tokens]
    rendered = b"".join(pieces)
    target = text.encode("utf-8")
    start = rendered.find(target)
    if start < 0:
        return 0
    end = start + len(target)
    total = 0
    for count, piece in enumerate(pieces):
        if total + len(piece) > end:
            return count
        total += len(piece)
    return len(pieces)


def install(llama: Any, cache: PrefixCache) -> None:
    """Route the instance's `create_completion` through `cache` (see the module docstring)."""
    original = llama.create_completion

    def create_completion(prompt: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(prompt, list | tuple) and prompt:
            prime(llama, cache, list(prompt))
        result = original(prompt, *args, **kwargs)
        if kwargs.get("stream"):
            return _remember_after(llama, cache, result)
        remember(llama, cache)
        return result

    llama.create_completion = create_completion


def prime(llama: Any, cache: PrefixCache, tokens: list[int]) -> None:
    """Before evaluating `tokens`: restore the best stored state, and store the pinned system prompt if new."""
    in_context = common_prefix(llama.input_ids[: llama.n_tokens], tokens)
    match = cache.best(tokens)
    if match is not None and match.length > in_context:
        data = match.load()
        if data is not None and restore_sequence(llama, match.tokens, data, match.length):
            in_context = match.length
            cache.stats["restored_tokens"] += match.length
            cache.stats["disk_hits" if match.path is not None else "ram_hits"] += 1
        else:
            cache.forget(match)
            in_context = 0
    pinned = pin_boundary(llama, tokens, cache.pin) if cache.disk_dir is not None else 0
    # Leave at least one prompt token for generate() to evaluate, so fresh logits exist before sampling.
    pinned = min(pinned, len(tokens) - 1)
    if pinned >= MIN_PREFIX_TOKENS and not cache.on_disk(tokens[:pinned]):
        keep = min(in_context, pinned)
        llama.n_tokens = keep
        llama.eval(tokens[keep:pinned])
        cache.persist(tokens[:pinned], save_sequence(llama))


def remember(llama: Any, cache: PrefixCache) -> None:
    """After a call: keep the context's state in RAM for the next call that shares its prefix."""
    if cache.capacity_bytes > 0 and llama.n_tokens >= MIN_PREFIX_TOKENS:
        cache.remember(llama.input_ids[: llama.n_tokens], save_sequence(llama))


def _remember_after(llama: Any, cache: PrefixCache, chunks: Iterator[Any]) -> Iterator[Any]:
    try:
        yield from chunks
    finally:
        remember(llama, cache)
