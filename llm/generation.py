"""What both local decoders share: one generation's result, prompt evaluation with state reuse, the last logits.

`greedy` (a grammar checks the chosen token) and `structured` (code writes the schema's fixed text) both decode
from here, so neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from evigate.llm.prefix_cache import common_prefix


@dataclass
class Generation:
    """What one greedy generation produced."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" | "length"


def evaluate_prompt(llama: Any, prompt: list[int]) -> None:
    """Evaluate `prompt`, reusing the tokens the context already holds, and always at least the last one: the
    decoders read their first choice from fresh logits."""
    reused = common_prefix(llama.input_ids[: llama.n_tokens], prompt)
    llama.n_tokens = min(reused, len(prompt) - 1)
    llama.eval(prompt[llama.n_tokens :])


def last_logits(llama: Any) -> np.ndarray:
    """The next-token logits after the last evaluated token (a view into llama.cpp's buffer, valid until the next
    evaluation)."""
    import llama_cpp

    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(llama.n_vocab(),))
