"""Raw control characters inside JSON strings are escaped; everything else is left exactly as it was."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.llm.json_text import escape_control_chars_in_strings, repair_json_text

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(_json_values, st.sampled_from([None, 2]), st.booleans())
def test_valid_json_is_never_changed(value: object, indent: int | None, ascii_only: bool) -> None:
    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    assert escape_control_chars_in_strings(text) == text
    assert repair_json_text(text) == text


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.text(max_size=30), min_size=1, max_size=4))
def test_raw_control_chars_inside_strings_are_escaped_losslessly(value: dict[str, str]) -> None:
    # What llama.cpp emits outside a grammar: the JSON string contents written raw, quotes escaped.
    raw = "{" + ", ".join(f'"{_raw(k)}": "{_raw(v)}"' for k, v in value.items()) + "}"
    assert json.loads(escape_control_chars_in_strings(raw)) == value
    assert json.loads(repair_json_text(raw)) == value


def _raw(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def test_newlines_between_tokens_are_kept_and_inner_ones_escaped() -> None:
    raw = '{\n  "claim_text": "第一行\n第二行\tend",\n  "n": 1\n}'
    repaired = repair_json_text(raw)
    assert repaired == '{\n  "claim_text": "第一行\\n第二行\\tend",\n  "n": 1\n}'
    assert json.loads(repaired)["claim_text"] == "第一行\n第二行\tend"


def test_backslash_before_a_raw_newline_yields_one_escape() -> None:
    assert json.loads(escape_control_chars_in_strings('{"a": "x\\\ny"}')) == {"a": "x\ny"}


def test_free_text_and_unrepairable_json_are_returned_untouched() -> None:
    chat = '[[ ## answer ## ]]\nHe said "line one\nline two"\n\n[[ ## completed ## ]]'
    assert repair_json_text(chat) == chat
    broken = '{"a": "x\ny", "b": '
    assert repair_json_text(broken) == broken
