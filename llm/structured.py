"""The llama.cpp side of schema-directed decoding (see `schema_decoder`): a loaded model as a `DecodingModel`."""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from dspy.lm15 import ContextLengthError, TimeoutError

from evigate.llm.generation import Generation, evaluate_prompt, last_logits
from evigate.llm.schema_decoder import decode
from evigate.llm.schema_plan import Node
from evigate.llm.token_table import TokenTable

_tables_lock = threading.Lock()


def token_table(llama: Any) -> TokenTable:
    """The token table of `llama`'s vocabulary, built once and kept on the `Llama` object (0.45 s for Qwen's 151,936
    tokens, measured here)."""
    import llama_cpp

    with _tables_lock:
        table = getattr(llama, "_evigate_token_table", None)
        if table is None:
            vocab, buffer = llama._model.vocab, ctypes.create_string_buffer(256)
            pieces = []
            for token in range(llama.n_vocab()):
                length = llama_cpp.llama_token_to_piece(vocab, token, buffer, len(buffer), 0, False)
                if length < 0:  # a piece longer than the buffer: llama.cpp reports the size it needs
                    longer = ctypes.create_string_buffer(-length)
                    length = llama_cpp.llama_token_to_piece(vocab, token, longer, len(longer), 0, False)
                    pieces.append(longer.raw[:length] if length > 0 else b"")
                    continue
                pieces.append(buffer.raw[:length] if length > 0 else b"")
            table = TokenTable(pieces)
            llama._evigate_token_table = table
        return table


class LlamaDecodingModel:
    """A `Llama` positioned after a prompt, as `schema_decoder` drives it; enforces the deadline and the window."""

    def __init__(self, llama: Any, deadline: float | None, model_name: str) -> None:
        self.llama, self.deadline, self.model_name = llama, deadline, model_name
        self.table = token_table(llama)

    def tokenize(self, text: bytes) -> list[int]:
        return list(self.llama.tokenize(text, add_bos=False, special=False))

    def feed(self, tokens: Sequence[int]) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise TimeoutError(f"local model {self.model_name} did not finish before its deadline")
        if self.llama.n_tokens + len(tokens) > self.llama.n_ctx():
            raise ContextLengthError(
                f"the answer outgrew the context window (local model {self.model_name}, n_ctx={self.llama.n_ctx()})"
            )
        self.llama.eval(list(tokens))

    def logits(self) -> np.ndarray:
        return last_logits(self.llama)


def generate_structured(
    llama: Any, prompt: list[int], plan: Node, *, max_tokens: int, deadline: float | None, model_name: str
) -> Generation:
    """Evaluate `prompt` (reusing what the context holds), then write the JSON value `plan` describes."""
    evaluate_prompt(llama, prompt)
    decoded = decode(plan, LlamaDecodingModel(llama, deadline, model_name), max_tokens)
    return Generation(
        text=decoded.text,
        prompt_tokens=len(prompt),
        completion_tokens=decoded.tokens,
        finish_reason="length" if decoded.truncated else "stop",
    )
