"""One truncation format and one check (issue 13 item 8): the store's preview marker, the Toolbox's cap, the gate.

A preview the store cut ends with "…[truncated N chars]"; the Toolbox caps outputs in the same format; the
Gatekeeper reads both through ``split_preview`` and, where the whole output was recorded, compares excerpts with
the whole output. A "…" that a tool itself wrote is text, not truncation: the changed-value check still runs.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from evigate.rules import Gatekeeper
from evigate.signatures import ToolInvocation
from evigate.signatures.preview import TRUNCATION_MARKER, split_preview, truncate
from evigate.store import AuditStore, make_preview
from evigate.tools.toolbox import cap_output

LINE = "2024-05-01 10:05:16.480 WARN [pay-gateway] upstream bank-channel slow, elapsed 5210ms, thread pool "
WHOLE = LINE + "active 200/200, queue 80, rejected 12 requests in the last minute"


CLAIM = "pay-gateway 上游 bank-channel 响应慢"


def _outcome(preview: str, excerpt: str, claim: str = CLAIM, output: str | None = None):
    invocation = ToolInvocation(id=7, session_id="s", tool_name="query_logs", output_preview=preview, output=output)
    data = {
        "answer_version": "executor_evidence_v2",
        "claims": [{
            "claim_id": "c1", "claim_type": "symptom", "claim_text": claim, "support_level": "direct",
            "evidence_bindings": [{"source_type": "tool_trace", "source_id": None, "tool_name": "query_logs",
                                   "source_invocation_ids": [7], "evidence_excerpt": excerpt}],
        }],
    }
    return Gatekeeper.default().validate(data, [invocation], "s")


def _excerpt_errors(outcome) -> list[str]:
    return [e.message for e in outcome.result.errors if e.rule_id == "evidence.excerpt_similarity"]


def test_the_toolbox_caps_in_the_stores_format() -> None:
    text = "x" * 50
    assert cap_output(text, 20) == make_preview(text, 20) == truncate(text, 20)
    assert split_preview(cap_output(text, 20)) == (text[:20], 30)


@given(st.text(max_size=80), st.integers(min_value=0, max_value=90))
def test_split_preview_undoes_truncate(text: str, keep: int) -> None:
    kept, dropped = split_preview(truncate(text, keep))
    assert kept + text[len(kept):] == text
    assert (kept, dropped) == ((text[:keep], len(text) - keep) if len(text) > keep else (text, 0))


def test_an_excerpt_running_past_the_stores_cut_is_not_held_against_it() -> None:
    preview = make_preview(WHOLE, len(LINE) + 10)
    assert preview.endswith(TRUNCATION_MARKER.format(count=len(WHOLE) - len(LINE) - 10))
    outcome = _outcome(preview, "upstream bank-channel slow, elapsed 5210ms, thread pool active 200/200, queue 80")
    assert _excerpt_errors(outcome) == []


def test_a_trailing_ellipsis_written_by_a_tool_is_not_truncation() -> None:
    # The tool printed "…" itself: the output is whole, so a value the excerpt adds after it was invented.
    preview = LINE + "active 150/200…"
    outcome = _outcome(preview, "upstream bank-channel slow, elapsed 5210ms, thread pool active 190/200")
    assert "evidence.excerpt_similarity" in outcome.result.failed_rules, outcome.result.errors


def test_where_the_whole_output_is_known_excerpts_are_compared_with_it() -> None:
    preview = make_preview(WHOLE, len(LINE) + 10)
    faithful = "thread pool active 200/200, queue 80, rejected 12 requests in the last minute"
    assert _excerpt_errors(_outcome(preview, faithful, output=WHOLE)) == []
    altered = "thread pool active 200/200, queue 80, rejected 19 requests in the last minute"
    outcome = _outcome(preview, altered, output=WHOLE)
    assert any("'19'" in message for message in _excerpt_errors(outcome)), outcome.result.errors


def test_the_marker_itself_is_no_evidence() -> None:
    preview = make_preview(WHOLE, len(LINE))
    count = len(WHOLE) - len(LINE)
    outcome = _outcome(preview, LINE.strip(), claim=f"pay-gateway 上游 bank-channel 响应慢，{count} chars")
    assert "c1" in outcome.failed_claims


def test_the_store_hands_the_gate_the_whole_output_of_a_cut_preview() -> None:
    with AuditStore(":memory:") as store:
        session_id = store.start_session("q")
        recorded = store.record_invocation(session_id, 1, "query_logs", {}, WHOLE, preview_chars=40)
        short = store.record_invocation(session_id, 1, "query_logs", {}, "ok", preview_chars=40)
        assert recorded.output == WHOLE and short.output is None
        loaded = {inv.id: inv for inv in store.invocations(session_id)}
        assert loaded[recorded.id].output == WHOLE and loaded[short.id].output is None
        assert "output" not in loaded[recorded.id].model_dump()  # never shown to a model or printed as the row
