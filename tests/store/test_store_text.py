"""Text at the store boundary: what no backend can hold is stored as U+FFFD, everything else verbatim."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.store import AuditStore
from evigate.store.codec import REPLACEMENT_CHARACTER, clean_text

# Every code point, surrogates and NUL included (what argv's surrogateescape or model JSON can hand us).
_ANY_TEXT = st.text(st.characters(codec=None, min_codepoint=0, max_codepoint=0x10FFFF), max_size=40)


@given(_ANY_TEXT)
def test_cleaned_text_is_storable_and_changes_only_what_cannot_be_stored(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")  # strict: no lone surrogate is left
    assert "\x00" not in cleaned
    assert clean_text(cleaned) == cleaned
    storable = all(char != "\x00" and not 0xD800 <= ord(char) <= 0xDFFF for char in text)
    assert (cleaned == text) == storable
    assert len(cleaned) <= len(text)
    # every storable character is kept, in order (cleaned text only adds U+FFFD and joined surrogate pairs)
    remaining = iter(cleaned)
    assert all(char in remaining for char in text if char != "\x00" and not 0xD800 <= ord(char) <= 0xDFFF)
    assert set(cleaned) - set(text) <= {REPLACEMENT_CHARACTER} | {char for char in cleaned if ord(char) > 0xFFFF}


def test_a_split_surrogate_pair_is_joined_back_into_its_character() -> None:
    assert clean_text("\ud83d\ude00 ok") == "😀 ok"
    assert clean_text("\ude00\ud83d") == "\ufffd\ufffd"


@settings(max_examples=40, deadline=None)
@given(query=_ANY_TEXT.filter(str.strip), output=_ANY_TEXT, key=_ANY_TEXT)
def test_any_text_is_stored_as_its_cleaned_form(memory_store: AuditStore, query: str, output: str, key: str) -> None:
    session_id = memory_store.start_session(query, settings={key: output})
    row = memory_store.session(session_id)
    assert row["query"] == clean_text(query)
    assert row["settings"] == {clean_text(key): clean_text(output)}
    invocation = memory_store.record_invocation(session_id, 1, f"tool{key}", {key: output}, output, error=output)
    [stored] = memory_store.invocations(session_id)
    assert stored == invocation
    assert (stored.tool_name, stored.input, stored.error) == (
        clean_text(f"tool{key}"), {clean_text(key): clean_text(output)}, clean_text(output))
    assert memory_store.invocation_output(stored.id) == clean_text(output)
    memory_store.record_step(session_id, 1, "executor", thought=output, model_output=query)
    [step] = memory_store.steps(session_id)
    assert step["model_output"] == clean_text(query)
    memory_store.finish_session(session_id, output_type=None, verdict=None, answer=output, rounds=1,
                                groundedness_score=None, error=query)  # fmt: skip
    finished = memory_store.session(session_id)
    assert (finished["answer"], finished["error"]) == (clean_text(output), clean_text(query))


def test_a_query_from_undecodable_argv_bytes_runs_into_the_audit(store: AuditStore) -> None:
    query = b"\xff\xfe order 123 failed".decode("utf-8", "surrogateescape")
    session_id = store.start_session(query)
    assert store.session(session_id)["query"] == "\ufffd\ufffd order 123 failed"


@pytest.fixture(scope="module")
def memory_store():
    with AuditStore(":memory:") as opened:
        yield opened
