"""The fast greedy path's own checks that need no model (its decoding is tested on the real model)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from dspy.lm15 import ContextLengthError

from evigate.llm.greedy import complete_greedy, is_plain_greedy


def test_only_plain_greedy_requests_take_the_fast_path() -> None:
    assert is_plain_greedy({"temperature": 0.0, "max_tokens": 5, "stop": []})
    assert not is_plain_greedy({"temperature": 0.7, "max_tokens": 5, "stop": []})
    assert not is_plain_greedy({"temperature": 0.0, "max_tokens": 5, "stop": ["\n"]})
    assert not is_plain_greedy({"temperature": 0.0, "max_tokens": 5, "stop": [], "seed": 1})


def test_a_prompt_longer_than_the_context_is_a_context_length_error() -> None:
    llama = SimpleNamespace(n_ctx=lambda: 16)
    loaded = SimpleNamespace(llama=llama, prefix_cache=None, accepts_grammar=lambda gbnf: True)
    with pytest.raises(ContextLengthError, match="n_ctx=16"):
        complete_greedy(loaded, list(range(16)), None, 10, None, "tiny")
