"""Greedy decoding under llguidance (the constrained-decoding library of llama.cpp, vLLM and SGLang), for
`bench/decoding.py` to compare with evigate's own decoder on the same calls.

The loop is the library's documented one: fast-forward the tokens the grammar forces (``compute_ff_tokens``, fed to
llama.cpp in one batch), otherwise compute the token mask, take the arg-max of the allowed logits, consume it. The
schema is the same bounded JSON schema the grammar path decodes under (string and array limits, per-call enums).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from evigate.llm.generation import evaluate_prompt, last_logits


@dataclass
class GuidedGeneration:
    text: str
    completion_tokens: int
    forced_tokens: int
    mask_seconds: float
    finish_reason: str


def tokenizer_for(llama: Any) -> Any:
    """llguidance's tokenizer over the loaded vocabulary (about a second: kept on the `Llama` object)."""
    from llguidance.llamacpp import lltokenizer_from_vocab

    tokenizer = getattr(llama, "_bench_llg_tokenizer", None)
    if tokenizer is None:
        tokenizer = lltokenizer_from_vocab(llama._model.vocab)
        llama._bench_llg_tokenizer = tokenizer
    return tokenizer


def generate_llguidance(llama: Any, prompt: list[int], schema: dict[str, Any], *, max_tokens: int) -> GuidedGeneration:
    """Evaluate `prompt` (reusing the context's state), then decode greedily under `schema` with llguidance."""
    import llguidance
    from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

    tokenizer = tokenizer_for(llama)
    grammar = llguidance.LLMatcher.grammar_from_json_schema(
        # lenient: keywords llguidance does not implement (uniqueItems) are ignored, as llama.cpp's converter does;
        # the bench validates every output against the whole schema either way.
        schema, defaults={"whitespace_flexible": False, "item_separator": ", ", "key_separator": ": ", "lenient": True}
    )
    matcher = llguidance.LLMatcher(tokenizer, grammar)
    if matcher.is_error():
        raise ValueError(f"llguidance refused the schema: {matcher.get_error()}")
    evaluate_prompt(llama, prompt)
    mask = allocate_token_bitmask(1, tokenizer.vocab_size)
    n_vocab = llama.n_vocab()
    written: list[int] = []
    forced = 0
    mask_seconds = 0.0
    finish = "length"
    while len(written) < max_tokens and llama.n_tokens < llama.n_ctx():
        tokens = matcher.compute_ff_tokens()[: max_tokens - len(written)]
        if tokens:
            forced += len(tokens)
        else:
            started = time.perf_counter()
            fill_next_token_bitmask(matcher, mask)
            allowed = np.unpackbits(mask[0].view(np.uint8), bitorder="little")[:n_vocab].astype(bool)
            mask_seconds += time.perf_counter() - started
            token = int(np.argmax(np.where(allowed, last_logits(llama), -np.inf)))
            if token == tokenizer.eos_token or not allowed.any():
                finish = "stop"
                break
            tokens = [token]
        if not matcher.consume_tokens(tokens):
            raise ValueError(f"llguidance refused its own tokens: {matcher.get_error()}")
        written.extend(tokens)
        if matcher.is_stopped():
            finish = "stop"
            break
        llama.eval(tokens)
    text = b"".join(llama.detokenize([token]) for token in written).decode("utf-8", errors="replace")
    return GuidedGeneration(text, len(written), forced, mask_seconds, finish)
