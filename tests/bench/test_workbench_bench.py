"""bench/workbench.py builds the session it measures as the issue asks: N calls of K KB, each claim with its span."""

from __future__ import annotations

from pathlib import Path

from evigate.store import AuditStore
from tests.bench.scripts import load_bench


def test_the_bench_session_has_the_asked_size_and_a_gate_span_past_the_preview_per_claim(tmp_path: Path) -> None:
    bench = load_bench("workbench")
    with AuditStore(tmp_path / "a.duckdb") as store:
        session_id = bench.build_session(store, invocations=3, output_chars=5000)
        rows = store.invocation_records(session_id)
        spans = store.session(session_id)["self_evaluation"]["verifier_evaluation"]["binding_spans"]
    assert len(rows) == 3 and all(5000 <= len(row["output"]) < 5200 for row in rows)
    assert sorted(span["claim_id"] for span in spans) == ["c0", "c1", "c2"]
    for span, row in zip(sorted(spans, key=lambda s: s["invocation_id"]), rows, strict=True):
        assert span["start"] > 2000 and "ERR_TIMEOUT" in row["output"][span["start"]:span["end"]]
