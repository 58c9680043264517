"""self_evaluation slots (V1 "self_evaluation 存储约定"): one atomic statement per write, slot replaced whole,
every other slot kept — also under many concurrent writers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evigate.errors import AuditValueError, EvigateError
from evigate.signatures import SELF_EVALUATION_SLOTS, RuleEvaluation
from evigate.store import AuditStore
from evigate.store.codec import clean_value

RULE, VERIFIER = SELF_EVALUATION_SLOTS[:2]


def test_a_slot_is_replaced_whole_and_the_other_slot_is_kept(store: AuditStore) -> None:
    session_id = store.start_session("q")
    store.merge_self_evaluation(session_id, RULE, {"evidence_score": 65, "factors": [{"name": "a"}]})
    store.merge_self_evaluation(
        session_id, VERIFIER, {"verdict": "LOW_CONFID", "gatekeeper_result": {"status": "fail"}}
    )
    store.merge_self_evaluation(session_id, VERIFIER, {"verdict": "PASS", "composer_output": None})
    assert store.session(session_id)["self_evaluation"] == {
        RULE: {"evidence_score": 65, "factors": [{"name": "a"}]},
        VERIFIER: {"verdict": "PASS", "composer_output": None},  # nested key gone, null kept
    }


def test_a_pydantic_contract_is_stored_as_its_json(store: AuditStore) -> None:
    session_id = store.start_session("q")
    store.merge_self_evaluation(session_id, RULE, RuleEvaluation(evidence_score=80))
    assert store.session(session_id)["self_evaluation"][RULE] == {"evidence_score": 80, "source": "rule", "factors": []}


@pytest.mark.parametrize("slot", ["evidence_score", "", "Rule_Evaluation", "verifier_evaluation.verdict"])
def test_an_unknown_slot_is_a_value_error_of_evigate(store: AuditStore, slot: str) -> None:
    session_id = store.start_session("q")
    with pytest.raises(AuditValueError, match="unknown self_evaluation slot") as raised:
        store.merge_self_evaluation(session_id, slot, {"x": 1})
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, EvigateError)
    assert store.session(session_id)["self_evaluation"] == {}


@pytest.mark.parametrize("value", [["a list"], "text", None, {"score": float("nan")}, {"when": object()}])
def test_a_value_that_is_not_a_json_object_is_refused(store: AuditStore, value: Any) -> None:
    session_id = store.start_session("q")
    store.merge_self_evaluation(session_id, RULE, {"kept": True})
    with pytest.raises(AuditValueError):
        store.merge_self_evaluation(session_id, VERIFIER, value)
    assert store.session(session_id)["self_evaluation"] == {RULE: {"kept": True}}


def test_a_merge_is_one_update_statement_with_no_read_in_python(store: AuditStore, monkeypatch) -> None:
    session_id = store.start_session("q")
    statements: list[str] = []
    backend = store._backend
    for method in ("read", "write"):
        real = getattr(backend, method)

        def logged(statement: str, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            statements.append(statement)
            return _real(statement, *args, **kwargs)

        monkeypatch.setattr(backend, method, logged)
    store.merge_self_evaluation(session_id, VERIFIER, {"verdict": "REJECT"})
    assert len(statements) == 1
    assert statements[0].lstrip().upper().startswith("UPDATE DIAGNOSIS_SESSION")
    assert session_id not in statements[0] and "REJECT" not in statements[0]  # values travel as parameters


def test_concurrent_writers_of_both_slots_lose_nothing(store: AuditStore) -> None:
    threads_count, iterations = 8, 200
    session_id = store.start_session("并发")
    failures: list[BaseException] = []
    committed: dict[tuple[int, str], int] = {}  # (thread, slot) -> the last i whose merge has returned

    def check_no_slot_went_back() -> None:
        # Once thread t's write i to a slot has committed, that slot can never again hold an older write of t:
        # seeing one means some writer put back a stale copy of a slot it did not own (a lost update).
        floor = dict(committed)
        container = store.session(session_id)["self_evaluation"]
        for slot, value in container.items():
            assert value["i"] >= floor.get((value["thread"], slot), -1), f"{slot} went back: {value} < {floor}"

    def writer(thread: int) -> None:
        try:
            for i in range(iterations):
                slot = SELF_EVALUATION_SLOTS[i % len(SELF_EVALUATION_SLOTS)]
                store.merge_self_evaluation(
                    session_id, slot, {"thread": thread, "i": i, "note": f"线程 {thread} '{slot}'"}
                )
                committed[thread, slot] = i
                if i % 5 == 0:
                    check_no_slot_went_back()
                if i % 50 == 0:  # concurrent inserts that reference the same session row
                    store.record_invocation(session_id, 1, "query_logs", {"thread": thread}, f"out {i}")
        except BaseException as exc:
            failures.append(exc)

    workers = [threading.Thread(target=writer, args=(n,)) for n in range(threads_count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()

    assert failures == []
    final = store.session(session_id)["self_evaluation"]
    assert set(final) == set(SELF_EVALUATION_SLOTS)
    for index, slot in enumerate(SELF_EVALUATION_SLOTS):
        # the globally last write to a slot is some thread's last write to it
        last_i = max(i for i in range(iterations) if i % len(SELF_EVALUATION_SLOTS) == index)
        assert final[slot]["i"] == last_i
    check_no_slot_went_back()
    assert len(store.invocations(session_id)) == threads_count * (iterations // 50)


_SPECIAL_TEXT = st.sampled_from(["'; DROP TABLE diagnosis_session; --", '"', "\\", "\\u0000", "订单 123", "😀", ""])
_TEXT = st.one_of(st.text(max_size=12), _SPECIAL_TEXT)


def _slot_values(floats: st.SearchStrategy[float]) -> st.SearchStrategy[dict]:
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), floats, _TEXT
    )
    json_values = st.recursive(
        scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=10
    )
    return st.dictionaries(_TEXT, json_values, max_size=5)


_SLOT_VALUE = _slot_values(st.floats(allow_nan=False, allow_infinity=False))
# jsonb keeps numbers as exact decimals: a float written with an exponent and no fraction (1e16) comes back as the
# integer it equals, and -0.0 as 0.0 — equal values, other JSON text. Scores and latencies are far from both.
_PG_SLOT_VALUE = _slot_values(
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e15, max_value=1e15).filter(
        lambda number: number != 0 or str(number) == "0.0"
    )
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuditStore]:
    path: Path = tmp_path_factory.mktemp("hypothesis") / "audit.duckdb"
    with AuditStore(path) as opened:
        yield opened


@pytest.fixture(scope="module")
def shared_pg_store(pg_server: Any) -> Iterator[AuditStore]:
    with AuditStore(pg_server.fresh_schema_url()) as opened:
        yield opened


def _check_last_write_per_slot(store: AuditStore, writes: list) -> None:
    session_id = store.start_session("hypothesis")
    model: dict[str, dict] = {}
    for slot, value in writes:
        store.merge_self_evaluation(session_id, slot, value)
        model[slot] = clean_value(value)  # what no backend can hold (NUL, lone surrogates) is stored as U+FFFD
    stored = store.session(session_id)["self_evaluation"]
    assert stored == model
    # == treats True == 1 == 1.0; the JSON text tells them apart
    assert json.dumps(stored, sort_keys=True, ensure_ascii=False) == json.dumps(
        model, sort_keys=True, ensure_ascii=False
    )


@settings(max_examples=60, deadline=None)
@given(writes=st.lists(st.tuples(st.sampled_from(SELF_EVALUATION_SLOTS), _SLOT_VALUE), max_size=8))
def test_the_container_equals_the_last_write_per_slot(shared_store: AuditStore, writes: list) -> None:
    _check_last_write_per_slot(shared_store, writes)


@pytest.mark.servers
@settings(max_examples=60, deadline=None)
@given(writes=st.lists(st.tuples(st.sampled_from(SELF_EVALUATION_SLOTS), _PG_SLOT_VALUE), max_size=8))
def test_the_container_equals_the_last_write_per_slot_on_postgresql(shared_pg_store: AuditStore, writes: list) -> None:
    _check_last_write_per_slot(shared_pg_store, writes)
