"""parse_executor_output: valid / missing / malformed exactly as §13.1.1, tolerant, never raising."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.rules import parse_executor_output

OBJECT = '{"answer_version": "executor_evidence_v2", "claims": []}'


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (OBJECT, "valid"),
        ("\ufeff" + OBJECT, "valid"),
        ("\u200b " + OBJECT + " \u200b", "valid"),
        (f"```json\n{OBJECT}\n```", "valid"),
        (f"```\n{OBJECT}\n```", "valid"),
        (f"好的，以下是输出：\n{OBJECT}\n以上。", "valid"),
        ('{"answer_version": "executor_evidence_v2", "claims": [],}', "valid"),
        ('{"claims": [ {"a": 1,}, ],\n // a comment\n "x": 2 /* block */}', "valid"),
        ('{"claims": [], "note": "a // not a comment, a trailing , ]"}', "valid"),
        ('{"claims": [], "text": "raw\nnewline inside a string"}', "valid"),
        (OBJECT.encode("utf-8"), "valid"),
        (b"\xef\xbb\xbf" + OBJECT.encode("utf-8"), "valid"),
        ({"answer_version": "executor_evidence_v2", "claims": []}, "valid"),
        (None, "missing"),
        ("", "missing"),
        ("   \n\t ", "missing"),
        ("\ufeff", "missing"),
        ("根据日志，根因是网关超时阈值过低。", "missing"),
        ("I could not find anything [see logs].", "missing"),
        ("[1, 2, 3]", "malformed"),
        ('[{"claims": []}]', "malformed"),
        ("42", "malformed"),
        ('"just a string"', "malformed"),
        ("null", "malformed"),
        ('{"answer_version": "executor_evidence_v2", "claims": [', "malformed"),
        ('```json\n{"claims": [{"claim_id": "c1"\n```', "malformed"),
        ("{not json at all}", "malformed"),
        ([{"claims": []}], "malformed"),
        (3.14, "malformed"),
        (object(), "malformed"),
    ],
)
def test_parse_status(raw: object, status: str) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status == status, parsed.detail
    assert (parsed.data is not None) == (status == "valid")
    assert parsed.parse_status.status == status
    assert parsed.detail


def test_the_contract_object_is_preferred_over_other_objects_in_prose() -> None:
    raw = 'Tool said {"ok": true}. Answer: {"answer_version": "executor_evidence_v2", "claims": []} {"x": 1}'
    parsed = parse_executor_output(raw)
    assert parsed.status == "valid"
    assert parsed.data == {"answer_version": "executor_evidence_v2", "claims": []}


def test_repairs_are_named_in_the_detail() -> None:
    assert "repaired" in parse_executor_output('{"claims": [1,],}').detail
    assert "code fence" in parse_executor_output(f"```json\n{OBJECT}\n```").detail
    assert "not closed" in parse_executor_output('{"claims": [').detail


def test_deep_nesting_is_malformed_not_a_crash() -> None:
    assert parse_executor_output("[" * 100_000 + "]" * 100_000).status == "malformed"
    assert parse_executor_output('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}").status == "malformed"


def test_many_braces_in_prose_are_bounded() -> None:
    raw = "{x} " * 50_000 + OBJECT
    parsed = parse_executor_output(raw)
    assert parsed.status in ("valid", "malformed")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_any_json_value_parses_to_its_kind(value: object) -> None:
    parsed = parse_executor_output(json.dumps(value))
    if isinstance(value, dict):
        assert parsed.status == "valid" and parsed.data == value
    else:
        assert parsed.status in ("malformed", "missing")
        assert parsed.data is None


@given(st.one_of(st.text(), st.binary(), JSON_VALUES))
@settings(max_examples=400, deadline=None)
def test_never_raises_on_anything(raw: object) -> None:
    parsed = parse_executor_output(raw)
    assert parsed.status in ("valid", "missing", "malformed")
    assert (parsed.data is not None) == (parsed.status == "valid")


@given(st.text(), JSON_VALUES.filter(lambda value: isinstance(value, dict)), st.text())
@settings(max_examples=200, deadline=None)
def test_an_object_wrapped_in_prose_and_fences_is_found(before: str, obj: dict, after: str) -> None:
    raw = f"{before.replace('{', '').replace('`', '')}\n```json\n{json.dumps(obj)}\n```\n{after}"
    parsed = parse_executor_output(raw)
    assert parsed.status == "valid"
